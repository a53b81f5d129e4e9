/// A JSON value: built in code (the OpenAPI document, log lines), members in the order
/// given; or read from a request body (``members(parsing:)``), its types kept apart (`1` is
/// no boolean, `"1"` no number; a number read is a `number`).
public enum JSONValue: Sendable, Equatable, Encodable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    case string(String), int(Int), number(Double), bool(Bool), null, array([JSONValue]), object([(String, JSONValue)])

    /// Values as written: `-0` is not `0` and `.int(1)` not `.number(1)`, so that a test
    /// tells a value read back from what it was written from.
    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.number(let x), .number(let y)): x == y && x.sign == y.sign
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public func encode(to encoder: any Encoder) throws {
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

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }

    /// Compact JSON, members in the order given.
    public var text: String {
        switch self {
        case .string(let s): return GeoJSON.string(s)
        case .int(let n): return String(n)
        case .number(let x): return x.isFinite ? "\(x)" : "null"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { GeoJSON.string($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }
}
