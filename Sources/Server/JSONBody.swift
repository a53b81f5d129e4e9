import Foundation
import Geometry
import HTTPTypes
import Hummingbird

/// A request body that must be a JSON object of known members, read within 64 KiB and
/// checked member by member, so that a 422 names every bad field at once.
///
/// Not JSON, or not an object: 400. Over 64 KiB: 413. Sent as another media type: 415.
/// A member the endpoint does not take, a required one missing, or one of the wrong type:
/// each an issue, all answered together by ``finish()``.
struct JSONBody {
    static let maxBytes = 65_536

    private let members: [String: Value]
    private(set) var issues: [ValidationError] = []

    /// A JSON value as read, types kept apart (`1` is no boolean, `"1"` no number).
    enum Value: Decodable {
        case null, bool(Bool), number(Double), string(String), array([Value]), object([String: Value])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let b = try? container.decode(Bool.self) { self = .bool(b) }
            else if let n = try? container.decode(Double.self) { self = .number(n) }
            else if let s = try? container.decode(String.self) { self = .string(s) }
            else if let a = try? container.decode([Value].self) { self = .array(a) }
            else { self = .object(try container.decode([String: Value].self)) }
        }
    }

    static func read(_ request: Request, allowed: [String]) async throws -> JSONBody {
        if let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(),
           type != "application/json", !type.hasSuffix("+json")
        {
            throw APIError(.unsupportedMediaType, code: "unsupported_media_type", message: "send the body as application/json, not \(type.prefix(60))")
        }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: maxBytes)
        } catch {
            throw APIError(.contentTooLarge, code: "too_large", message: "the body is larger than \(maxBytes / 1024) KiB")
        }
        guard let object = try? JSONDecoder().decode([String: Value].self, from: Data(buffer.readableBytesView)) else {
            throw APIError(.badRequest, code: "invalid_json", message: "the body must be a JSON object")
        }
        return JSONBody(members: object, allowed: allowed)
    }

    init(members: [String: Value], allowed: [String]) {
        self.members = members
        for name in members.keys.sorted() where !allowed.contains(name) {
            issues.append(ValidationError(field: String(name.prefix(40)), "is not a field of this body; it takes \(allowed.joined(separator: ", "))"))
        }
    }

    /// A text member; an issue when required and missing, or not text.
    mutating func string(_ name: String, required: Bool = true) -> String? {
        switch members[name] {
        case .string(let text): return text
        case nil, .null?:
            if required { issues.append(ValidationError(field: name, "is required")) }
        default: issues.append(ValidationError(field: name, "must be a string"))
        }
        return nil
    }

    /// A boolean member (optional); an issue when it is something else.
    mutating func bool(_ name: String) -> Bool? {
        switch members[name] {
        case .bool(let value): return value
        case nil: return nil
        default:
            issues.append(ValidationError(field: name, "must be true or false"))
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
