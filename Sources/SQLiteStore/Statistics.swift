import Foundation
import Geometry
import GRDB
import ReportModel

extension SQLiteReports {
    /// Counts of the stored reports; see ``StoreStatistics``.
    public func statistics() throws -> StoreStatistics {
        try pool.read { db in
            func counts(_ column: String, _ codes: [String]) throws -> [StoreStatistics.Count] {
                var found: [String: Int] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT \(column), count(*) FROM report GROUP BY \(column)") {
                    found[row[0]] = row[1]
                }
                return codes.map { StoreStatistics.Count(code: $0, count: found[$0] ?? 0) }
            }
            let row = try Row.fetchOne(db, sql: """
                SELECT count(*), min(longitude), min(latitude), max(longitude), max(latitude), min(created_at), max(created_at)
                FROM report
                """)!
            let total: Int = row[0]
            return try StoreStatistics(
                total: total,
                byStatus: counts("status", reference.statuses.map(\.code)),
                byDistrict: counts("district", reference.districts.map(\.code)),
                byObjectType: counts("object_type", reference.objectTypes.map(\.code)),
                extent: total == 0 ? nil : BoundingBox(west: row[1], south: row[2], east: row[3], north: row[4]),
                created: total == 0 ? nil : ReportRow.date(milliseconds: row[5])...ReportRow.date(milliseconds: row[6]))
        }
    }
}

extension SQLiteReports {
    /// The creation times of the oldest and the newest report (nil when there are none):
    /// two steps along the `created_at` index, not a scan.
    public func createdRange() throws -> ClosedRange<Date>? {
        try pool.read { db in
            // Two subqueries: SQLite takes one step along an index only for a lone min() or max().
            let row = try Row.fetchOne(db, sql: "SELECT (SELECT min(created_at) FROM report), (SELECT max(created_at) FROM report)")!
            guard let first: Int64 = row[0], let last: Int64 = row[1] else { return nil }
            return ReportRow.date(milliseconds: first)...ReportRow.date(milliseconds: last)
        }
    }
}
