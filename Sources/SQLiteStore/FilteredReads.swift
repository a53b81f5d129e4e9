import Foundation
import Geometry
import GRDB
import ReportModel

/// Reports by a ``ReportFilter``, in id order, read with the filter in SQL (bound
/// parameters only) along the id index: a scan of the table from the cursor, cheap per
/// row, that suits exports (which read everything anyway, a page at a time, each page in
/// its own short transaction) and filtered listings.
extension SQLiteReports {
    /// Up to `limit` matching reports with ids above `after`, in id order.
    ///
    /// A box that holds few reports is read through the R*Tree: its ids, then the matching
    /// rows among them. Any other filter is a scan along the id index, which meets a match
    /// every few rows when the box holds many. "Few" is where the two costs meet: listing
    /// `n` ids costs about `n`, scanning for `limit` matches about `limit × total / n`
    /// rows, even at `n = √(limit × total)` (at least 1,000).
    public func reports(matching filter: ReportFilter, after: Int64 = 0, limit: Int) throws -> [Report] {
        guard limit > 0 else { return [] }
        return try pool.read { db in
            let few = max(Int((Double(limit) * Double(try Self.reportCount(db))).squareRoot()), 1_000)
            if let box = filter.box, let ids = try Self.ids(db, in: box, cap: few) {
                var found: [Report] = []
                var rest = ids[Self.firstIndex(in: ids, above: after)...]
                while found.count < limit, !rest.isEmpty {
                    let chunk = rest.prefix(max(limit - found.count, 256))
                    rest = rest.dropFirst(chunk.count)
                    found += try Self.fetch(db, among: chunk, matching: filter).prefix(limit - found.count)
                }
                return found
            }
            return try Self.scan(db, matching: filter, after: after, limit: limit)
        }
    }

    /// Up to `limit` matching reports with ids above `after`, read along the id index
    /// (for a box already known to hold many).
    public func scan(matching filter: ReportFilter, after: Int64, limit: Int) throws -> [Report] {
        try pool.read { db in try Self.scan(db, matching: filter, after: after, limit: limit) }
    }

    static func scan(_ db: Database, matching filter: ReportFilter, after: Int64, limit: Int) throws -> [Report] {
        // The id index, always: left to itself SQLite takes the time index for the
        // (often unbounded) time range and sorts the whole table for every page.
        var arguments = filterArguments(filter)
        arguments += ["after": after, "limit": limit]
        return try ReportRow.fetchAll(
            db, sql: "SELECT \(ReportRow.columns) FROM report INDEXED BY report_id WHERE id > :after AND \(filterWhere) ORDER BY id LIMIT :limit",
            arguments: arguments)
    }

    /// The ids of the reports in the box, ascending, from the R*Tree; nil when there are
    /// more than `cap` (a box that holds that many is cheaper to scan for).
    public func ids(in box: BoundingBox, cap: Int) throws -> [Int64]? {
        try pool.read { db in try Self.ids(db, in: box, cap: cap) }
    }

    /// Those of the reports with these ids (ascending) that match the filter, in id order.
    public func reports(among ids: some Collection<Int64>, matching filter: ReportFilter) throws -> [Report] {
        try pool.read { db in try Self.fetch(db, among: ids, matching: filter) }
    }

    static func ids(_ db: Database, in box: BoundingBox, cap: Int) throws -> [Int64]? {
        let keys = try keys(db, in: box, limit: cap + 1)
        return keys.count > cap ? nil : keys.map(ReportRow.id(key:)).sorted()
    }

    /// The position of the first id above `id` in ascending `ids`.
    static func firstIndex(in ids: [Int64], above id: Int64) -> Int {
        var (low, high) = (0, ids.count)
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] > id { high = middle } else { low = middle + 1 }
        }
        return low
    }

    static func fetch(_ db: Database, among ids: some Collection<Int64>, matching filter: ReportFilter) throws -> [Report] {
        guard !ids.isEmpty else { return [] }
        var arguments = filterArguments(filter)
        arguments += ["ids": jsonList(ids)]
        return try ReportRow.fetchAll(
            db, sql: "SELECT \(ReportRow.columns) FROM report WHERE id IN (SELECT value FROM json_each(:ids)) AND \(filterWhere) ORDER BY id",
            arguments: arguments)
    }

    /// How many of the reports with these ids match (e.g. those a map index could not place
    /// exactly on either side of a box's edge).
    public func count(matching filter: ReportFilter, ids: [Int64]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try pool.read { db in
            var arguments = Self.filterArguments(filter)
            arguments += ["ids": Self.jsonList(ids)]
            return try Int.fetchOne(
                db, sql: "SELECT count(*) FROM report WHERE id IN (SELECT value FROM json_each(:ids)) AND \(Self.filterWhere)",
                arguments: arguments) ?? 0
        }
    }

    /// The filter's conditions. Arguments: ``filterArguments(_:)``.
    static let filterWhere = """
        (:statuses IS NULL OR status IN (SELECT value FROM json_each(:statuses))) \
        AND (:objectTypes IS NULL OR object_type IN (SELECT value FROM json_each(:objectTypes))) \
        AND (CASE :assigneeMode WHEN 0 THEN 1 \
             WHEN 1 THEN NOT EXISTS (SELECT 1 FROM assignment a WHERE a.report_id = report.id AND a.ended_at IS NULL) \
             ELSE EXISTS (SELECT 1 FROM assignment a WHERE a.report_id = report.id AND a.ended_at IS NULL AND a.account_id = :assignee) END) \
        AND created_at BETWEEN :createdFrom AND :createdTo \
        AND latitude BETWEEN :south AND :north \
        AND (CASE WHEN :west <= :east THEN longitude BETWEEN :west AND :east ELSE (longitude >= :west OR longitude <= :east) END)
        """

    static func filterArguments(_ filter: ReportFilter) -> StatementArguments {
        let box = filter.box ?? .world
        let (assigneeMode, assignee): (Int, Int64?) = switch filter.assignee {
        case nil: (0, nil)
        case .unassigned?: (1, nil)
        case .account(let id)?: (2, id)
        }
        // Encoding strings as JSON cannot fail.
        func list(_ codes: [String]?) -> String? { codes.map { try! jsonList(strings: $0) } }
        return [
            "statuses": list(filter.statuses), "objectTypes": list(filter.objectTypes), "assigneeMode": assigneeMode, "assignee": assignee, "createdFrom": filter.created?.lowerBound ?? .min, "createdTo": filter.created?.upperBound ?? .max,
            "south": box.south, "north": box.north, "west": box.west, "east": box.east,
        ]
    }
}
