import Foundation
import GRDB
import ReportModel

extension SQLiteReports {
    /// The record of a normalized number, or nil when no report carries it and nobody
    /// ever changed its status.
    public func phoneRecord(_ number: String) throws -> PhoneRecord? {
        try pool.read { db in
            let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT status, changed_at, blocked_at FROM phone WHERE number = ?"), arguments: [number])
            let reports = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT r.status, r.district, r.violator, r.created_at FROM report_phone p JOIN report r ON r.id = p.report_id WHERE p.phone = ?
                    """),
                arguments: [number])
            return PhoneRecord(
                number: number,
                stored: row.map { (PhoneStatus(rawValue: $0[0]) ?? .unverified, ReportRow.date(milliseconds: $0[1]), ($0[2] as Int64?).map(ReportRow.date(milliseconds:))) },
                sightings: reports.map { PhoneRecord.Sighting(status: $0[0], district: $0[1], violator: $0[2], createdAt: $0[3]) },
                reference: reference, history: try Self.phoneHistory(db, number))
        }
    }

    static func phoneHistory(_ db: Database, _ number: String) throws -> [PhoneHistoryEntry] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT * FROM (SELECT * FROM phone_history WHERE number = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq"),
            arguments: [number, PhoneRecord.maxHistory]
        ).map(phoneHistoryEntry)
    }

    static func phoneHistoryEntry(_ row: Row) -> PhoneHistoryEntry {
        PhoneHistoryEntry(
            seq: row["seq"], number: row["number"], at: ReportRow.date(milliseconds: row["at"]),
            author: Author(accountID: row["account_id"], apiKeyID: row["api_key_id"]), action: PhoneAction(rawValue: row["action"]) ?? .verified,
            fromStatus: PhoneStatus(rawValue: row["from_status"]) ?? .unverified, toStatus: PhoneStatus(rawValue: row["to_status"]) ?? .unverified,
            note: row["note"], moved: row["moved"])
    }

    /// Phone history rows by their numbers (those that exist).
    public func phoneHistory(seqs: some Collection<Int64>) throws -> [Int64: PhoneHistoryEntry] {
        guard !seqs.isEmpty else { return [:] }
        return try pool.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM phone_history WHERE seq IN (SELECT value FROM json_each(?))", arguments: [Self.jsonList(seqs)])
            return Dictionary(uniqueKeysWithValues: rows.map(Self.phoneHistoryEntry).map { ($0.seq, $0) })
        }
    }

    /// The statuses of these numbers (`unverified` for those without a record).
    public func phoneStatuses(_ numbers: some Collection<String>) throws -> [String: PhoneStatus] {
        guard !numbers.isEmpty else { return [:] }
        return try pool.read { db in try Self.phoneStatuses(db, numbers) }
    }

    static func phoneStatuses(_ db: Database, _ numbers: some Collection<String>) throws -> [String: PhoneStatus] {
        var statuses = Dictionary(numbers.map { ($0, PhoneStatus.unverified) }, uniquingKeysWith: { a, _ in a })
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT number, status FROM phone WHERE number IN (SELECT value FROM json_each(?))"),
            arguments: [try jsonList(strings: Array(statuses.keys))])
        {
            statuses[row[0]] = PhoneStatus(rawValue: row[1]) ?? .unverified
        }
        return statuses
    }

    /// A page of the public reports that carry a number, in id order after the cursor,
    /// and how many there are in all.
    public func reports(carrying number: String, after: Int64, limit: Int) throws -> (reports: [Report], matched: Int) {
        try pool.read { db in
            let ids = try Int64.fetchAll(
                db.cachedStatement(sql: "SELECT report_id FROM report_phone WHERE phone = ? AND report_id > ? ORDER BY report_id LIMIT ?"),
                arguments: [number, after, limit])
            let matched = try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM report_phone WHERE phone = ?"), arguments: [number]) ?? 0
            let found = Dictionary(try Self.fetch(db, ids: ids).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            return (ids.compactMap { found[$0] }, matched)
        }
    }

    /// Texts as a JSON array, for `json_each`.
    static func jsonList(strings: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(strings), as: UTF8.self)
    }

    /// How many numbers are blocked now.
    public func blockedCount() throws -> Int {
        try pool.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM phone WHERE status = 'blocked'")) ?? 0 }
    }

    /// Every number blocked now, in number order.
    public func blocklist() throws -> [BlockedPhone] {
        try pool.read { db in try Self.blocked(db, among: nil) }
    }

    /// The blocked numbers (all, or those among `numbers`), with their public report counts.
    private static func blocked(_ db: Database, among numbers: [String]?) throws -> [BlockedPhone] {
        let filter = numbers == nil ? "" : "AND p.number IN (SELECT value FROM json_each(?))"
        let arguments: StatementArguments = try numbers.map { [try jsonList(strings: $0)] } ?? []
        return try Row.fetchAll(
            db.cachedStatement(sql: """
                SELECT p.number, p.blocked_at, (SELECT count(*) FROM report_phone r WHERE r.phone = p.number)
                FROM phone p WHERE p.status = 'blocked' \(filter) ORDER BY p.number
                """),
            arguments: arguments
        ).map { BlockedPhone(number: $0[0], blockedAt: ReportRow.date(milliseconds: $0[1]), reportCount: $0[2]) }
    }

    /// The numbers blocked and unblocked after change `since`, each by its last change, as
    /// they stand now (a number blocked and unblocked since is removed), read with the
    /// last sequence number and the retention mark.
    public func blocklistChanges(since: Int64) throws -> BlocklistChanges {
        try pool.read { db in
            let changed = try String.fetchAll(
                db.cachedStatement(sql: """
                    SELECT DISTINCT phone FROM report_change WHERE seq > ? AND action IN ('phone_blocked', 'phone_unblocked') ORDER BY phone
                    """),
                arguments: [since])
            let added = try Self.blocked(db, among: changed)
            let blocked = Set(added.map(\.number))
            return BlocklistChanges(
                added: added, removed: changed.filter { !blocked.contains($0) }, lastSeq: try Self.lastChange(db), prunedThrough: try Self.prunedThrough(db))
        }
    }
}

extension WriteTransaction {
    /// A number's status now (`unverified` without a record).
    public func phoneStatus(_ number: String) throws -> PhoneStatus {
        try SQLiteReports.phoneStatuses(db, [number])[number] ?? .unverified
    }

    /// Whether any report, public or hidden, carries the number, or it has a record.
    public func knows(phone number: String) throws -> Bool {
        if try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM report_phone WHERE phone = ?) OR EXISTS (SELECT 1 FROM phone WHERE number = ?)"),
            arguments: [number, number]) == true
        { return true }
        // Hidden reports keep their phones as text; rare enough to scan.
        return try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM report_hidden WHERE ';' || phones || ';' LIKE '%;' || ? || ';%')"),
            arguments: [number]) == true
    }

    /// Sets a number's status and records the change: its history row and its change row.
    /// `moved` is how many reports the change moved.
    @discardableResult
    public func setPhoneStatus(
        _ number: String, to status: PhoneStatus, action: PhoneAction, note: String?, moved: Int = 0, author: Author, now: Date
    ) throws -> PhoneHistoryEntry {
        let from = try phoneStatus(number)
        let at = now.milliseconds
        if action.setsStatus {
            try db.cachedStatement(sql: """
                INSERT INTO phone (number, status, changed_at, blocked_at) VALUES (?1, ?2, ?3, CASE WHEN ?2 = 'blocked' THEN ?3 END)
                ON CONFLICT (number) DO UPDATE SET status = excluded.status, changed_at = excluded.changed_at, blocked_at = excluded.blocked_at
                """).execute(arguments: [number, status.rawValue, at])
        }
        try db.cachedStatement(sql: """
            INSERT INTO phone_history (number, at, account_id, api_key_id, action, from_status, to_status, note, moved)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [number, at, author.accountID, author.apiKeyID, action.rawValue, from.rawValue, status.rawValue, note, moved])
        let seq = db.lastInsertedRowID
        try db.cachedStatement(sql: "INSERT INTO report_change (report_id, action, at, history_seq, phone) VALUES (0, ?, ?, ?, ?)")
            .execute(arguments: [action.change.rawValue, at, seq, number])
        return PhoneHistoryEntry(
            seq: seq, number: number, at: ReportRow.date(milliseconds: at), author: author, action: action, fromStatus: from, toStatus: status,
            note: note, moved: moved)
    }

    /// The public reports in `status` that carry the number, each with all its phones.
    public func reports(carrying number: String, status: String) throws -> [Report] {
        try ReportRow.fetchAll(
            db, sql: """
                SELECT \(ReportRow.columns) FROM report WHERE id IN (SELECT report_id FROM report_phone WHERE phone = ? AND status = ?) ORDER BY id
                """,
            arguments: [number, status])
    }

    /// Which of these numbers are blocked now.
    public func blockedNumbers(among numbers: some Collection<String>) throws -> Set<String> {
        Set(try SQLiteReports.phoneStatuses(db, numbers).filter { $0.value == .blocked }.keys)
    }

    /// Moves a report to `status` as the consequence of a phone's change (a block or an
    /// unblock): its history row and change row as any step's.
    public func moveForPhone(_ report: Report, to status: String, note: String, author: Author, now: Date) throws -> (after: Report, historySeq: Int64) {
        try setStatus(of: report, to: status, note: note, author: author, now: now)
    }

    /// Remembers that a block moved these reports (by their steps' history rows).
    public func rememberBlockMoves(_ moves: [(reportID: Int64, historySeq: Int64)]) throws {
        let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO phone_block_move (report_id, history_seq) VALUES (?, ?)")
        for move in moves { try statement.execute(arguments: [move.reportID, move.historySeq]) }
    }

    /// Of these reports, those a block moved that nobody has moved since: their last step
    /// is still the one the block made.
    public func movedByBlock(_ ids: [Int64]) throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return Set(try Int64.fetchAll(
            db, sql: """
                SELECT m.report_id FROM phone_block_move m
                WHERE m.report_id IN (SELECT value FROM json_each(?))
                  AND m.history_seq = (SELECT max(h.seq) FROM report_history h WHERE h.report_id = m.report_id AND h.action = 'transition')
                """,
            arguments: [SQLiteReports.jsonList(ids)]))
    }

    /// Forgets what blocks moved of these reports.
    public func forgetBlockMoves(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try db.execute(sql: "DELETE FROM phone_block_move WHERE report_id IN (SELECT value FROM json_each(?))", arguments: [SQLiteReports.jsonList(ids)])
    }
}
