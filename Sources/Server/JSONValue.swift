import Interchange

/// A JSON value: built in code (the OpenAPI document, log lines), members in the order
/// given; or read from a request body, its types kept apart (`1` is no boolean, `"1"` no
/// number; a number read is a `number`).
enum JSONValue: Sendable, Codable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    case string(String), int(Int), number(Double), bool(Bool), null, array([JSONValue]), object([(String, JSONValue)])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let b = try? container.decode(Bool.self) { self = .bool(b) }
        else if let n = try? container.decode(Double.self) { self = .number(n) }
        else if let s = try? container.decode(String.self) { self = .string(s) }
        else if let a = try? container.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try container.decode([String: JSONValue].self).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }) }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let members):
            var container = encoder.container(keyedBy: Name.self)
            for (name, value) in members { try container.encode(value, forKey: Name(name)) }
        default:
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let b): try container.encode(b)
            case .int(let n): try container.encode(n)
            case .number(let n): try container.encode(n)
            case .string(let s): try container.encode(s)
            case .array(let a): try container.encode(a)
            case .object: break
            }
        }
    }

    /// A member's name as a coding key.
    private struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }

    /// Compact JSON, members in the order given.
    var text: String {
        switch self {
        case .string(let s): return Interchange.GeoJSON.string(s)
        case .int(let n): return String(n)
        case .number(let x): return x.isFinite ? "\(x)" : "null"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { Interchange.GeoJSON.string($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }
}
