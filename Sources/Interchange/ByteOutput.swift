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

    static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var v = value.magnitude
        let start = out.count
        repeat {
            out.append(UInt8(truncatingIfNeeded: 48 + v % 10))
            v /= 10
        } while v > 0
        out[start...].reverse()
    }

    /// Degrees rounded to 6 decimals (≈ 11 cm), trailing zeros dropped: `30.5234`, `-0.5`,
    /// `30`. Non-finite values, which no valid report has, are written as `null`.
    static func appendDegrees(_ value: Double, to out: inout [UInt8]) {
        appendDecimal(value, decimals: 6, to: &out)
    }

    /// A number rounded to `decimals` (0...9) decimals, trailing zeros dropped; `null` when
    /// not finite.
    static func appendDecimal(_ value: Double, decimals: Int, to out: inout [UInt8]) {
        guard value.isFinite else {
            append("null", to: &out)
            return
        }
        let decimals = min(max(decimals, 0), 9)
        var unit: Int64 = 1
        for _ in 0..<decimals { unit *= 10 }
        guard abs(value) * Double(unit) < 9e18 else {
            out.append(contentsOf: "\(value)".utf8)
            return
        }
        let scaled = Int64((value * Double(unit)).rounded())
        if scaled < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = scaled.magnitude
        appendInteger(Int64(magnitude / UInt64(unit)), to: &out)
        var fraction = magnitude % UInt64(unit)
        guard fraction != 0 else { return }
        out.append(UInt8(ascii: "."))
        var width = decimals
        while fraction % 10 == 0 {
            fraction /= 10
            width -= 1
        }
        let start = out.count
        for _ in 0..<width {
            out.append(UInt8(truncatingIfNeeded: 48 + fraction % 10))
            fraction /= 10
        }
        out[start...].reverse()
    }
}
