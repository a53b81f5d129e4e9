import Foundation

/// A JSON syntax error at a byte offset of the text being read.
public struct JSONSyntaxError: Error, Sendable {
    public var message: String
    public var offset: Int
}

/// A hand-written RFC 8259 reader over raw bytes: the parts a Feature needs (strings with
/// every escape, numbers, literals) and a validating skip for any other value.
///
/// It accepts only valid JSON: UTF-8 is validated, control characters in strings, leading
/// zeros, bad escapes and lone surrogates (when a string is decoded) are rejected, and
/// nesting deeper than ``maxDepth`` is refused rather than overflowing the stack.
struct JSONCursor {
    let base: UnsafePointer<UInt8>
    let end: Int
    var i: Int
    /// Whether messages quote the byte at fault: yes for an import file (its owner reads
    /// them); no for a request body, which may hold a password.
    var quotesInput = true

    static let maxDepth = 256

    init(_ base: UnsafePointer<UInt8>, start: Int, end: Int) {
        self.base = base
        self.i = start
        self.end = end
    }

    @inline(__always)
    mutating func skipSpace() {
        while i < end, isJSONSpace(base[i]) { i += 1 }
    }

    @inline(__always)
    func peek() -> UInt8? {
        i < end ? base[i] : nil
    }

    var atEnd: Bool { i >= end }

    func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, offset: i)
    }

    func unexpected(_ expected: String) -> JSONSyntaxError {
        guard i < end else { return error("the text ends where \(expected) was expected") }
        guard quotesInput else { return error("expected \(expected)") }
        let b = base[i]
        let shown = b >= 0x20 && b < 0x7F ? "'\(Character(Unicode.Scalar(b)))'" : String(format: "byte 0x%02X", b)
        return error("expected \(expected), found \(shown)")
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8) throws(JSONSyntaxError) {
        guard i < end, base[i] == byte else { throw unexpected("'\(Character(Unicode.Scalar(byte)))'") }
        i += 1
    }

    /// After an element of an array or an object: true past a `,` (and the space after
    /// it), false past the `closing` byte; anything else is an error expecting either.
    mutating func nextElement(closing: UInt8) throws(JSONSyntaxError) -> Bool {
        skipSpace()
        if peek() == UInt8(ascii: ",") {
            i += 1
            skipSpace()
            return true
        }
        guard peek() == closing else { throw unexpected("',' or '\(Character(Unicode.Scalar(closing)))'") }
        i += 1
        return false
    }

    /// What kind of value starts here, for messages: "a string", "a number", ….
    func kindOfValue() -> String {
        switch peek() {
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "{"): "an object"
        case UInt8(ascii: "["): "an array"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "a boolean"
        case UInt8(ascii: "n"): "null"
        default: "a number"
        }
    }

    // MARK: Strings

    /// Scans a string at its opening quote, validating it; returns the byte range between
    /// the quotes and whether it has escapes.
    @inline(__always)
    mutating func scanString() throws(JSONSyntaxError) -> (start: Int, end: Int, escaped: Bool) {
        i += 1
        let start = i
        var escaped = false
        while true {
            guard i < end else { throw error("unterminated string") }
            let b = base[i]
            if b == UInt8(ascii: "\"") {
                let stop = i
                i += 1
                return (start, stop, escaped)
            }
            if b >= 0x20 && b < 0x80 && b != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            if b == UInt8(ascii: "\\") {
                escaped = true
                i += 1
                guard i < end else { throw error("unterminated string") }
                switch base[i] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 1
                case UInt8(ascii: "u"):
                    guard end - i > 4, hexValue(base[i + 1]) != nil, hexValue(base[i + 2]) != nil,
                        hexValue(base[i + 3]) != nil, hexValue(base[i + 4]) != nil
                    else { throw error("\\u must be followed by four hex digits") }
                    i += 5
                default:
                    throw error(quotesInput ? "invalid escape '\\\(Character(Unicode.Scalar(base[i])))' in a string" : "invalid escape in a string")
                }
                continue
            }
            if b < 0x20 { throw error(String(format: "control character 0x%02X in a string must be escaped", b)) }
            try skipUTF8Sequence()
        }
    }

    /// Validates one multi-byte UTF-8 sequence starting at `i` and steps over it.
    @inline(__always)
    mutating func skipUTF8Sequence() throws(JSONSyntaxError) {
        let b = base[i]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        switch b {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw error("invalid UTF-8")
        }
        guard end - i >= length else { throw error("invalid UTF-8") }
        let second = base[i + 1]
        guard second >= low, second <= high else { throw error("invalid UTF-8") }
        for k in 2..<length where base[i + k] & 0xC0 != 0x80 { throw error("invalid UTF-8") }
        i += length
    }

    /// Decodes a string at its opening quote.
    @inline(__always)
    mutating func parseString() throws(JSONSyntaxError) -> String {
        let (start, stop, escaped) = try scanString()
        return try decodeString(start, stop, escaped)
    }

    func decodeString(_ start: Int, _ stop: Int, _ escaped: Bool) throws(JSONSyntaxError) -> String {
        if !escaped {
            return String(decoding: UnsafeBufferPointer(start: base + start, count: stop - start), as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(stop - start)
        var k = start
        while k < stop {
            let b = base[k]
            guard b == UInt8(ascii: "\\") else {
                bytes.append(b)
                k += 1
                continue
            }
            k += 1
            switch base[k] {
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(k + 1)
                k += 4
                if scalar >= 0xD800 && scalar <= 0xDBFF {
                    guard k + 6 < stop, base[k + 1] == UInt8(ascii: "\\"), base[k + 2] == UInt8(ascii: "u") else {
                        throw JSONSyntaxError(message: "lone surrogate in a \\u escape", offset: k)
                    }
                    let low = hex4(k + 3)
                    guard low >= 0xDC00 && low <= 0xDFFF else {
                        throw JSONSyntaxError(message: "lone surrogate in a \\u escape", offset: k)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    k += 6
                } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                    throw JSONSyntaxError(message: "lone surrogate in a \\u escape", offset: k)
                }
                appendUTF8(scalar, &bytes)
            default: bytes.append(base[k])  // " \ /
            }
            k += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func hex4(_ at: Int) -> UInt32 {
        var v: UInt32 = 0
        for k in at..<at + 4 { v = v << 4 | UInt32(hexValue(base[k]) ?? 0) }
        return v
    }

    private func appendUTF8(_ scalar: UInt32, _ bytes: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            bytes.append(UInt8(scalar))
        case 0x80..<0x800:
            bytes.append(UInt8(0xC0 | scalar >> 6))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            bytes.append(UInt8(0xE0 | scalar >> 12))
            bytes.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        default:
            bytes.append(UInt8(0xF0 | scalar >> 18))
            bytes.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            bytes.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Whether the string between `start` and `stop` (unescaped) is `literal`.
    @inline(__always)
    func bytesEqual(_ start: Int, _ stop: Int, _ literal: StaticString) -> Bool {
        stop - start == literal.utf8CodeUnitCount && memcmp(base + start, literal.utf8Start, stop - start) == 0
    }

    // MARK: Numbers

    /// A number token: its value, and whether it is written as an integer (no `.` or
    /// exponent). `start..<end` is its text.
    struct Number {
        var value: Double
        var isInteger: Bool
        var start: Int
        var end: Int
    }

    private static let powersOf10: [Double] = (0...22).map { Double("1e\($0)")! }

    mutating func parseNumber() throws(JSONSyntaxError) -> Number {
        let start = i
        var negative = false
        if i < end, base[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard i < end, base[i] &- 48 < 10 else { throw unexpected("a value") }
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        var truncated = false
        if base[i] == UInt8(ascii: "0") {
            i += 1
        } else {
            while i < end, case let d = base[i] &- 48, d < 10 {
                if significant < 19 {
                    mantissa = mantissa * 10 + UInt64(d)
                    significant += 1
                } else {
                    exponent += 1
                    if d != 0 { truncated = true }
                }
                i += 1
            }
        }
        var isInteger = true
        if i < end, base[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < end, base[i] &- 48 < 10 else { throw error("a digit must follow the decimal point") }
            while i < end, case let d = base[i] &- 48, d < 10 {
                if mantissa == 0 && d == 0 {
                    exponent -= 1
                } else if significant < 19 {
                    mantissa = mantissa * 10 + UInt64(d)
                    significant += 1
                    exponent -= 1
                } else if d != 0 {
                    truncated = true
                }
                i += 1
            }
        }
        if i < end, base[i] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            i += 1
            var exponentNegative = false
            if i < end, base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-") {
                exponentNegative = base[i] == UInt8(ascii: "-")
                i += 1
            }
            guard i < end, base[i] &- 48 < 10 else { throw error("a digit must follow the exponent mark") }
            var e = 0
            while i < end, case let d = base[i] &- 48, d < 10 {
                if e < 100_000 { e = e * 10 + Int(d) }
                i += 1
            }
            exponent += exponentNegative ? -e : e
        }
        var value: Double
        if mantissa == 0 {
            value = 0
        } else if !truncated && mantissa <= 1 << 53 && exponent >= -22 && exponent <= 22 {
            // Clinger's fast path: both operands are exact, so one rounding gives the right answer.
            value = Double(mantissa)
            value = exponent >= 0 ? value * Self.powersOf10[exponent] : value / Self.powersOf10[-exponent]
        } else {
            let text = String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
            value = Double(text) ?? .nan
            return Number(value: value, isInteger: isInteger, start: start, end: i)
        }
        return Number(value: negative ? -value : value, isInteger: isInteger, start: start, end: i)
    }

    // MARK: Any value

    /// Steps over one value of any kind, validating it.
    mutating func skipValue(depth: Int = 0) throws(JSONSyntaxError) {
        guard i < end else { throw unexpected("a value") }
        switch base[i] {
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "{"):
            guard depth < Self.maxDepth else { throw error("values are nested too deeply") }
            i += 1
            skipSpace()
            if peek() == UInt8(ascii: "}") {
                i += 1
                return
            }
            while true {
                guard peek() == UInt8(ascii: "\"") else { throw unexpected("a member name") }
                _ = try scanString()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                skipSpace()
                try skipValue(depth: depth + 1)
                guard try nextElement(closing: UInt8(ascii: "}")) else { return }
            }
        case UInt8(ascii: "["):
            guard depth < Self.maxDepth else { throw error("values are nested too deeply") }
            i += 1
            skipSpace()
            if peek() == UInt8(ascii: "]") {
                i += 1
                return
            }
            while true {
                try skipValue(depth: depth + 1)
                guard try nextElement(closing: UInt8(ascii: "]")) else { return }
            }
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default:
            _ = try parseNumber()
        }
    }

    /// Steps over `null` if it is next.
    @inline(__always)
    mutating func skipNull() -> Bool {
        guard end - i >= 4, base[i] == UInt8(ascii: "n"), base[i + 1] == UInt8(ascii: "u"),
            base[i + 2] == UInt8(ascii: "l"), base[i + 3] == UInt8(ascii: "l")
        else { return false }
        i += 4
        return true
    }

    mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let n = word.utf8CodeUnitCount
        guard end - i >= n, memcmp(base + i, word.utf8Start, n) == 0 else { throw unexpected("a value") }
        i += n
    }

    /// Steps over a member separator; returns false at the closing brace.
    @inline(__always)
    mutating func nextMember() throws(JSONSyntaxError) -> Bool {
        skipSpace()
        guard i < end else { throw unexpected("',' or '}'") }
        if base[i] == UInt8(ascii: ",") {
            i += 1
            skipSpace()
            guard peek() == UInt8(ascii: "\"") else { throw unexpected("a member name") }
            return true
        }
        guard base[i] == UInt8(ascii: "}") else { throw unexpected("',' or '}'") }
        i += 1
        return false
    }

    /// After `{`: whether the object has a first member (and steps over `}` if not).
    @inline(__always)
    mutating func firstMember() throws(JSONSyntaxError) -> Bool {
        skipSpace()
        if peek() == UInt8(ascii: "}") {
            i += 1
            return false
        }
        guard peek() == UInt8(ascii: "\"") else { throw unexpected("a member name or '}'") }
        return true
    }

    /// Reads `"name":` and leaves the cursor at the value; returns the name's range.
    @inline(__always)
    mutating func memberName() throws(JSONSyntaxError) -> (start: Int, end: Int, escaped: Bool) {
        let name = try scanString()
        skipSpace()
        try expect(UInt8(ascii: ":"))
        skipSpace()
        return name
    }
}

@inline(__always)
func hexValue(_ b: UInt8) -> UInt8? {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): b - 48
    case UInt8(ascii: "a")...UInt8(ascii: "f"): b - 87
    case UInt8(ascii: "A")...UInt8(ascii: "F"): b - 55
    default: nil
    }
}
