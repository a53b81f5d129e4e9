import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Interchange

/// A request body that must be a JSON object of known members, read within 64 KiB and
/// checked member by member, so that a 422 names every bad field at once.
///
/// Not JSON, or not an object: 400. Over 64 KiB: 413. Sent as another media type: 415.
/// A member the endpoint does not take, a required one missing, or one of the wrong type:
/// each an issue, all answered together by ``finish()``.
struct JSONBody {
    static let maxBytes = 65_536

    private let members: [String: JSONValue]
    private(set) var issues: [ValidationError] = []

    /// The members as canonical JSON (keys sorted, no spaces): two bodies that say the
    /// same thing in another order or spacing give the same bytes.
    static func canonical(_ members: [String: JSONValue]) throws -> [UInt8] {
        try Responses.jsonBytes(members)
    }

    static func read(_ request: Request, allowed: [String]) async throws -> JSONBody {
        try JSONBody(bytes: try await collect(request), allowed: allowed)
    }

    /// The body's bytes, once its media type and size are checked.
    static func collect(_ request: Request) async throws -> ByteBuffer {
        if let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(),
           type != "application/json", !type.hasSuffix("+json")
        {
            throw APIError(.unsupportedMediaType, code: "unsupported_media_type", message: "send the body as application/json, not \(type.prefix(60))")
        }
        var request = request
        do {
            return try await request.collectBody(upTo: maxBytes)
        } catch {
            throw APIError(.contentTooLarge, code: "too_large", message: "the body is larger than \(maxBytes / 1024) KiB")
        }
    }

    /// A body of bytes already collected: a JSON object, or a 400.
    init(bytes: ByteBuffer, allowed: [String]) throws {
        self.init(members: try Self.members(bytes), allowed: allowed)
    }

    /// The members of a JSON object, or a 400 saying where the body stops being one.
    static func members(_ bytes: ByteBuffer) throws -> [String: JSONValue] {
        do {
            return try bytes.withUnsafeReadableBytes { bytes throws(JSONSyntaxError) in try JSONValue.members(parsing: bytes) }
        } catch {
            throw APIError(.badRequest, code: "invalid_json", message: "the body must be a JSON object: \(error.message) (at byte \(error.offset))")
        }
    }

    /// Members of an object; those not `allowed` are issues. Nested objects name their
    /// members after `prefix` (`geometry.type`).
    init(members: [String: JSONValue], allowed: [String], prefix: String = "") {
        self.members = members
        self.prefix = prefix
        for name in members.keys.sorted() where !allowed.contains(name) {
            issues.append(ValidationError(field: prefix + String(name.prefix(40)), "is not a field of this body; it takes \(allowed.joined(separator: ", "))"))
        }
    }

    private var prefix = ""

    /// Whether the member is present (null counts: a merge patch removes with it).
    func has(_ name: String) -> Bool { members[name] != nil }

    /// Whether the member is present and null.
    func isNull(_ name: String) -> Bool {
        if case .null? = members[name] { return true }
        return false
    }

    /// A member refused whatever its value (one the server assigns, say), when present.
    mutating func refuse(_ name: String, _ rule: String) {
        if members[name] != nil { issues.append(ValidationError(field: prefix + name, rule)) }
    }

    /// A number member; an issue when required and missing, or not a number.
    mutating func number(_ name: String, required: Bool = true) -> Double? {
        switch members[name] {
        case .number(let value): return value
        case .int(let value): return Double(value)
        case nil, .null?:
            if required { issues.append(ValidationError(field: prefix + name, "is required")) }
        default: issues.append(ValidationError(field: prefix + name, "must be a number"))
        }
        return nil
    }

    /// The largest integer a member may be: JSON numbers are read as doubles, which hold
    /// every integer up to 2^53 − 1 exactly.
    static let maxInteger = 9_007_199_254_740_991

    /// An integer member (optional); an issue when it is something else.
    mutating func integer(_ name: String) -> Int64? {
        guard let value = number(name, required: false) else { return nil }
        guard value.rounded() == value, abs(value) <= Double(Self.maxInteger) else {
            issues.append(ValidationError(field: prefix + name, "must be an integer"))
            return nil
        }
        return Int64(value)
    }

    /// An array of texts; an issue when required and missing, not an array, or for each
    /// item that is not text (`phones[2]`).
    mutating func strings(_ name: String, required: Bool = true) -> [String]? {
        switch members[name] {
        case .array(let items):
            var texts: [String] = []
            for (i, item) in items.enumerated() {
                if case .string(let text) = item { texts.append(text) } else { issues.append(ValidationError(field: "\(prefix)\(name)[\(i)]", "must be a string")) }
            }
            return texts.count == items.count ? texts : nil
        case nil, .null?:
            if required { issues.append(ValidationError(field: prefix + name, "is required")) }
        default: issues.append(ValidationError(field: prefix + name, "must be an array of strings"))
        }
        return nil
    }

    /// A required id: a whole number from 1; an issue when missing or anything else.
    mutating func id(_ name: String) -> Int64? {
        guard has(name) else {
            issues.append(ValidationError(field: prefix + name, "is required"))
            return nil
        }
        let known = issues.count
        guard let value = integer(name), value >= 1 else {
            if issues.count == known { issues.append(ValidationError(field: prefix + name, "must be an id (an integer from 1)")) }
            return nil
        }
        return value
    }

    /// An array of whole numbers from 1 (ids); an issue when missing, not an array, or for
    /// each item that is not one (`report_ids[2]`).
    mutating func ids(_ name: String) -> [Int64]? {
        guard case .array(let items) = members[name] else {
            issues.append(ValidationError(field: prefix + name, members[name] == nil ? "is required" : "must be an array of ids (integers from 1)"))
            return nil
        }
        var ids: [Int64] = [], bad = 0
        for (i, item) in items.enumerated() {
            let value: Double? = switch item {
            case .int(let n): Double(n)
            case .number(let x): x
            default: nil
            }
            guard let value, value.rounded() == value, value >= 1, value <= Double(Self.maxInteger) else {
                // The first few named, so that a body of thousands of bad items gets a short answer.
                bad += 1
                if bad <= Self.maxItemIssues { issues.append(ValidationError(field: "\(prefix)\(name)[\(i)]", "must be an id (an integer from 1)")) }
                continue
            }
            ids.append(Int64(value))
        }
        if bad > Self.maxItemIssues { issues.append(ValidationError(field: prefix + name, "\(bad - Self.maxItemIssues) more items are not ids")) }
        return ids.count == items.count ? ids : nil
    }

    /// How many bad items of one array are named each.
    static let maxItemIssues = 20

    /// An array of numbers; an issue when missing or anything else.
    mutating func numbers(_ name: String) -> [Double]? {
        if case .array(let items) = members[name] {
            let values = items.compactMap { item -> Double? in
                switch item {
                case .number(let x): x
                case .int(let n): Double(n)
                default: nil
                }
            }
            if values.count == items.count { return values }
        }
        issues.append(ValidationError(field: prefix + name, members[name] == nil ? "is required" : "must be an array of numbers"))
        return nil
    }

    /// An object member as a body of its own, whose issues come back with ``adopt(_:)``.
    mutating func object(_ name: String, allowed: [String], prefix nested: String? = nil) -> JSONBody? {
        switch members[name] {
        case .object(let inner):
            return JSONBody(members: Dictionary(inner, uniquingKeysWith: { _, last in last }), allowed: allowed, prefix: nested ?? "\(prefix)\(name).")
        case nil, .null?: issues.append(ValidationError(field: prefix + name, "is required"))
        default: issues.append(ValidationError(field: prefix + name, "must be an object"))
        }
        return nil
    }

    /// Takes the issues of a nested body.
    mutating func adopt(_ nested: JSONBody?) {
        if let nested { issues += nested.issues }
    }

    /// Adds one issue.
    mutating func add(_ issue: ValidationError) { issues.append(issue) }

    /// A text member; an issue when required and missing, or not text.
    mutating func string(_ name: String, required: Bool = true) -> String? {
        switch members[name] {
        case .string(let text): return text
        case nil, .null?:
            if required { issues.append(ValidationError(field: prefix + name, "is required")) }
        default: issues.append(ValidationError(field: prefix + name, "must be a string"))
        }
        return nil
    }

    /// A boolean member (optional); an issue when it is something else.
    mutating func bool(_ name: String) -> Bool? {
        switch members[name] {
        case .bool(let value): return value
        case nil: return nil
        default:
            issues.append(ValidationError(field: prefix + name, "must be true or false"))
            return nil
        }
    }

    /// Runs a check of the values read (a draft's rules), adding its issues about fields
    /// not already at fault, so that one answer names every field.
    mutating func check(_ validate: () throws(ValidationErrors) -> Void) {
        do { try validate() } catch {
            let flagged = Set(issues.map(\.field))
            issues += error.issues.filter { !flagged.contains($0.field) }
        }
    }

    /// Throws every issue found (a 422).
    func finish() throws(ValidationErrors) {
        if !issues.isEmpty { throw ValidationErrors(issues) }
    }
}
