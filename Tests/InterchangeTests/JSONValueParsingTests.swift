import Foundation
import Generator
import Interchange
import Testing

/// Request bodies read into `JSONValue`s: against the trees they were written from, and
/// against Foundation's `JSONDecoder`, which read them before.
@Suite struct JSONValueParsingTests {
    /// Foundation's reading of a value, as the server's was: each type tried in turn.
    enum Foundation_: Decodable {
        case string(String), number(Double), bool(Bool), null, array([Foundation_]), object([String: Foundation_])

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() { self = .null }
            else if let b = try? c.decode(Bool.self) { self = .bool(b) }
            else if let n = try? c.decode(Double.self) { self = .number(n) }
            else if let s = try? c.decode(String.self) { self = .string(s) }
            else if let a = try? c.decode([Foundation_].self) { self = .array(a) }
            else { self = .object(try c.decode([String: Foundation_].self)) }
        }

        var value: JSONValue {
            switch self {
            case .string(let s): .string(s)
            case .number(let n): .number(n)
            case .bool(let b): .bool(b)
            case .null: .null
            case .array(let items): .array(items.map(\.value))
            case .object(let members): .object(members.map { ($0.key, $0.value.value) }.sorted { $0.0 < $1.0 })
            }
        }
    }

    static func foundation(_ text: [UInt8]) -> [String: JSONValue]? {
        (try? JSONDecoder().decode([String: Foundation_].self, from: Data(text)))?.mapValues(\.value)
    }

    static func parsed(_ text: [UInt8]) -> Result<[String: JSONValue], JSONSyntaxError> {
        text.withUnsafeBytes { bytes in Result { () throws(JSONSyntaxError) in try JSONValue.members(parsing: bytes) } }
    }

    static func parsed(_ text: String) -> Result<[String: JSONValue], JSONSyntaxError> { parsed(Array(text.utf8)) }

    // MARK: Random bodies, written with every spelling JSON allows

    struct Writer {
        var random: SplitMix64

        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }

        mutating func space() -> String {
            chance(0.7) ? "" : String((0..<Int.random(in: 1...3, using: &random)).map { _ in [" ", "\n", "\t", "\r"].randomElement(using: &random)! })
        }

        static let characters: [Character] = ["a", "z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "é", "я", "€", "\u{FFFF}", "😀", "𝄞", "\u{7F}"]

        mutating func string() -> String {
            String((0..<Int.random(in: 0...8, using: &random)).map { _ in Self.characters.randomElement(using: &random)! })
        }

        /// `s` as a JSON string, each character escaped or not, as the rules allow.
        mutating func quoted(_ s: String) -> String {
            var out = "\""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += chance(0.5) ? "\\n" : "\\u000a"
                case "\t": out += chance(0.5) ? "\\t" : "\\u0009"
                case "/": out += chance(0.5) ? "/" : "\\/"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04X", scalar.value)
                case _ where chance(0.2):
                    if scalar.value > 0xFFFF {
                        let v = scalar.value - 0x10000
                        out += String(format: "\\ud%03x\\u%04X", 0x800 + (v >> 10), 0xDC00 + (v & 0x3FF))
                    } else {
                        out += String(format: chance(0.5) ? "\\u%04x" : "\\u%04X", scalar.value)
                    }
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }

        /// A number and its text: integers, decimals, exponents, negative zero.
        mutating func number() -> (Double, String) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                let n = Int.random(in: -1_000_000...1_000_000, using: &random)
                return (Double(n), String(n))
            case 1:
                let x = Double.random(in: -1e6...1e6, using: &random)
                return (x, "\(x)")
            case 2:
                let x = Double(sign: chance(0.5) ? .minus : .plus, exponent: Int.random(in: -1000...1000, using: &random), significand: Double.random(in: 1..<2, using: &random))
                return (x, "\(x)".replacingOccurrences(of: "e", with: chance(0.5) ? "e" : "E"))
            default:
                return (-0.0, "-0")
            }
        }

        /// A value and its text, `depth` levels of arrays and objects at most.
        mutating func value(depth: Int) -> (JSONValue, String) {
            switch Int.random(in: 0..<(depth > 0 ? 7 : 5), using: &random) {
            case 0:
                let s = string()
                return (.string(s), quoted(s))
            case 1:
                let (x, text) = number()
                return (.number(x), text)
            case 2:
                let b = chance(0.5)
                return (.bool(b), b ? "true" : "false")
            case 3: return (.null, "null")
            case 4:
                let s = string()
                return (.string(s), quoted(s))
            case 5:
                let items = (0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth: depth - 1) }
                return (.array(items.map(\.0)), "[" + space() + items.map { $0.1 + space() }.joined(separator: "," + space()) + "]")
            default:
                let (members, text) = object(depth: depth - 1)
                return (.object(members.sorted { $0.0 < $1.0 }), text)
            }
        }

        /// An object of distinct member names and its text.
        mutating func object(depth: Int) -> ([(String, JSONValue)], String) {
            var names = Set<String>()
            var members: [(String, JSONValue)] = [], texts: [String] = []
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                let name = string()
                guard names.insert(name).inserted else { continue }
                let (value, text) = value(depth: depth)
                members.append((name, value))
                texts.append(space() + quoted(name) + space() + ":" + space() + text + space())
            }
            return (members, "{" + space() + texts.joined(separator: ",") + "}")
        }
    }

    static func bodies(_ count: Int, seed: UInt64) -> [(members: [String: JSONValue], text: [UInt8])] {
        var writer = Writer(random: SplitMix64(state: seed))
        return (0..<count).map { _ in
            let (members, text) = writer.object(depth: 3)
            return (Dictionary(uniqueKeysWithValues: members), Array((writer.space() + text + writer.space()).utf8))
        }
    }

    @Test("a random body reads back as the tree it was written from, and as Foundation reads it")
    func randomBodies() throws {
        for (members, text) in Self.bodies(3_000, seed: 30) {
            let read = try Self.parsed(text).get()
            #expect(read == members, "\(String(decoding: text, as: UTF8.self))")
            #expect(Self.foundation(text) == read, "\(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test("a body with a byte deleted, inserted or changed: whatever it reads, Foundation reads the same (but a number below a double's range, zero here); what it refuses and Foundation read has a trailing comma or a name given twice")
    func damagedBodies() {
        var random = SplitMix64(state: 33)
        let alphabet = Array(#"{}[],:"\ 0123456789.eE+-tfnulrasé"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        var read = 0, refused = 0, stricter = 0
        for (_, text) in Self.bodies(3_000, seed: 31) where !text.isEmpty {
            var damaged = text
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<damaged.count, using: &random)
                switch Int.random(in: 0..<5, using: &random) {
                case 4:
                    // A comma before a closing bracket: Foundation read it.
                    if let close = damaged[at...].firstIndex(where: { $0 == UInt8(ascii: "}") || $0 == UInt8(ascii: "]") }) {
                        damaged.insert(UInt8(ascii: ","), at: close)
                    }
                case 0: damaged.remove(at: at)
                case 1: damaged.insert(alphabet.randomElement(using: &random)!, at: at)
                case 2: damaged[at] = alphabet.randomElement(using: &random)!
                default: damaged.removeLast(Int.random(in: 0...min(3, damaged.count - 1), using: &random))
                }
                if damaged.isEmpty { damaged = [0x20] }
            }
            let reference = Self.foundation(damaged)
            switch Self.parsed(damaged) {
            case .success(let members):
                read += 1
                let text = String(decoding: damaged, as: UTF8.self)
                // Foundation refused a number too small for a double; this reader takes it as zero.
                let underflow = reference == nil && text.range(of: #"[eE]-[0-9]{3,}"#, options: .regularExpression) != nil
                #expect(reference == members || underflow, "\(text.debugDescription)")
            case .failure(let error):
                refused += 1
                #expect(error.offset >= 0 && error.offset <= damaged.count && !error.message.isEmpty)
                guard reference != nil else { continue }
                // Foundation read it: only where this reader is stricter on purpose.
                stricter += 1
                let before = damaged[..<error.offset].last { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }
                let intended = error.message.contains("given twice") || before == UInt8(ascii: ",") || error.message == "the text must be UTF-8"
                #expect(intended, "\(error.message): \(String(decoding: damaged, as: UTF8.self))")
            }
        }
        // Both kinds were met in earnest.
        #expect(read > 300 && refused > 1_000 && stricter > 0, "read \(read), refused \(refused), \(stricter) of them read by Foundation")
    }

    @Test("stricter than Foundation where readers disagree: a name given twice, a trailing comma, a number out of range; the rest as RFC 8259 says")
    func rules() throws {
        func refused(_ text: String) -> JSONSyntaxError? {
            if case .failure(let error) = Self.parsed(text) { return error }
            return nil
        }
        // Foundation kept the first of two members named alike (another reader may keep the
        // last), and took a trailing comma.
        #expect(Self.foundation(Array(#"{"a":1,"a":2}"#.utf8)) != nil && refused(#"{"a":1,"a":2}"#)?.message == #"the member "a" is given twice in one object"#)
        #expect(refused(#"{"a":1,"a":2}"#)?.offset == 7)
        #expect(refused(#"{"x":{"b":1,"b":2}}"#)?.message == #"the member "b" is given twice in one object"#)
        #expect(refused(#"{"\u0061":1,"a":2}"#)?.message.contains("given twice") == true)  // names compare as decoded
        for comma in [#"{"a":[1,]}"#, #"{"a":1,}"#] {
            #expect(Self.foundation(Array(comma.utf8)) != nil && refused(comma)?.message.hasPrefix("expected a") == true, "\(comma)")
        }
        #expect(refused(#"{"a":1e400}"#)?.message == "a number is beyond the range of a double")
        #expect(refused(#"{"a":-1e309}"#)?.offset == 5)

        for (text, expected) in [
            (#"{"a":1,"b":"1","c":true,"d":null,"e":1.5,"f":[],"g":{}}"#, ["a": .number(1), "b": .string("1"), "c": .bool(true), "d": .null, "e": .number(1.5), "f": .array([]), "g": .object([])]),
            ("\u{FEFF} {\"a\" : \"\\u0000\\ud834\\udd1e\" }\n", ["a": .string("\u{0}𝄞")]),
            (#"{"z":{"b":2,"a":1}}"#, ["z": .object([("a", .number(1)), ("b", .number(2))])]),
            (#"{"a":1e-400,"b":-0}"#, ["a": .number(0), "b": .number(-0.0)]),
            ("{}", [:]),
        ] as [(String, [String: JSONValue])] {
            #expect(try Self.parsed(text).get() == expected, "\(text)")
        }

        for (text, said) in [
            ("", "the text is empty"), ("  \n", "the text is empty"), ("[1]", "the text is an array, not an object"),
            ("\"a\"", "the text is a string, not an object"), ("-1", "the text is a number, not an object"), ("<html>", "expected '{'"), (#"{"a":1} x"#, "text follows the object"),
            (#"{"a":1}{}"#, "text follows the object"), (#"{"a":tru}"#, "expected a value"), (#"{"a":01}"#, "expected ',' or '}'"),
            (#"{"a":"\ud800"}"#, "lone surrogate"), ("{\"a\":\"\u{1}\"}", "control character"), (#"{"a":"\x"}"#, "invalid escape"),
            (#"{"a" 1}"#, "expected ':'"), (#"{a:1}"#, "expected a member name"), (#"{"a":1,,"b":2}"#, "expected a member name"),
            (#"{"a":[1 2]}"#, "expected ',' or ']'"), (#"{"a":1"#, "the text ends where ',' or '}' was expected"), (#"{"a":"b"#, "unterminated string"),
            (#"{"a":.5}"#, "expected a value"), (#"{"a":1.}"#, "a digit must follow the decimal point"), (#"{"a":NaN}"#, "expected a value"),
        ] {
            let error = refused(text)
            #expect(error?.message.contains(said) == true, "\(text): \(String(describing: error))")
            #expect(Self.foundation(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(refused(#"{"a":"ÿ"}"#) == nil)
        // A body may hold a password: no message quotes it.
        #expect(refused(#"{"login":"a","password":"ab"cd"}"#)?.message == "expected ',' or '}'")
        #expect(refused(#"{"password":"a\qb"}"#)?.message == "invalid escape in a string")
        #expect(refused("login=a&password=secret")?.message == "expected '{'")
        // UTF-16 and UTF-32, which Foundation converted: RFC 8259 asks for UTF-8.
        for encoding in [String.Encoding.utf16, .utf16LittleEndian, .utf16BigEndian, .utf32LittleEndian, .utf32BigEndian] {
            let text = Array(#"{"a":1}"#.data(using: encoding)!)
            #expect(Self.foundation(text) != nil && Self.parsed(text).failure?.message == "the text must be UTF-8", "\(encoding)")
        }
        var invalidUTF8 = Array(#"{"a":"x"}"#.utf8)
        invalidUTF8[6] = 0xFF
        #expect(Self.parsed(invalidUTF8).failure?.message == "invalid UTF-8")
    }

    @Test("nesting: 256 levels are read, 257 refused, and no depth overflows the stack")
    func nesting() throws {
        func nested(_ levels: Int) -> String {
            "{\"a\":" + String(repeating: "[", count: levels - 1) + String(repeating: "]", count: levels - 1) + "}"
        }
        #expect(throws: Never.self) { try Self.parsed(nested(256)).get() }
        #expect(Self.parsed(nested(257)).failure?.message == "values are nested too deeply")
        #expect(Self.parsed(String(repeating: "{\"a\":", count: 300) + "1" + String(repeating: "}", count: 300)).failure?.message == "values are nested too deeply")
        #expect(Self.parsed("{\"a\":" + String(repeating: "[", count: 100_000)).failure?.message == "values are nested too deeply")
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
