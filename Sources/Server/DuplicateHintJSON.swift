import Interchange
import ReportService

extension DuplicateHint {
    /// Hints as the JSON array `JSONEncoder` writes of them (members sorted, a whole
    /// distance without `.0`), written by hand: a filing's answer carries up to five, and
    /// through `Codable` they took 4.8% of the server's CPU per filing (a `perf` profile
    /// of 64 connections filing on PostgreSQL, 2026-11-29). A test holds the two alike.
    static func json(_ hints: [DuplicateHint]) -> [UInt8] {
        var out = "["
        for (i, hint) in hints.enumerated() {
            if i > 0 { out += "," }
            var distance = "\(hint.distanceM)"
            if distance.hasSuffix(".0") { distance.removeLast(2) }
            out += #"{"distance_m":\#(distance),"id":\#(hint.id),"shared_phones":["#
            out += hint.sharedPhones.map(GeoJSON.string).joined(separator: ",") + "]}"
        }
        return Array((out + "]").utf8)
    }
}
