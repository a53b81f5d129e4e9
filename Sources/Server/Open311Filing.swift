import Foundation
import Geometry
import Hummingbird
import Interchange
import ReportModel
import ReportService

/// `POST /open311/v2/requests`: a form (`application/x-www-form-urlencoded`, as GeoReport
/// v2 has it) read into the same draft `POST /v1/reports` makes, so that the same rules
/// check it; each rule broken is named in GeoReport's words.
enum Open311Filing {
    /// GeoReport's fields, and the attributes of a service definition, by our names.
    static let fields: [(ours: String, theirs: String)] = [
        ("object_type", "service_code"), ("latitude", "lat"), ("longitude", "long"), ("address", "address_string"), ("comment", "description"),
        ("city", "attribute[city]"), ("phones", "attribute[phones]"), ("balance_holder", "attribute[balance_holder]"),
        ("district", "attribute[district]"), ("violator", "attribute[violator]"),
    ]
    /// The fields of ``fields`` a filing may leave out.
    static let optional: Set = ["description", "attribute[violator]"]
    /// What a client may send besides: the key, and the standard's fields about the
    /// requester and the place, which PosterWatch does not keep (it keeps no personal data
    /// of a contact centre's callers, and places are points).
    static let ignored = [
        "api_key", "jurisdiction_id", "address_id", "email", "device_id", "account_id", "first_name", "last_name", "phone", "media_url",
    ]

    /// The form's members as the OpenAPI document states them: these and no others.
    static let members = (fields.map(\.theirs) + ignored).map { name in
        BodyMember(name, ["type": "string", "pattern": "^[^\\u0000]*$"], required: name == "api_key" || (fields.contains { $0.theirs == name } && !optional.contains(name)))
    }

    /// What a filing answers: the report's id and its duplicate hints.
    struct Filed: Codable {
        var serviceRequestID: String
        var serviceNotice: String?

        init(_ filing: Filing) {
            serviceRequestID = String(filing.report.id)
            serviceNotice = Open311Filing.notice(filing.possibleDuplicates)
        }

        var answer: JSONValue {
            [.object([("service_request_id", .string(serviceRequestID)), ("service_notice", serviceNotice.map(JSONValue.string) ?? .null), ("account_id", .null)])]
        }
    }

    struct Form {
        var values: [String: String]

        /// What an idempotency key compares: the fields but the key, in name order, marked
        /// as Open311's (the same key on `POST /v1/reports` is another body).
        func canonical() throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return try encoder.encode(["open311": values.filter { $0.key != "api_key" }])
        }
        /// The draft's members, in the interchange vocabulary, and every rule the form broke.
        func members() -> (members: [String: JSONValue], problems: [ValidationError]) {
            var members: [String: JSONValue] = [:], problems: [ValidationError] = []
            for (ours, theirs) in Open311Filing.fields {
                guard let value = values[theirs] else { continue }
                switch ours {
                case "latitude", "longitude":
                    if let number = Double(value), number.isFinite { members[ours] = .number(number) } else { problems.append(ValidationError(field: theirs, "must be a number")) }
                case "phones": members[ours] = .array(value.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) })
                default: members[ours] = .string(value)
                }
            }
            return (members, problems)
        }
    }

    /// The form's fields, every one named once and known; a 400 naming each that is not.
    static func form(_ body: ByteBuffer) throws(ValidationErrors) -> Form {
        var values: [String: String] = [:], problems: [ValidationError] = []
        let known = Set(fields.map(\.theirs) + ignored)
        for (name, value) in QueryParameters.pairs(String(buffer: body)) {
            guard known.contains(name) else {
                problems.append(ValidationError(field: String(name.prefix(40)), "unknown field; GeoReport v2 fields and the service's attributes are \(fields.map(\.theirs).joined(separator: ", "))"))
                continue
            }
            guard values[name] == nil else {
                problems.append(ValidationError(field: name, "is given more than once"))
                continue
            }
            guard let value, !value.utf8.contains(0) else {
                problems.append(ValidationError(field: name, "must be percent-encoded UTF-8 text without NUL (%00)"))
                continue
            }
            values[name] = value
        }
        guard problems.isEmpty else { throw ValidationErrors(problems) }
        return Form(values: values)
    }

    /// Our field names in an error, put in GeoReport's words.
    static func theirs(_ errors: ValidationErrors) -> ValidationErrors {
        let names = Dictionary(uniqueKeysWithValues: fields.map { ($0.ours, $0.theirs) })
        return ValidationErrors(errors.issues.map { ValidationError(field: names[$0.field] ?? $0.field, $0.message) })
    }

    /// What a filing's possible duplicates tell the client (`service_notice`).
    static func notice(_ hints: [DuplicateHint]) -> String? {
        guard !hints.isEmpty else { return nil }
        return "Possible duplicates: " + hints.map { hint in
            "#\(hint.id) (\(hint.distanceM) m" + (hint.sharedPhones.isEmpty ? "" : "; shares " + hint.sharedPhones.joined(separator: ", ")) + ")"
        }.joined(separator: ", ")
    }
}
