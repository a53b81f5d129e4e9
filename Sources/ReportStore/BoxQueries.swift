import GRDB
import Geometry
import ReportModel

/// Reports inside a bounding box.
///
/// Every query first asks the R*Tree for candidates (32-bit boxes rounded outward, so a
/// superset) and keeps those whose exact coordinates lie in the box, edges included.
/// A box across the antimeridian is answered as its two parts, which never overlap
/// except on the 180° meridian itself, where longitudes 180 and -180 are distinct values.
extension ReportStore {
    /// Every report in the box, in index order (fastest; no ordering promised).
    public func reports(in box: BoundingBox) throws -> [Report] {
        try pool.read { db in
            var result: [Report] = []
            for part in box.parts {
                result += try ReportRow.fetchAll(db, sql: "\(Self.boxSelect) \(Self.boxWhere)", arguments: Self.boxArguments(part))
            }
            return result
        }
    }

    /// How many reports lie in the box.
    public func count(in box: BoundingBox) throws -> Int {
        try pool.read { db in
            try box.parts.reduce(0) { total, part in
                total + (try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM report_rtree t CROSS JOIN report r ON r.id = t.id \(Self.boxWhere)",
                    arguments: Self.boxArguments(part)) ?? 0)
            }
        }
    }

    /// A page of the reports in the box, in ascending id order, starting after the id
    /// `after` (a cursor that stays valid while other reports are added or removed).
    ///
    /// Two plans give the same answer, and the cheaper one is chosen as it goes: the
    /// R*Tree collects the box's reports when there are few of them (up to
    /// ``QueryTuning/boxCollectLimit``); when there are more, the box is dense, and walking the
    /// table in id order finds `limit` of them after about `limit × total / inBox` rows.
    public func page(in box: BoundingBox, after: Int64? = nil, limit: Int) throws -> [Report] {
        precondition(limit >= 0)
        guard limit > 0 else { return [] }
        let after = after ?? 0
        let tuning = self.tuning
        return try pool.read { db in
            var ids: [Int64] = []
            for part in box.parts {
                let found = try Int64.fetchAll(
                    db, sql: "SELECT t.id FROM report_rtree t CROSS JOIN report r ON r.id = t.id \(Self.boxWhere) AND t.id > ? LIMIT ?",
                    arguments: Self.boxArguments(part) + [after, tuning.boxCollectLimit - ids.count + 1])
                ids += found
                if ids.count > tuning.boxCollectLimit { break }
            }
            if ids.count <= tuning.boxCollectLimit {
                ids.sort()
                return try Self.fetch(db, ids: ids.prefix(limit))
            }
            // Dense box: walk the table by id, checking the exact box.
            var result: [Report] = []
            for part in box.parts {
                result += try ReportRow.fetchAll(
                    db, sql: """
                        SELECT \(ReportRow.columns) FROM report WHERE id > ?
                        AND longitude BETWEEN ? AND ? AND latitude BETWEEN ? AND ? ORDER BY id LIMIT ?
                        """, arguments: [after, part.west, part.east, part.south, part.north, limit])
            }
            if box.parts.count > 1 { result.sort { $0.id < $1.id } }
            return Array(result.prefix(limit))
        }
    }


    static let boxSelect = "SELECT \(ReportRow.columns("r")) FROM report_rtree t CROSS JOIN report r ON r.id = t.id"

    /// The R*Tree filter and the exact check; arguments from ``boxArguments(_:)``.
    static let boxWhere = """
        WHERE t.min_lon <= ?3 AND t.max_lon >= ?1 AND t.min_lat <= ?4 AND t.max_lat >= ?2 \
        AND r.longitude BETWEEN ?1 AND ?3 AND r.latitude BETWEEN ?2 AND ?4
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
}
