import Interchange
import ReportModel
import ReportService

/// The answers of Open311 GeoReport v2 (http://wiki.open311.org/GeoReport_v2), built once
/// as ordered JSON values: the JSON answer is the value, the XML one the same value
/// written by ``Open311XML``. Each object type is a service; its definition's attributes
/// are what a filing needs beyond GeoReport's own fields.
enum Open311Documents {
    /// When this server's GeoReport v2 interface last changed (discovery's `changeset`).
    static let changeset = "2026-11-27T00:00:00Z"

    static func discovery(base: String, contact: String?) -> JSONValue {
        .object([
            ("changeset", .string(changeset)),
            ("contact", contact.map(JSONValue.string) ?? .null),
            ("key_service", "API keys are issued by the city's PosterWatch administrators (posterwatch apikey create)."),
            ("endpoints", [
                .object([
                    ("specification", "http://wiki.open311.org/GeoReport_v2"), ("url", .string(base + "/open311/v2")),
                    ("changeset", .string(changeset)), ("type", "production"), ("formats", ["text/xml", "application/json"]),
                ])
            ]),
        ])
    }

    static func services(_ reference: ReferenceData) -> JSONValue {
        .array(reference.objectTypes.map { service($0) })
    }

    static func service(_ type: ReferenceData.Entry) -> JSONValue {
        .object([
            ("service_code", .string(type.code)),
            ("service_name", .string(type.nameUk)),
            ("description", .string("Незаконна реклама: \(type.nameUk). Illegal advertising: \(type.nameEn).")),
            ("metadata", true),
            ("type", "realtime"),
            ("keywords", .string([type.nameEn, "poster", "phone number", "оголошення"].joined(separator: ","))),
            ("group", "illegal_advertising"),
        ])
    }

    /// The attributes a filing of `type` takes beyond GeoReport's own fields.
    static func definition(_ type: ReferenceData.Entry, _ reference: ReferenceData) -> JSONValue {
        func attribute(_ code: String, _ datatype: String, required: Bool, order: Int, description: String, values: [(String, String)] = []) -> JSONValue {
            var members: [(String, JSONValue)] = [
                ("variable", true), ("code", .string(code)), ("datatype", .string(datatype)), ("required", .bool(required)),
                ("datatype_description", .null), ("order", .int(order)), ("description", .string(description)),
            ]
            if !values.isEmpty { members.append(("values", .array(values.map { .object([("key", .string($0.0)), ("name", .string($0.1))]) }))) }
            return .object(members)
        }
        return .object([
            ("service_code", .string(type.code)),
            ("attributes", [
                attribute("city", "string", required: true, order: 1, description: "The city or town the poster is in."),
                attribute("phones", "string", required: true, order: 2, description: "The phone numbers on the poster, 1 to 5, separated by commas (0671234567, +380671234567)."),
                attribute(
                    "balance_holder", "singlevaluelist", required: true, order: 3, description: "Who keeps the object the poster is on.",
                    values: reference.holders(for: type.code).map { ($0.code, $0.nameUk) }),
                attribute("district", "singlevaluelist", required: true, order: 4, description: "The city district.", values: reference.districts.map { ($0.code, $0.nameUk) }),
                attribute("violator", "string", required: false, order: 5, description: "The advertiser's name, when the poster gives one."),
            ]),
        ])
    }

    /// A report as a service request: `open` or `closed` by its status, the object type as
    /// the service, the balance holder as the agency; no filer, ever.
    static func request(_ report: Report, _ reference: ReferenceData, mediaURL: String?) -> JSONValue {
        let type = reference.objectTypes.first { $0.code == report.objectType }
        let holder = reference.balanceHolders.first { $0.code == report.balanceHolder }
        let status = reference.statuses.first { $0.code == report.status }
        return .object([
            ("service_request_id", .string(String(report.id))),
            ("status", reference.isOpen(report.status) ? "open" : "closed"),
            ("status_notes", status.map { .string("\($0.nameUk) (\($0.code))") } ?? .null),
            ("service_name", type.map { .string($0.nameUk) } ?? .null),
            ("service_code", .string(report.objectType)),
            ("description", report.comment.map(JSONValue.string) ?? .null),
            ("agency_responsible", holder.map { .string($0.nameUk) } ?? .null),
            ("service_notice", .null),
            ("requested_datetime", .string(RFC3339.string(from: report.createdAt))),
            ("updated_datetime", .string(RFC3339.string(from: report.updatedAt))),
            ("expected_datetime", .null),
            ("address", .string(report.address + ", " + report.city)),
            ("address_id", .null),
            ("zipcode", .null),
            ("lat", .number(report.coordinate.latitude)),
            ("long", .number(report.coordinate.longitude)),
            ("media_url", mediaURL.map(JSONValue.string) ?? .null),
            ("extended_attributes", .object([("status", .string(state(report.status, reference))), ("external_status_code", .string(report.status))])),
        ])
    }

    /// A report's status change as mySociety's service request update: the finer state in
    /// `status`, our own code in `external_status_code`, the status's name as the text (a
    /// supervisor's note is staff's, never here).
    static func update(_ update: StatusUpdate, _ reference: ReferenceData) -> JSONValue {
        .object([
            ("update_id", .string(String(update.seq))),
            ("service_request_id", .string(String(update.reportID))),
            ("status", .string(state(update.toStatus, reference))),
            ("updated_datetime", .string(RFC3339.string(from: update.at))),
            ("description", .string(reference.statuses.first { $0.code == update.toStatus }.map { "\($0.nameUk) (\($0.nameEn))" } ?? update.toStatus)),
            ("media_url", .null),
            ("external_status_code", .string(update.toStatus)),
        ])
    }

    /// Our statuses as the states of FixMyStreet's Open311 extension ("Open311 FMS –
    /// Additional states"); a status a city adds is `open` or `closed`.
    static let mySocietyStates = [
        "new": "open", "verifying": "investigating", "confirmed": "action_scheduled", "phone_blocked": "closed", "removed": "fixed",
        "rejected": "no_further_action", "duplicate": "duplicate", "cancelled": "closed",
    ]

    static func state(_ status: String, _ reference: ReferenceData) -> String {
        mySocietyStates[status] ?? (reference.isOpen(status) ? "open" : "closed")
    }

    /// The standard's errors: `[{code, description}]`.
    static func errors(status: Int, descriptions: [String]) -> JSONValue {
        .array(descriptions.map { .object([("code", .int(status)), ("description", .string($0))]) })
    }
}

/// GeoReport v2's XML: an object's members as elements in order; an array as its
/// container's elements, each item named for the container (`services` → `service`); an
/// empty element for null; text escaped.
enum Open311XML {
    /// The item name of each array the answers hold.
    static let items = [
        "services": "service", "attributes": "attribute", "values": "value", "endpoints": "endpoint", "formats": "format", "errors": "error",
        "service_requests": "request", "service_request_updates": "request_update",
    ]

    static func document(_ value: JSONValue, root: String) -> String {
        var text = #"<?xml version="1.0" encoding="utf-8"?>"#
        element(root, value, into: &text)
        return text
    }

    private static func element(_ name: String, _ value: JSONValue, into text: inout String) {
        text += "<\(name)>"
        switch value {
        case .null: break
        case .string(let s): escape(s, into: &text)
        case .int(let n): text += String(n)
        case .number(let n): text += String(n)
        case .bool(let b): text += b ? "true" : "false"
        case .array(let items): for item in items { element(Self.items[name] ?? "item", item, into: &text) }
        case .object(let members): for (key, member) in members { element(key, member, into: &text) }
        }
        text += "</\(name)>"
    }

    /// Text as XML 1.0 takes it: the five markup characters as entities, a carriage return
    /// as a reference (a parser would make it a line feed), and the characters XML cannot
    /// hold at all (control characters but tab and line feed, U+FFFE, U+FFFF: an error's
    /// echo of a query value, say) as U+FFFD, so that every answer parses.
    static func escape(_ s: String, into text: inout String) {
        for c in s.unicodeScalars {
            switch c {
            case "&": text += "&amp;"
            case "<": text += "&lt;"
            case ">": text += "&gt;"
            case "\"": text += "&quot;"
            case "'": text += "&apos;"
            case "\r": text += "&#13;"
            case "\t", "\n": text.unicodeScalars.append(c)
            case _ where c.value < 0x20 || c.value == 0xFFFE || c.value == 0xFFFF: text.unicodeScalars.append("\u{FFFD}")
            default: text.unicodeScalars.append(c)
            }
        }
    }
}
