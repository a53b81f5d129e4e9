import Foundation
import Geometry

/// A time filter as OGC API – Features writes it: an instant (`2026-01-01T00:00:00Z`), a
/// closed interval (`2026-01-01T00:00:00Z/2026-02-01T00:00:00Z`) or a half-open one with
/// `..` or nothing for the open end (`../2026-02-01T00:00:00Z`, `2026-01-01T00:00:00Z/..`).
/// Both ends are included.
///
/// ```swift
/// let recent = try DateTimeInterval(parsing: "2026-11-01T00:00:00Z/..")
/// recent.milliseconds   // 1793491200000...Int64.max
/// ```
public struct DateTimeInterval: Sendable, Hashable {
    public var start: Date?
    public var end: Date?

    public init(start: Date?, end: Date?) {
        self.start = start
        self.end = end
    }

    /// Parses the text; anything else, or an end before the start, is an error on `field`.
    public init(parsing text: String, field: String = "datetime") throws(ValidationError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        func instant(_ part: Substring, open: Bool) throws(ValidationError) -> Date? {
            if open && (part.isEmpty || part == "..") { return nil }
            guard let date = RFC3339.date(from: part) else {
                throw ValidationError(field: field, "\"\(part.prefix(40))\" is not an RFC 3339 date-time such as 2026-01-31T12:00:00Z")
            }
            return date
        }
        switch parts.count {
        case 1:
            let at = try instant(parts[0], open: false)
            self.init(start: at, end: at)
        case 2:
            self.init(start: try instant(parts[0], open: true), end: try instant(parts[1], open: true))
            guard start != nil || end != nil else { throw ValidationError(field: field, "an interval needs at least one end, got \"\(text.prefix(80))\"") }
        default:
            throw ValidationError(field: field, "must be a date-time or an interval start/end, got \"\(text.prefix(80))\"")
        }
        if let start, let end, end < start {
            throw ValidationError(field: field, "the interval ends (\(RFC3339.string(from: end))) before it starts (\(RFC3339.string(from: start)))")
        }
    }

    /// The interval in milliseconds since 1970, open ends as the extremes of Int64.
    public var milliseconds: ClosedRange<Int64> {
        func ms(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded()) }
        return (start.map(ms) ?? .min)...(end.map(ms) ?? .max)
    }
}
