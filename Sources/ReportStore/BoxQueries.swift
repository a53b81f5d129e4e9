import GRDB
import GRDBSQLite
import Geometry
import ReportModel

/// Reports inside a bounding box.
///
/// The R*Tree answers with candidates whose 32-bit boxes (rounded outward, so a superset)
/// meet the query box. A candidate whose float box lies wholly inside the query box is
/// inside for certain; only those on the box's edge are checked against the exact
/// doubles of the table. The answer is exactly the reports inside the box, edges
/// included. A box across the antimeridian is answered as its two parts, which share
/// nothing: longitudes 180 and -180 are distinct stored values.
extension ReportStore {
    /// Every report in the box, in ascending id order.
    public func reports(in box: BoundingBox) throws -> [Report] {
        try pool.read { db in
            let ids = try Self.ids(db, in: box, after: 0).sorted()
            return try Self.fetch(db, ids: ids)
        }
    }

    /// How many reports lie in the box.
    public func count(in box: BoundingBox) throws -> Int {
        try pool.read { db in
            try box.parts.reduce(0) { total, part in
                total + (try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM report_rtree t \(Self.boxWhere)", arguments: Self.boxArguments(part, after: 0)) ?? 0)
            }
        }
    }

    /// A page of the reports in the box, in ascending id order, starting after the id
    /// `after`: a cursor that stays valid while other reports come and go.
    ///
    /// The plans give the same answer; the cost decides. (1) Walk the ids in order (the
    /// narrow `report_by_id` index holds the positions),
    /// checking positions, for ``QueryTuning/boxWalkBudget`` rows: in a box holding a fair
    /// share of all reports this meets `limit` of them in a few hundred rows. (2) Else ask
    /// the R*Tree for the box's ids, at most ``QueryTuning/boxCollectLimit`` of them: a
    /// sparse box ends here, its ids sorted. (3) Else the box is dense after all, and the
    /// walk goes on, meeting `limit` reports within about `limit × total / collectLimit`
    /// more rows.
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
                var ids = try Self.ids(db, in: box, after: cursor, limit: tuning.boxCollectLimit + 1)
                if ids.count <= tuning.boxCollectLimit {
                    ids.sort()
                    found += ids.prefix(limit - found.count)
                } else {
                    _ = try walkOn(budget: .max)
                }
            }
            return try Self.fetch(db, ids: found)
        }
    }

    /// The ids of the reports in the box with ids above `after`, in index order, at most `limit`.
    static func ids(_ db: Database, in box: BoundingBox, after: Int64, limit: Int = .max) throws -> [Int64] {
        var ids: [Int64] = []
        let statement = try db.cachedStatement(sql: "SELECT t.id FROM report_rtree t \(boxWhere)")
        for part in box.parts where ids.count < limit {
            try statement.setArguments(boxArguments(part, after: after))
            try db.forEachRow(statement) { s in
                ids.append(sqlite3_column_int64(s, 0))
                return ids.count < limit
            }
        }
        return ids
    }

    /// The R*Tree filter; then certain for candidates wholly inside, and checked against
    /// the table's exact coordinates for those on the edge. Arguments: ``boxArguments(_:after:)``.
    static let boxWhere = """
        WHERE t.min_lon <= ?3 AND t.max_lon >= ?1 AND t.min_lat <= ?4 AND t.max_lat >= ?2 AND t.id > ?5
        AND ((t.min_lon >= ?1 AND t.max_lon <= ?3 AND t.min_lat >= ?2 AND t.max_lat <= ?4)
             OR EXISTS (SELECT 1 FROM report r WHERE r.id = t.id
                        AND r.longitude BETWEEN ?1 AND ?3 AND r.latitude BETWEEN ?2 AND ?4))
        """

    /// west, south, east, north of a box that does not cross the antimeridian, and the id cursor.
    static func boxArguments(_ part: BoundingBox, after: Int64) -> StatementArguments {
        [part.west, part.south, part.east, part.north, after]
    }

    /// The reports with these ids, in the order given.
    static func fetch(_ db: Database, ids: some Collection<Int64>) throws -> [Report] {
        guard !ids.isEmpty else { return [] }
        let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
        let reports = try ReportRow.fetchAll(
            db, sql: "SELECT \(ReportRow.columns) FROM report WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
            arguments: [list])
        if reports.count == ids.count && zip(reports, ids).allSatisfy({ $0.id == $1 }) { return reports }
        let byID = Dictionary(uniqueKeysWithValues: reports.map { ($0.id, $0) })
        return ids.compactMap { byID[$0] }
    }
}
