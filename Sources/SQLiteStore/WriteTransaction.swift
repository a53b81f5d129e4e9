import Foundation
import Geometry
import GRDB
import GRDBSQLite
import ReportModel
import StorePorts

/// The rows of writes, inside one transaction the caller owns (``SQLiteReports/commit(_:)``):
/// a report's row, its history row and its change row go in together or not at all.
///
/// Every recorded write moves `updated_at` forward by at least a millisecond, so that it
/// is a version: two writes never leave a report with the same `updated_at`.
public struct WriteTransaction: ReportTransaction {
    let db: Database
    public let reference: ReferenceData
    /// The reports whose rows the steps wrote (``takeReportsWritten()``).
    let written = ReportsWritten()

    final class ReportsWritten {
        var ids: [Int64] = []
    }

    public func takeReportsWritten() -> [Int64] {
        defer { written.ids.removeAll() }
        return written.ids
    }

    // MARK: Reports

    /// Stores a validated draft as a new report with the next id, status and times
    /// defaulted (`now`), and who filed it when it was a person.
    public func insert(_ draft: ReportDraft, filer: Int64?, author: Author, now: Date) throws -> Report {
        var d = draft
        let id = try d.id ?? nextID()
        d.id = id
        let created = ReportRow.milliseconds(d.createdAt ?? now), updated = d.updatedAt.map(ReportRow.milliseconds) ?? created
        let status = d.status ?? reference.initialStatus
        let statement = try db.cachedStatement(sql: """
            INSERT INTO report (key, id, longitude, latitude, address, city, district, object_type, balance_holder,
                                violator, phones, comment, status, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        do {
            try statement.execute(arguments: [
                ReportRow.key(d.coordinate, id: id), id, d.coordinate.longitude, d.coordinate.latitude, d.address, d.city, d.district,
                d.objectType, d.balanceHolder, d.violator, RowInserter.phoneText(d.phones), d.comment, status, created, updated,
            ])
        } catch let error as DatabaseError
            where [.SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY].contains(error.extendedResultCode)
        {
            // The key holds the id in its low bits: a taken key is a taken id at the same spot.
            throw ValidationError(field: "id", "report \(id) already exists")
        }
        if let filer {
            try db.execute(sql: "INSERT INTO report_filer VALUES (?, ?)", arguments: [id, filer])
        }
        // The row as stored, without reading it back: times are kept to the millisecond.
        let report = Report(
            id: id, coordinate: d.coordinate, address: d.address, city: d.city, district: d.district, objectType: d.objectType,
            balanceHolder: d.balanceHolder, violator: d.violator, phones: d.phones, comment: d.comment, status: status,
            createdAt: ReportRow.date(milliseconds: created), updatedAt: ReportRow.date(milliseconds: updated))
        try record(id, .filed, author: author, at: now, to: status)
        return report
    }

    /// The next report number: one past the highest ever handed out.
    private func nextID() throws -> Int64 {
        let last = try Int64.fetchOne(db.cachedStatement(sql: "SELECT last_id FROM report_sequence")) ?? 0
        guard last < ReportLimits.maxID else { throw ValidationError(field: "id", "every report number up to \(ReportLimits.maxID) is taken") }
        return last + 1
    }

    /// The stored report `id` (not hidden), or nil.
    public func report(_ id: Int64) throws -> Report? {
        try ReportRow.fetch(db, id: id)
    }

    /// A hidden report, or nil.
    public func hidden(_ id: Int64) throws -> HiddenReport? {
        try SQLiteReports.hidden(db, id: id)
    }

    /// The account that filed report `id`, when a person did.
    public func filer(of id: Int64) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT account_id FROM report_filer WHERE report_id = ?"), arguments: [id])
    }

    /// Replaces the fields of report `id` by those of a validated draft (keeping its id,
    /// status and creation time), recording each field that changed.
    public func edit(_ id: Int64, to draft: ReportDraft, author: Author, now: Date) throws -> (before: Report, after: Report) {
        guard let before = try report(id) else { throw ReportNotFound(id: id) }
        var d = draft
        d.status = before.status
        let changes = FieldChange.between(before, d)
        try db.execute(
            sql: """
                UPDATE report SET key = ?, longitude = ?, latitude = ?, address = ?, city = ?, district = ?, object_type = ?,
                balance_holder = ?, violator = ?, phones = ?, comment = ?, updated_at = ?
                WHERE id = ?
                """,
            arguments: [
                ReportRow.key(d.coordinate, id: id), d.coordinate.longitude, d.coordinate.latitude, d.address, d.city, d.district,
                d.objectType, d.balanceHolder, d.violator, RowInserter.phoneText(d.phones), d.comment, before.nextVersion(at: now), id,
            ])
        try record(id, .edited, author: author, at: now, changes: changes)
        return (before, try report(id)!)
    }

    /// Moves report `id` to `status`, with the note of the step.
    public func setStatus(_ id: Int64, to status: String, note: String?, author: Author, now: Date) throws -> (before: Report, after: Report) {
        guard let before = try report(id) else { throw ReportNotFound(id: id) }
        let (after, _) = try setStatus(of: before, to: status, note: note, author: author, now: now)
        return (before, after)
    }

    /// Moves a report read in this transaction to `status`; returns it as stored and the
    /// number of the history row of the step.
    func setStatus(of before: Report, to status: String, note: String?, author: Author, now: Date) throws -> (after: Report, historySeq: Int64) {
        var after = before
        after.status = status
        after.updatedAt = ReportRow.date(milliseconds: before.nextVersion(at: now))
        try db.cachedStatement(sql: "UPDATE report SET status = ?, updated_at = ? WHERE id = ?")
            .execute(arguments: [status, after.updatedAt.milliseconds, before.id])
        let seq = try record(before.id, .transition, author: author, at: now, from: before.status, to: status, note: note)
        return (after, seq)
    }

    /// Takes report `id` out of every public answer (its row moves to `report_hidden`).
    public func hide(_ id: Int64, note: String, author: Author, now: Date) throws -> Report {
        guard let before = try report(id) else { throw ReportNotFound(id: id) }
        try db.execute(
            sql: """
                INSERT INTO report_hidden (id, key, longitude, latitude, address, city, district, object_type, balance_holder,
                                           violator, phones, comment, status, created_at, updated_at, hidden_at, hide_note)
                SELECT id, key, longitude, latitude, address, city, district, object_type, balance_holder,
                       violator, phones, comment, status, created_at, ?, ?, ? FROM report WHERE id = ?
                """,
            arguments: [before.nextVersion(at: now), ReportRow.milliseconds(now), note, id])
        try db.execute(sql: "DELETE FROM report WHERE id = ?", arguments: [id])
        try record(id, .hidden, author: author, at: now, note: note)
        return before
    }

    /// Brings a hidden report back into the public answers.
    public func unhide(_ id: Int64, note: String?, author: Author, now: Date) throws -> Report {
        guard let hidden = try hidden(id) else { throw ReportNotFound(id: id) }
        try db.execute(
            sql: """
                INSERT INTO report (key, id, longitude, latitude, address, city, district, object_type, balance_holder,
                                    violator, phones, comment, status, created_at, updated_at)
                SELECT key, id, longitude, latitude, address, city, district, object_type, balance_holder,
                       violator, phones, comment, status, created_at, ? FROM report_hidden WHERE id = ?
                """,
            arguments: [hidden.report.nextVersion(at: now), id])
        try db.execute(sql: "DELETE FROM report_hidden WHERE id = ?", arguments: [id])
        try record(id, .unhidden, author: author, at: now, note: note)
        return try report(id)!
    }

    /// Deletes report `id` (hidden or not) and what refers to it but its history.
    public func delete(_ id: Int64, author: Author, now: Date) throws -> Report {
        guard let before = try report(id) ?? hidden(id)?.report else { throw ReportNotFound(id: id) }
        try db.execute(sql: "DELETE FROM report WHERE id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM report_hidden WHERE id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM report_filer WHERE report_id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM report_photo WHERE report_id = ?", arguments: [id])
        try record(id, .deleted, author: author, at: now)
        return before
    }

    // MARK: History and changes

    /// Appends the history row and the change row of a write; returns the history row's number.
    @discardableResult
    func record(
        _ id: Int64, _ action: ReportAction, author: Author, at now: Date,
        from: String? = nil, to: String? = nil, note: String? = nil, changes: [FieldChange] = []
    ) throws -> Int64 {
        let at = ReportRow.milliseconds(now)
        let changesText = changes.isEmpty ? nil : String(decoding: try JSONEncoder().encode(changes), as: UTF8.self)
        written.ids.append(id)
        try db.cachedStatement(sql: """
            INSERT INTO report_history (report_id, at, account_id, api_key_id, action, from_status, to_status, note, changes)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [id, at, author.accountID, author.apiKeyID, action.rawValue, from, to, note, changesText])
        let seq = db.lastInsertedRowID
        try db.cachedStatement(sql: "INSERT INTO report_change (report_id, action, at, history_seq) VALUES (?, ?, ?, ?)")
            .execute(arguments: [id, action.rawValue, at, seq])
        return seq
    }

    // MARK: Idempotency keys

    /// The answer stored for a caller's key, if any.
    public func storedAnswer(caller: String, key: String) throws -> StoredAnswer? {
        try SQLiteReports.storedAnswer(db, caller: caller, key: key)
    }

    /// Keeps the answer to a caller's key.
    public func store(_ answer: StoredAnswer, caller: String, key: String, now: Date) throws {
        let headers = String(decoding: try JSONEncoder().encode(answer.reply.headers), as: UTF8.self)
        try db.execute(
            sql: "INSERT INTO idempotency_key (caller, key, fingerprint, status, headers, answer, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [caller, key, answer.fingerprint, answer.reply.status, headers, answer.reply.body, ReportRow.milliseconds(now)])
    }
}

extension SQLiteReports {
    /// Runs the writes in one transaction, committed once (one sync for all), and returns
    /// each one's outcome in order. A write that throws before it has changed a row (a
    /// refused transition, a stale version) simply fails. One that throws after changing
    /// rows cannot be undone alone without a savepoint per write, and savepoints are dear
    /// here (FTS5 flushes its pending terms into a new segment at each one), so the
    /// transaction is rolled back and run again without it. If the transaction itself fails
    /// (its commit, or its start: another process holds the lock past the busy timeout),
    /// every write not already refused fails with its error.
    ///
    /// Its change numbers are AUTOINCREMENT's, which only the holder of the write lock
    /// moves: read from BEGIN IMMEDIATE to the commit, they are the transaction's own.
    public func commitNumbered<T>(_ writes: [(any ReportTransaction) throws -> T]) -> Committed<T> {
        var outcomes = [Result<T, any Error>?](repeating: nil, count: writes.count)
        var pending = Array(writes.indices)
        var numbers: ChangeNumbers?
        let reference = self.reference
        while !pending.isEmpty {
            var undone: Int?
            do {
                try pool.writeWithoutTransaction { db in
                    try checkpointInBackground(db)
                    try db.inTransaction(.immediate) {
                        let before = try Self.lastChange(db)
                        let transaction = WriteTransaction(db: db, reference: reference)
                        for i in pending {
                            let changes = db.totalChangesCount
                            do {
                                outcomes[i] = .success(try writes[i](transaction))
                            } catch {
                                outcomes[i] = .failure(error)
                                if db.totalChangesCount != changes {
                                    undone = i
                                    return .rollback
                                }
                            }
                        }
                        try SearchQueue.drain(db)
                        let last = try Self.lastChange(db)
                        numbers = last > before ? ChangeNumbers(after: before, through: last) : nil
                        return .commit
                    }
                    try finishCheckpointIfDue(db)
                }
            } catch {
                let error = StoreBusy.replacing(error)
                for i in pending where outcomes[i] == nil || (try? outcomes[i]?.get()) != nil { outcomes[i] = .failure(error) }
                numbers = nil
                break
            }
            guard let undone else { break }
            // Again, without the write that failed halfway and those that failed outright.
            pending = pending.filter { i in
                if i == undone { return false }
                if case .failure? = outcomes[i] { return false }
                return true
            }
        }
        checkpointer.withLock { $0?.nudge() }
        return Committed(outcomes: outcomes.map { $0! }, numbers: numbers)
    }

    /// Completes the background checkpoints, between two transactions, when the log is due
    /// to restart (see ``Checkpointer``).
    private func finishCheckpointIfDue(_ writer: Database) throws {
        guard checkpointer.withLock({ $0?.restartDue.exchange(false, ordering: .acquiringAndReleasing) }) == true else { return }
        _ = sqlite3_wal_checkpoint_v2(writer.sqliteConnection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }

    /// Hands checkpoints over to a ``Checkpointer``, once: shared commits come in streams.
    private func checkpointInBackground(_ writer: Database) throws {
        try checkpointer.withLock { checkpointer in
            guard checkpointer == nil else { return }
            checkpointer = try Checkpointer(path: pool.path)
            try writer.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        }
    }

    /// A hidden report, or nil.
    public func hidden(id: Int64) throws -> HiddenReport? {
        try pool.read { db in try Self.hidden(db, id: id) }
    }

    static func hidden(_ db: Database, id: Int64) throws -> HiddenReport? {
        let columns = ReportRow.columns + ", hidden_at, hide_note"
        guard let report = try ReportRow.fetchAll(db, sql: "SELECT \(columns) FROM report_hidden WHERE id = ?", arguments: [id]).first,
              let row = try Row.fetchOne(db, sql: "SELECT hidden_at, hide_note FROM report_hidden WHERE id = ?", arguments: [id])
        else { return nil }
        return HiddenReport(report: report, note: row[1], hiddenAt: ReportRow.date(milliseconds: row[0]))
    }

    /// The account that filed report `id`, when a person did.
    public func filer(of id: Int64) throws -> Int64? {
        try pool.read { db in try Int64.fetchOne(db, sql: "SELECT account_id FROM report_filer WHERE report_id = ?", arguments: [id]) }
    }

    /// A page of the reports an account filed (hidden ones left out), newest first, before
    /// the cursor (a report id).
    public func reports(filedBy account: Int64, before: Int64?, limit: Int) throws -> [Report] {
        try pool.read { db in
            let ids = try Int64.fetchAll(
                db, sql: "SELECT report_id FROM report_filer WHERE account_id = ? AND report_id < ? ORDER BY report_id DESC LIMIT ?",
                arguments: [account, before ?? Int64.max, limit])
            let found = Dictionary(try Self.fetch(db, ids: ids).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            return ids.compactMap { found[$0] }
        }
    }

    /// A report's history, oldest first.
    public func history(of id: Int64, after: Int64 = 0, limit: Int = .max) throws -> [HistoryEntry] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM report_history WHERE report_id = ? AND seq > ? ORDER BY seq LIMIT ?", arguments: [id, after, Int64(clamping: limit)]
            ).map(Self.historyEntry)
        }
    }

    /// History rows by their sequence numbers (those that exist).
    public func history(seqs: [Int64]) throws -> [Int64: HistoryEntry] {
        guard !seqs.isEmpty else { return [:] }
        return try pool.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM report_history WHERE seq IN (SELECT value FROM json_each(?))", arguments: [Self.jsonList(seqs)])
            return Dictionary(uniqueKeysWithValues: try rows.map(Self.historyEntry).map { ($0.seq, $0) })
        }
    }

    private static func historyEntry(_ row: Row) throws -> HistoryEntry {
        let changes: [FieldChange] = try (row["changes"] as String?).map { try JSONDecoder().decode([FieldChange].self, from: Data($0.utf8)) } ?? []
        return HistoryEntry(
            seq: row["seq"], reportID: row["report_id"], at: ReportRow.date(milliseconds: row["at"]),
            author: Author(accountID: row["account_id"], apiKeyID: row["api_key_id"]),
            action: ReportAction(rawValue: row["action"]) ?? .edited, fromStatus: row["from_status"], toStatus: row["to_status"],
            note: row["note"], changes: changes)
    }

    static func storedAnswer(_ db: Database, caller: String, key: String) throws -> StoredAnswer? {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT fingerprint, status, headers, answer FROM idempotency_key WHERE caller = ? AND key = ?", arguments: [caller, key])
        else { return nil }
        let headers = try JSONDecoder().decode([String: String].self, from: Data((row[2] as String).utf8))
        return StoredAnswer(fingerprint: row[0], reply: StoredAnswer.Reply(status: row[1], headers: headers, body: row[3]))
    }

    /// The answer stored for a caller's idempotency key, if any.
    public func storedAnswer(caller: String, key: String) throws -> StoredAnswer? {
        try pool.read { db in try Self.storedAnswer(db, caller: caller, key: key) }
    }

    /// Forgets idempotency keys stored before `cutoff`; returns how many.
    @discardableResult
    public func forgetIdempotencyKeys(before cutoff: Date) throws -> Int {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM idempotency_key WHERE created_at < ?", arguments: [ReportRow.milliseconds(cutoff)])
            return db.changesCount
        }
    }
}
