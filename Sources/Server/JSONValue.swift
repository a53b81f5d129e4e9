import Interchange

/// A JSON value, for documents built in code.
enum JSONValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    case string(String), int(Int), number(Double), bool(Bool), null, array([JSONValue]), object([(String, JSONValue)])

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
