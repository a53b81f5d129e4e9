import Foundation
import GRDB
import GRDBSQLite
import Geometry
import ReportModel

/// A report that does not exist.
public struct ReportNotFound: Error, Sendable, CustomStringConvertible {
    public var id: Int64
    public var description: String { "report \(id) does not exist" }
}

/// Records that broke a rule; nothing of their batch was written.
public struct RecordsRejected: Error, Sendable, CustomStringConvertible {
    /// The first ``ImportOptions/maxReportedIssues`` issues, in input order.
    public var issues: [RecordIssue]
    /// How many records were invalid in all.
    public var issueCount: Int

    public var description: String {
        let first = issues.first.map { " First: \($0)." } ?? ""
        return "\(issueCount) invalid record(s); nothing was written.\(first)"
    }
}

extension ReportStore {
    // MARK: Single writes

    /// Validates and stores new reports in one transaction, all or none; returns them as
    /// stored (with their ids, status and times). An invalid draft throws
    /// ``RecordsRejected`` locating it as `feature N` (1-based) of `drafts`.
    @discardableResult
    public func insert(_ drafts: [ReportDraft], now: Date = Date()) throws -> [Report] {
        var issues: [RecordIssue] = []
        var valid: [ReportDraft] = []
        for (i, draft) in drafts.enumerated() {
            do throws(ValidationError) {
                valid.append(try reference.validate(draft))
            } catch {
                issues.append(RecordIssue(location: .feature(i + 1), error: error))
            }
        }
        guard issues.isEmpty else { throw RecordsRejected(issues: issues, issueCount: issues.count) }
        return try pool.write { db in
            let inserter = try RowInserter(db, initialStatus: reference.initialStatus)
            var ids: [Int64] = []
            for (i, draft) in valid.enumerated() {
                switch try inserter.insert(draft, now: now) {
                case .success(let id): ids.append(id)
                case .failure(let error):
                    throw RecordsRejected(issues: [RecordIssue(location: .feature(i + 1), error: error)], issueCount: 1)
                }
            }
            return try Self.fetch(db, ids: ids)
        }
    }

    /// Validates and stores one new report; an invalid draft throws its ``ValidationError``.
    @discardableResult
    public func insert(_ draft: ReportDraft, now: Date = Date()) throws -> Report {
        do {
            return try insert([draft], now: now)[0]
        } catch let rejected as RecordsRejected {
            throw rejected.issues[0].error
        }
    }

    /// Replaces the fields of report `id` by those of `draft` (its `id` is ignored). A
    /// missing `status` keeps the current one, a missing `createdAt` the current one, and
    /// `updatedAt` defaults to `now`. Returns the stored report.
    @discardableResult
    public func update(id: Int64, with draft: ReportDraft, now: Date = Date()) throws -> Report {
        var draft = try reference.validate(draft)
        return try pool.write { db in
            guard let current = try ReportRow.fetchOne(db, sql: "SELECT \(ReportRow.columns) FROM report WHERE id = ?", arguments: [id]) else {
                throw ReportNotFound(id: id)
            }
            draft.status = draft.status ?? current.status
            let created = draft.createdAt ?? current.createdAt
            let updated = draft.updatedAt ?? max(now, created)
            guard updated >= created else { throw ValidationError(field: "updated_at", "must not be earlier than created_at") }
            try db.execute(
                sql: """
                    UPDATE report SET longitude = ?, latitude = ?, address = ?, city = ?, district = ?, object_type = ?,
                    balance_holder = ?, violator = ?, phones = ?, comment = ?, status = ?, created_at = ?, updated_at = ?
                    WHERE id = ?
                    """,
                arguments: [
                    draft.coordinate.longitude, draft.coordinate.latitude, draft.address, draft.city, draft.district,
                    draft.objectType, draft.balanceHolder, draft.violator, RowInserter.phoneText(draft.phones), draft.comment,
                    draft.status, ReportRow.milliseconds(created), ReportRow.milliseconds(updated), id,
                ])
            return try ReportRow.fetchOne(db, sql: "SELECT \(ReportRow.columns) FROM report WHERE id = ?", arguments: [id])!
        }
    }

    /// Deletes report `id`; throws ``ReportNotFound`` when there is none.
    public func delete(id: Int64) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM report WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw ReportNotFound(id: id) }
        }
    }
}

/// Inserts report rows through one prepared statement, binding values directly: the
/// per-row cost of a million-row import is dominated by this loop.
struct RowInserter {
    let db: Database
    let statement: Statement
    let initialStatus: String

    init(_ db: Database, initialStatus: String) throws {
        self.db = db
        self.initialStatus = initialStatus
        statement = try db.makeStatement(sql: """
            INSERT INTO report (id, longitude, latitude, address, city, district, object_type, balance_holder,
                                violator, phones, comment, status, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
    }

    static func phoneText(_ phones: [String]) -> String { phones.joined(separator: String(ReportRow.phoneSeparator)) }

    /// Inserts a validated draft (defaults: the initial status, times `now`); returns its id, or
    /// the rule it broke against the stored data (an id that is taken).
    func insert(_ d: ReportDraft, now: Date) throws -> Result<Int64, ValidationError> {
        let s = statement.sqliteStatement
        sqlite3_reset(s)
        sqlite3_clear_bindings(s)
        if let id = d.id { sqlite3_bind_int64(s, 1, id) }
        sqlite3_bind_double(s, 2, d.coordinate.longitude)
        sqlite3_bind_double(s, 3, d.coordinate.latitude)
        bind(s, 4, d.address)
        bind(s, 5, d.city)
        bind(s, 6, d.district)
        bind(s, 7, d.objectType)
        bind(s, 8, d.balanceHolder)
        bind(s, 9, d.violator)
        bind(s, 10, Self.phoneText(d.phones))
        bind(s, 11, d.comment)
        bind(s, 12, d.status ?? initialStatus)
        let created = ReportRow.milliseconds(d.createdAt ?? now)
        sqlite3_bind_int64(s, 13, created)
        sqlite3_bind_int64(s, 14, d.updatedAt.map(ReportRow.milliseconds) ?? created)
        let code = sqlite3_step(s)
        switch code {
        case SQLITE_DONE:
            return .success(sqlite3_last_insert_rowid(db.sqliteConnection))
        case SQLITE_CONSTRAINT where sqlite3_extended_errcode(db.sqliteConnection) == ResultCode.SQLITE_CONSTRAINT_PRIMARYKEY.rawValue:
            sqlite3_reset(s)
            return .failure(ValidationError(field: "id", "report \(d.id ?? 0) already exists"))
        default:
            let error = db.sqliteError(code, statement.sql)
            sqlite3_reset(s)
            throw error
        }
    }

    private func bind(_ s: OpaquePointer?, _ index: Int32, _ value: String?) {
        guard var text = value else { return }  // cleared bindings are NULL
        text.withUTF8 { buffer in
            _ = sqlite3_bind_text(s, index, buffer.baseAddress, Int32(buffer.count), SQLITE_TRANSIENT)
        }
    }
}

/// SQLite's "copy the bytes now" destructor, which the C macro spells as -1.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
