import Foundation

/// Appending text to a byte buffer without going through `String` formatting: the
/// writers' inner loop.
enum ByteOutput {
    @inline(__always)
    static func append(_ literal: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// A JSON string literal with RFC 8259 escaping: `"` and `\` and the control characters
    /// below U+0020 (`\b \t \n \f \r`, others as `\u00XX`); everything else, non-ASCII
    /// included, is copied as UTF-8.
    static func appendJSONString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = string
        s.withUTF8 { buffer in appendJSONEscaped(buffer, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func appendJSONEscaped(_ buffer: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var start = 0
        var i = 0
        let n = buffer.count
        while i < n {
            let b = buffer[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C {
                i += 1
                continue
            }
            if start < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<i])) }
            out.append(0x5C)
            switch b {
            case 0x22: out.append(0x22)
            case 0x5C: out.append(0x5C)
            case 0x08: out.append(UInt8(ascii: "b"))
            case 0x09: out.append(UInt8(ascii: "t"))
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0C: out.append(UInt8(ascii: "f"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            default:
                out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]])
            }
            i += 1
            start = i
        }
        if start < n { out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<n])) }
    }

    /// A CSV field, quoted (RFC 4180) when it contains `,` `"` CR or LF.
    static func appendCSVField(_ string: String, to out: inout [UInt8]) {
        var s = string
        s.withUTF8 { buffer in
            var needsQuotes = false
            for b in buffer where b == 0x2C || b == 0x22 || b == 0x0D || b == 0x0A {
                needsQuotes = true
                break
            }
            guard needsQuotes else {
                out.append(contentsOf: buffer)
                return
            }
            out.append(0x22)
            for b in buffer {
                if b == 0x22 { out.append(0x22) }
                out.append(b)
            }
            out.append(0x22)
        }
    }

    /// An integer in decimal: `-42`.
    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        append(upTo: ByteCursor.integerBound, to: &out) { $0.writeInteger(value) }
    }

    /// Degrees rounded to 6 decimals (≈ 11 cm), trailing zeros dropped: `30.5234`, `-0.5`,
    /// `30`. Non-finite values, which no valid report has, are written as `null`.
    static func appendDegrees(_ value: Double, to out: inout [UInt8]) {
        append(upTo: ByteCursor.decimalBound, to: &out) { $0.writeDegrees(value) }
    }

    /// A number rounded to `decimals` (0...9) decimals, trailing zeros dropped; `null` when
    /// not finite.
    static func appendDecimal(_ value: Double, decimals: Int, to out: inout [UInt8]) {
        append(upTo: ByteCursor.decimalBound, to: &out) { $0.writeDecimal(value, decimals: decimals) }
    }

    /// Appends what `write` writes through a cursor, at most `bound` bytes: written into
    /// scratch memory (on the stack when small), then appended in one copy, rather than
    /// byte by byte into the array.
    @inline(__always)
    static func append(upTo bound: Int, to out: inout [UInt8], _ write: (inout ByteCursor) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { buffer in
            var cursor = ByteCursor(buffer.baseAddress!)
            write(&cursor)
            let count = cursor.position - buffer.baseAddress!
            precondition(count <= bound, "wrote \(count) bytes, more than the \(bound) reserved")
            out.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: count))
        }
    }
}

/// Writes text forward into memory the caller has reserved (it must hold what is written):
/// the inner loop of ``ByteOutput``'s numbers and of whole small records.
struct ByteCursor {
    /// Where the next byte goes.
    private(set) var position: UnsafeMutablePointer<UInt8>

    init(_ start: UnsafeMutablePointer<UInt8>) { position = start }

    /// Most bytes ``writeInteger(_:)`` writes: a sign and 19 digits.
    static let integerBound = 20
    /// Most bytes ``writeDecimal(_:decimals:)`` writes: a sign, 19 digits, the point and
    /// 9 decimals, or Swift's shortest form of a huge value (at most 24).
    static let decimalBound = 32

    @inline(__always)
    mutating func write(_ byte: UInt8) {
        position.pointee = byte
        position += 1
    }

    @inline(__always)
    mutating func write(_ literal: StaticString) {
        write(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inline(__always)
    mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        position.update(from: base, count: bytes.count)
        position += bytes.count
    }

    /// An integer in decimal: `-42`.
    @inline(__always)
    mutating func writeInteger(_ value: Int64) {
        if value < 0 { write(UInt8(ascii: "-")) }
        writeDigits(value.magnitude, count: Self.digitCount(value.magnitude))
    }

    /// Degrees rounded to 6 decimals, as ``ByteOutput/appendDegrees(_:to:)`` describes.
    @inline(__always)
    mutating func writeDegrees(_ value: Double) {
        writeDecimal(value, decimals: 6)
    }

    /// A number rounded to `decimals` (0...9) decimals, trailing zeros dropped; `null` when
    /// not finite.
    @inline(__always)
    mutating func writeDecimal(_ value: Double, decimals: Int) {
        guard value.isFinite else {
            write("null")
            return
        }
        let decimals = min(max(decimals, 0), 9)
        var unit: UInt64 = 1
        for _ in 0..<decimals { unit *= 10 }
        guard abs(value) * Double(unit) < 9e18 else {
            var text = "\(value)"
            text.withUTF8 { write($0) }
            return
        }
        let scaled = Int64((value * Double(unit)).rounded())
        let magnitude = scaled.magnitude
        if scaled < 0 { write(UInt8(ascii: "-")) }
        let whole = magnitude / unit
        writeDigits(whole, count: Self.digitCount(whole))
        var fraction = magnitude % unit
        guard fraction != 0 else { return }
        write(UInt8(ascii: "."))
        // fraction < 10^width throughout: its digits, leading zeros included, are `width`.
        var width = decimals
        while fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        writeDigits(fraction, count: width)
    }

    /// How many decimal digits `value` has (1 for 0).
    @inline(__always)
    static func digitCount(_ value: UInt64) -> Int {
        var count = 1, rest = value
        while rest >= 100 {
            rest /= 100
            count += 2
        }
        return rest >= 10 ? count + 1 : count
    }

    /// The last `count` decimal digits of `value` (leading zeros included), two a step
    /// from the last.
    @inline(__always)
    private mutating func writeDigits(_ value: UInt64, count: Int) {
        let pairs = Self.digitPairs.utf8Start
        var p = position + count, v = value, left = count
        while left >= 2 {
            let r = Int(v % 100)
            v /= 100
            p -= 2
            p[0] = pairs[2 * r]
            p[1] = pairs[2 * r + 1]
            left -= 2
        }
        if left == 1 { (p - 1).pointee = UInt8(truncatingIfNeeded: 48 + v % 10) }
        position += count
    }

    /// `00` to `99`, for ``writeDigits(_:count:)``.
    private static var digitPairs: StaticString {
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }
}
