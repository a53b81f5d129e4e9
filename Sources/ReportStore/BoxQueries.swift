import GRDB
import GRDBSQLite
import Geometry
import ReportModel

/// Reports inside a bounding box.
///
/// The R*Tree answers with the storage keys of candidates whose 32-bit boxes (rounded
/// outward, so a superset) meet the query box. A candidate whose float box lies wholly
/// inside the query box is inside for certain; only those on the box's edge are checked
/// against the exact doubles of the table. A box across the antimeridian is answered as
/// its two parts, which share nothing: longitudes 180 and -180 are distinct stored values.
///
/// The rows themselves are read in key order: the table is laid out by the Morton code
/// of each report's zoom-16 cell, so the reports of one cell are one short range of the
/// table, read in a single pass instead of a lookup per report.
extension ReportStore {
    /// Every report in the box, in storage order (by zoom-16 cell, then id).
    public func reports(in box: BoundingBox) throws -> [Report] {
        try pool.read { db in
            try Self.fetchClustered(db, keys: Self.keys(db, in: box).sorted(), in: box)
        }
    }

    /// How many reports lie in the box.
    public func count(in box: BoundingBox) throws -> Int {
        try pool.read { db in
            try box.parts.reduce(0) { total, part in
                total + (try Int.fetchOne(db, sql: "SELECT count(*) FROM report_rtree t \(Self.boxWhere)", arguments: Self.boxArguments(part)) ?? 0)
            }
        }
    }

    /// A page of the reports in the box, in ascending id order, starting after the id
    /// `after`: a cursor that stays valid while other reports come and go.
    ///
    /// The plans give the same answer; the cost decides. (1) Walk the ids in order (the
    /// narrow `report_by_id` index holds the positions), checking positions, for
    /// ``QueryTuning/boxWalkBudget`` rows: in a box holding a fair share of all reports
    /// this meets `limit` of them in a few hundred rows. (2) Else ask the R*Tree for the
    /// box's keys, at most ``QueryTuning/boxCollectLimit`` of them: a sparse box ends
    /// here, its ids sorted. (3) Else the box is dense after all, and the walk goes on,
    /// meeting `limit` reports within about `limit × total / collectLimit` more rows.
    public func page(in box: BoundingBox, after: Int64? = nil, limit: Int) throws -> [Report] {
        guard limit > 0 else { return [] }
        let tuning = self.tuning
        return try pool.read { db in
            var found: [Int64] = []
            var cursor = after ?? 0
            let walk = try db.cachedStatement(sql: "SELECT id, longitude, latitude FROM report INDEXED BY report_by_id WHERE id > ? ORDER BY id")
            /// Walks on from `cursor`, at most `budget` rows; false when the table ended first.
            func walkOn(budget: Int) throws -> Bool {
                try walk.setArguments([cursor])
                var walked = 0, stopped = false
                try db.forEachRow(walk) { s in
                    walked += 1
                    cursor = sqlite3_column_int64(s, 0)
                    if box.contains(Coordinate(longitude: sqlite3_column_double(s, 1), latitude: sqlite3_column_double(s, 2))) {
                        found.append(cursor)
                    }
                    stopped = found.count == limit || walked == budget
                    return !stopped
                }
                return stopped
            }
            if try walkOn(budget: tuning.boxWalkBudget), found.count < limit {
                let keys = try Self.keys(db, in: box, limit: tuning.boxCollectLimit + 1)
                if keys.count <= tuning.boxCollectLimit {
                    let ids = keys.lazy.map(ReportRow.id(key:)).filter { $0 > cursor }.sorted()
                    found += ids.prefix(limit - found.count)
                } else {
                    _ = try walkOn(budget: .max)
                }
            }
            return try Self.fetch(db, ids: found)
        }
    }

    /// The storage keys of the reports in the box, in R*Tree order, at most `limit`.
    static func keys(_ db: Database, in box: BoundingBox, limit: Int = .max) throws -> [Int64] {
        var keys: [Int64] = []
        let statement = try db.cachedStatement(sql: "SELECT t.key FROM report_rtree t \(boxWhere)")
        for part in box.parts where keys.count < limit {
            try statement.setArguments(boxArguments(part))
            try db.forEachRow(statement) { s in
                keys.append(sqlite3_column_int64(s, 0))
                return keys.count < limit
            }
        }
        return keys
    }

    /// The R*Tree filter; then certain for candidates wholly inside, and checked against
    /// the table's exact coordinates for those on the edge. Arguments: ``boxArguments(_:)``.
    static let boxWhere = """
        WHERE t.min_lon <= ?3 AND t.max_lon >= ?1 AND t.min_lat <= ?4 AND t.max_lat >= ?2
        AND ((t.min_lon >= ?1 AND t.max_lon <= ?3 AND t.min_lat >= ?2 AND t.max_lat <= ?4)
             OR EXISTS (SELECT 1 FROM report r WHERE r.key = t.key
                        AND r.longitude BETWEEN ?1 AND ?3 AND r.latitude BETWEEN ?2 AND ?4))
        """

    /// west, south, east, north of a box that does not cross the antimeridian.
    static func boxArguments(_ part: BoundingBox) -> StatementArguments {
        [part.west, part.south, part.east, part.north]
    }

    /// The reports with these ids, in the order given.
    static func fetch(_ db: Database, ids: some Collection<Int64>) throws -> [Report] {
        guard !ids.isEmpty else { return [] }
        let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
        let reports = try ReportRow.fetchAll(
            db, sql: "SELECT \(ReportRow.columns) FROM report WHERE id IN (SELECT value FROM json_each(?))", arguments: [list])
        let byID = Dictionary(uniqueKeysWithValues: reports.map { ($0.id, $0) })
        return ids.compactMap { byID[$0] }
    }

    /// The reports with these storage keys (ascending), read as one range per zoom-16
    /// cell; rows of a range that lie outside `box` are passed over.
    static func fetchClustered(_ db: Database, keys: [Int64], in box: BoundingBox) throws -> [Report] {
        var result: [Report] = []
        result.reserveCapacity(keys.count)
        let range = try db.cachedStatement(sql: "SELECT \(ReportRow.columns) FROM report WHERE key BETWEEN ? AND ?")
        var start = 0
        while start < keys.count {
            let cell = keys[start] >> 31
            var end = start + 1
            while end < keys.count && keys[end] >> 31 == cell { end += 1 }
            try range.setArguments([keys[start], keys[end - 1]])
            try db.forEachRow(range) { s in
                if box.contains(Coordinate(longitude: sqlite3_column_double(s, 1), latitude: sqlite3_column_double(s, 2))) {
                    result.append(ReportRow.decode(s))
                }
                return true
            }
            start = end
        }
        return result
    }
}
