import Foundation
@testable import Interchange
import Testing

/// The numbers the writers put into GeoJSON and CSV, digit for digit against a plain
/// `String` rendering of the same rounding.
@Suite struct NumberWritingTests {
    /// `value` rounded half away from zero to `decimals` decimals, trailing zeros dropped,
    /// spelled out with `String`: what ``ByteOutput/appendDecimal(_:decimals:to:)`` writes.
    static func reference(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "null" }
        let unit = (0..<decimals).reduce(1.0) { r, _ in r * 10 }
        guard abs(value) * unit < 9e18 else { return "\(value)" }
        let scaled = Int64((value * unit).rounded())
        let magnitude = scaled.magnitude, u = UInt64(unit)
        var text = (scaled < 0 ? "-" : "") + String(magnitude / u)
        if magnitude % u != 0 {
            var fraction = String(magnitude % u)
            fraction = String(repeating: "0", count: decimals - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return text
    }

    static func written(_ value: Double, decimals: Int) -> String {
        var out: [UInt8] = []
        ByteOutput.appendDecimal(value, decimals: decimals, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func decimalsMatchTheReference() {
        var state: UInt64 = 7
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_CE4E_5CE9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var values: [Double] = [0, -0.0, 0.5, -0.5, 1, -1, 9.999_999_5, 99.999_999_9, 1e-7, -1e-7, 180, -180, 90, 1e9, 123_456_789.123_456_789, 9e17, 8.9e18, 9.1e18, -9.1e18, 1e300, .infinity, -.infinity, .nan]
        for _ in 0..<20_000 {
            let magnitude = Double(next() % 24) - 8  // 1e-8 ... 1e15
            let sign: Double = next() % 2 == 0 ? 1 : -1
            values.append(sign * Double(next() >> 11) / 9_007_199_254_740_992.0 * pow(10, magnitude))
        }
        for value in values {
            for decimals in 0...9 {
                #expect(Self.written(value, decimals: decimals) == Self.reference(value, decimals: decimals), "\(value) to \(decimals) decimals")
            }
            #expect(GeoJSON.degrees(value) == Self.reference(value, decimals: 6))
        }
    }

    @Test func decimalsOutsideZeroToNineAreClamped() {
        #expect(Self.written(1.234_567_891_23, decimals: -3) == "1")
        #expect(Self.written(1.234_567_891_23, decimals: 15) == "1.234567891")
    }

    @Test func integers() {
        var cases: [Int64] = [0, 1, -1, 9, 10, 99, 100, -100, 12_345, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            cases += [power - 1, power, power + 1, -power, -(power - 1)]
        }
        for value in cases {
            var out: [UInt8] = []
            ByteOutput.appendInteger(value, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == String(value))
        }
    }

    @Test func numbersAreAppendedAfterWhatIsThere() {
        var out = Array("[".utf8)
        ByteOutput.appendInteger(-42, to: &out)
        out.append(UInt8(ascii: ","))
        ByteOutput.appendDegrees(30.523_412_4, to: &out)
        out.append(UInt8(ascii: ","))
        ByteOutput.appendDecimal(.nan, decimals: 2, to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "[-42,30.523412,null")
    }

    @Test func digitCounts() {
        #expect(ByteCursor.digitCount(0) == 1)
        #expect(ByteCursor.digitCount(9) == 1)
        #expect(ByteCursor.digitCount(10) == 2)
        #expect(ByteCursor.digitCount(99) == 2)
        #expect(ByteCursor.digitCount(100) == 3)
        #expect(ByteCursor.digitCount(UInt64.max) == 20)
        var power: UInt64 = 1
        for digits in 1...19 {
            #expect(ByteCursor.digitCount(power) == digits)
            #expect(ByteCursor.digitCount(power * 10 - 1) == digits)
            power *= 10
        }
    }
}
