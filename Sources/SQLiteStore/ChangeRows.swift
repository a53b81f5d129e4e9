import Foundation
import Geometry
import GRDB
import GRDBSQLite
import ReportModel
import StorePorts

extension SQLiteReports {
    /// Up to `limit` change rows after `seq`, oldest first, with the last sequence number
    /// and the retention mark as of the same read.
    public func changes(after seq: Int64, limit: Int) throws -> ChangeRows {
        try pool.read { db in
            ChangeRows(rows: try Self.changeRows(db, after: seq, limit: limit), lastSeq: try Self.lastChange(db), prunedThrough: try Self.prunedThrough(db))
        }
    }

    /// The same page with the current row of each report the changes name (none for one
    /// hidden, deleted, or a phone's change), read in one join: a feed page's reports cost
    /// one index step each rather than a second query.
    public func changesWithReports(after seq: Int64, limit: Int) throws -> (changes: ChangeRows, reports: [Int64: Report]) {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT \(ReportRow.columns.split(separator: ",").map { "r." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")),
                       c.seq, c.action, c.report_id, c.at, c.history_seq, c.phone
                FROM report_change c LEFT JOIN report r ON r.id = c.report_id AND c.report_id > 0
                WHERE c.seq > ? ORDER BY c.seq LIMIT ?
                """)
            try statement.setArguments([seq, limit])
            var rows: [ChangeRow] = [], reports: [Int64: Report] = [:]
            rows.reserveCapacity(min(limit, 10_000))
            var decoder = ReportRow.Decoder()
            try db.forEachRow(statement) { s in
                let action = String(cString: sqlite3_column_text(s, 15))
                rows.append(ChangeRow(
                    seq: sqlite3_column_int64(s, 14), action: ReportAction(rawValue: action) ?? .edited, reportID: sqlite3_column_int64(s, 16),
                    at: ReportRow.date(milliseconds: sqlite3_column_int64(s, 17)),
                    historySeq: sqlite3_column_type(s, 18) == SQLITE_NULL ? nil : sqlite3_column_int64(s, 18),
                    phone: sqlite3_column_type(s, 19) == SQLITE_NULL ? nil : String(cString: sqlite3_column_text(s, 19))))
                if sqlite3_column_type(s, 0) != SQLITE_NULL, reports[sqlite3_column_int64(s, 0)] == nil {
                    let report = decoder.decode(s)
                    reports[report.id] = report
                }
                return true
            }
            return (ChangeRows(rows: rows, lastSeq: try Self.lastChange(db), prunedThrough: try Self.prunedThrough(db)), reports)
        }
    }

    static func changeRows(_ db: Database, after seq: Int64, limit: Int) throws -> [ChangeRow] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT \(changeColumns) FROM report_change WHERE seq > ? ORDER BY seq LIMIT ?"), arguments: [seq, limit]
        ).map(changeRow)
    }

    /// The change rows of these sequence numbers that are still kept, in order.
    public func changes(seqs: some Collection<Int64>) throws -> [ChangeRow] {
        guard !seqs.isEmpty else { return [] }
        return try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.changeColumns) FROM report_change WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq",
                arguments: [Self.jsonList(seqs)]
            ).map(Self.changeRow)
        }
    }

    private static let changeColumns = "seq, action, report_id, at, history_seq, phone"

    private static func changeRow(_ row: Row) -> ChangeRow {
        ChangeRow(
            seq: row[0], action: ReportAction(rawValue: row[1]) ?? .edited, reportID: row[2],
            at: ReportRow.date(milliseconds: row[3]), historySeq: row[4], phone: row[5])
    }

    /// The highest change sequence number handed out so far (0 before the first write).
    public func lastChange() throws -> Int64 {
        try pool.read { db in try Self.lastChange(db) }
    }

    public func changeLogName() throws -> String {
        guard let name = try pool.read({ db in try String.fetchOne(db, sql: "SELECT name FROM change_log_name") }), !name.isEmpty else { throw ChangeLogUnnamed() }
        return name
    }

    /// How often ``nextChange(after:timeout:)`` looks at the last number: SQLite tells no
    /// one of another process's commits.
    public static let changePoll = Duration.milliseconds(50)

    public func nextChange(after seq: Int64, timeout: Duration) async throws -> Int64 {
        let deadline = ContinuousClock.now + timeout
        while true {
            let last = try lastChange()
            let left = deadline - ContinuousClock.now
            if last > seq || left <= .zero { return last }
            try await Task.sleep(for: min(Self.changePoll, left))
        }
    }

    static func lastChange(_ db: Database) throws -> Int64 {
        // AUTOINCREMENT's own record: the highest number ever used, even once pruned.
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM sqlite_sequence WHERE name = 'report_change'")) ?? 0
    }

    static func prunedThrough(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT through FROM report_change_pruned")) ?? 0
    }

    /// Forgets the changes made before `cutoff` (the oldest ones, so what is kept is
    /// always every change after a sequence number); returns how many.
    @discardableResult
    public func forgetChanges(before cutoff: Date) throws -> Int {
        try pool.write { db in
            guard let through = try Int64.fetchOne(
                db, sql: "SELECT max(seq) FROM report_change WHERE at < ?", arguments: [ReportRow.milliseconds(cutoff)])
            else { return 0 }
            try db.execute(sql: "DELETE FROM report_change WHERE seq <= ?", arguments: [through])
            let forgotten = db.changesCount
            try db.execute(sql: "UPDATE report_change_pruned SET through = max(through, ?)", arguments: [through])
            return forgotten
        }
    }

    /// Hidden reports by id (those that are hidden).
    public func hidden(ids: some Collection<Int64>) throws -> [Int64: HiddenReport] {
        guard !ids.isEmpty else { return [:] }
        return try pool.read { db in
            let found = try Int64.fetchAll(db, sql: "SELECT id FROM report_hidden WHERE id IN (SELECT value FROM json_each(?))", arguments: [Self.jsonList(ids)])
            return Dictionary(uniqueKeysWithValues: try found.compactMap { try Self.hidden(db, id: $0) }.map { ($0.report.id, $0) })
        }
    }

    /// The accounts that filed these reports, by report id (reports a person filed).
    public func filers(of ids: some Collection<Int64>) throws -> [Int64: Int64] {
        guard !ids.isEmpty else { return [:] }
        return try pool.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT report_id, account_id FROM report_filer WHERE report_id IN (SELECT value FROM json_each(?))",
                arguments: [Self.jsonList(ids)])
            return Dictionary(rows.map { ($0[0], $0[1]) }, uniquingKeysWith: { a, _ in a })
        }
    }
}

extension WriteTransaction {
    /// Up to `limit` change rows after `seq`, oldest first, as this transaction sees them
    /// (what other processes committed included).
    public func changes(after seq: Int64, limit: Int) throws -> [ChangeRow] {
        try SQLiteReports.changeRows(db, after: seq, limit: limit)
    }

    /// Changes up to this sequence number have been forgotten (0: none).
    public func prunedThrough() throws -> Int64 {
        try SQLiteReports.prunedThrough(db)
    }

    /// The markers of those of these reports that are on the map (hidden and deleted ones
    /// are not), made by `make` as ``SQLiteReports/markers(_:)`` makes them.
    public func markers<Marker>(ids: some Collection<Int64>, _ make: (_ id: Int64, _ coordinate: Coordinate, _ status: Int, _ createdAt: Int64) -> Marker) throws -> [Marker] {
        guard !ids.isEmpty else { return [] }
        let statement = try db.cachedStatement(
            sql: "SELECT id, longitude, latitude, status, created_at FROM report WHERE id IN (SELECT value FROM json_each(?))")
        try statement.setArguments([SQLiteReports.jsonList(ids)])
        var result: [Marker] = []
        try SQLiteReports.forEachMarker(db, statement, reference) { result.append(make($0, $1, $2, $3)) }
        return result
    }
}
