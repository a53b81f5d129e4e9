import Foundation
import ReportModel

/// RFC 3339 date-times, as every format of this module writes and reads them.
///
/// Written in UTC with a `Z`, with milliseconds only when they are not zero; read with
/// any offset and any number of fractional digits. Both directions are hand-written
/// (Foundation's formatters are two orders of magnitude slower).
///
/// ```swift
/// RFC3339.string(from: Date(timeIntervalSince1970: 1_740_824_430))   // "2025-03-01T10:20:30Z"
/// RFC3339.date(from: "2025-03-01T12:20:30.5+02:00")                  // 10:20:30.500 UTC
/// ```
public enum RFC3339 {
    /// `yyyy-MM-ddTHH:mm:ss[.SSS]Z` in UTC, rounded to the millisecond. Dates outside the
    /// years 0001–9999 are clamped to them.
    public static func string(from date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The date of an RFC 3339 `date-time`: `2025-03-01T10:20:30Z`, `…30.123456Z`,
    /// `…30+02:00`. `t`, `z` and a space instead of `T` are accepted; a leap second (`:60`)
    /// counts as the first second of the next minute. Nil when the text is not one.
    public static func date(from text: some StringProtocol) -> Date? {
        var text = String(text)
        return text.withUTF8 { buffer in
            guard let base = buffer.baseAddress else { return nil }
            return parse(base, buffer.count)
        }
    }

    static let minSeconds: Int64 = -62_135_596_800  // 0001-01-01T00:00:00Z
    static let maxSeconds: Int64 = 253_402_300_799  // 9999-12-31T23:59:59Z

    static func append(_ date: Date, to out: inout [UInt8]) {
        var t = date.timeIntervalSince1970
        if !(t >= Double(minSeconds)) { t = Double(minSeconds) }  // also NaN
        if t > Double(maxSeconds) + 0.999 { t = Double(maxSeconds) + 0.999 }
        let totalMillis = Int64((t * 1000).rounded())
        var seconds = totalMillis / 1000
        var millis = totalMillis % 1000
        if millis < 0 {
            millis += 1000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let (year, month, day) = CivilCalendar.civil(fromDays: days)
        appendDigits(year, 4, &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(month, 2, &out)
        out.append(UInt8(ascii: "-"))
        appendDigits(day, 2, &out)
        out.append(UInt8(ascii: "T"))
        appendDigits(secondOfDay / 3600, 2, &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, 2, &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, 2, &out)
        if millis != 0 {
            out.append(UInt8(ascii: "."))
            appendDigits(millis, 3, &out)
        }
        out.append(UInt8(ascii: "Z"))
    }

    @inline(__always)
    private static func appendDigits(_ value: Int64, _ width: Int, _ out: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var v = value
        while divisor > 0 {
            out.append(UInt8(truncatingIfNeeded: 48 + v / divisor))
            v %= divisor
            divisor /= 10
        }
    }

    /// Parses a date-time occupying exactly `count` bytes at `p`.
    static func parse(_ p: UnsafePointer<UInt8>, _ count: Int) -> Date? {
        guard count >= 20 else { return nil }
        @inline(__always) func digits(_ at: Int, _ n: Int) -> Int64? {
            var v: Int64 = 0
            for k in at..<at + n {
                let d = p[k] &- 48
                guard d < 10 else { return nil }
                v = v * 10 + Int64(d)
            }
            return v
        }
        guard let year = digits(0, 4), p[4] == UInt8(ascii: "-"), let month = digits(5, 2), p[7] == UInt8(ascii: "-"),
            let day = digits(8, 2), p[10] == UInt8(ascii: "T") || p[10] == UInt8(ascii: "t") || p[10] == UInt8(ascii: " "),
            let hour = digits(11, 2), p[13] == UInt8(ascii: ":"), let minute = digits(14, 2), p[16] == UInt8(ascii: ":"),
            let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilCalendar.daysIn(month: month, year: year), hour <= 23, minute <= 59,
            second <= 60
        else { return nil }
        var i = 19
        var fraction = 0.0
        if p[i] == UInt8(ascii: ".") {
            i += 1
            let start = i
            var numerator: Int64 = 0
            var denominator: Int64 = 1
            while i < count, p[i] &- 48 < 10 {
                if denominator < 1_000_000_000 {  // nanoseconds are plenty
                    numerator = numerator * 10 + Int64(p[i] - 48)
                    denominator *= 10
                }
                i += 1
            }
            guard i > start else { return nil }
            fraction = Double(numerator) / Double(denominator)
        }
        guard i < count else { return nil }
        var offset: Int64 = 0
        switch p[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard count - i == 6, let oh = digits(i + 1, 2), p[i + 3] == UInt8(ascii: ":"), let om = digits(i + 4, 2),
                oh <= 23, om <= 59
            else { return nil }
            offset = (oh * 60 + om) * 60 * (p[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        default:
            return nil
        }
        guard i == count else { return nil }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }
}
