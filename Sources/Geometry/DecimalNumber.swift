/// Decimal numbers as people and URLs write them: `[+-]digits[.digits][e[+-]digits]`
/// (or `.5`, `5.`), and nothing else.
///
/// `Double(String)` hands its text to C's `strtod`, which stops at a NUL byte (so
/// `30.5\0garbage` reads as 30.5) and also takes `inf`, `nan` and hexadecimal forms. Every
/// number a client sends is checked here first, so a value is taken whole or not at all.
public enum DecimalNumber {
    /// The value of `text` when all of it is a finite decimal number; nil otherwise.
    public static func parse(_ text: some StringProtocol) -> Double? {
        guard isDecimal(text.utf8) else { return nil }
        guard let value = Double(String(text)), value.isFinite else { return nil }
        return value
    }

    /// Whether the bytes are exactly one decimal number in the form above.
    static func isDecimal(_ bytes: some Collection<UInt8>) -> Bool {
        var i = bytes.startIndex
        func digits() -> Int {
            var n = 0
            while i < bytes.endIndex, (48...57).contains(bytes[i]) { n += 1; i = bytes.index(after: i) }
            return n
        }
        if i < bytes.endIndex, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i = bytes.index(after: i) }
        var mantissa = digits()
        if i < bytes.endIndex, bytes[i] == UInt8(ascii: ".") {
            i = bytes.index(after: i)
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if i < bytes.endIndex, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i = bytes.index(after: i)
            if i < bytes.endIndex, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i = bytes.index(after: i) }
            guard digits() > 0 else { return false }
        }
        return i == bytes.endIndex
    }
}
