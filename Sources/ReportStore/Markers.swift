import GRDB
import GRDBSQLite
import Geometry
import ReportModel

/// What a map index needs of a report: where it is, its status and when it was made.
public struct ReportMarker: Sendable, Hashable {
    public var id: Int64
    public var coordinate: Coordinate
    /// The status's position in ``ReferenceData/statuses``.
    public var status: Int
    /// Creation time in milliseconds since 1970.
    public var createdAt: Int64

    public init(id: Int64, coordinate: Coordinate, status: Int, createdAt: Int64) {
        self.id = id
        self.coordinate = coordinate
        self.status = status
        self.createdAt = createdAt
    }
}

extension ReportStore {
    /// Every report's marker, in the table's order (by place), read in one pass of the
    /// table with SQLite's column API: the start-up load of the cluster index.
    public func markers() throws -> [ReportMarker] {
        let codes = reference.statuses.map { Array($0.code.utf8) }
        return try pool.read { db in
            var result: [ReportMarker] = []
            result.reserveCapacity(try Self.reportCount(db))
            let statement = try db.makeStatement(sql: "SELECT id, longitude, latitude, status, created_at FROM report")
            try db.forEachRow(statement) { s in
                let bytes = UnsafeBufferPointer(
                    start: sqlite3_column_blob(s, 3)?.assumingMemoryBound(to: UInt8.self), count: Int(sqlite3_column_bytes(s, 3)))
                // The status column references the status table, so one code matches.
                let status = codes.firstIndex { $0.elementsEqual(bytes) } ?? 0
                result.append(ReportMarker(
                    id: sqlite3_column_int64(s, 0),
                    coordinate: Coordinate(longitude: sqlite3_column_double(s, 1), latitude: sqlite3_column_double(s, 2)),
                    status: status, createdAt: sqlite3_column_int64(s, 4)))
                return true
            }
            return result
        }
    }

    /// The reports with these ids, in the order given; ids without a report are left out.
    public func reports(ids: some Collection<Int64>) throws -> [Report] {
        try pool.read { db in try Self.fetch(db, ids: ids) }
    }
}

extension Report {
    /// This report's marker, its status numbered by `reference` (nil for an unknown status).
    public func marker(statuses reference: ReferenceData) -> ReportMarker? {
        guard let status = reference.statuses.firstIndex(where: { $0.code == self.status }) else { return nil }
        return ReportMarker(id: id, coordinate: coordinate, status: status, createdAt: ReportRow.milliseconds(createdAt))
    }
}
