import Foundation
import GRDB
import ReportModel
import StorePorts

/// Who checks which report on site. An assignment's row is kept when it ends (reassigned,
/// given back, or the report closed); one active row per report, which a partial unique
/// index holds to. Its two ends are the report's history rows `assigned` and `unassigned`.
extension Schema {
    static func v10Assignments(_ db: Database) throws {
        // The history takes two more actions: SQLite changes a CHECK only by rebuilding.
        try db.execute(sql: """
            CREATE TABLE report_history_rebuilt (
                seq INTEGER PRIMARY KEY,
                report_id INTEGER NOT NULL,
                at INTEGER NOT NULL,
                account_id INTEGER,
                api_key_id INTEGER,
                action TEXT NOT NULL CHECK (action IN ('filed', 'edited', 'transition', 'hidden', 'unhidden', 'deleted', 'assigned', 'unassigned')),
                from_status TEXT,
                to_status TEXT,
                note TEXT,
                changes TEXT
            );
            INSERT INTO report_history_rebuilt SELECT seq, report_id, at, account_id, api_key_id, action, from_status, to_status, note, changes FROM report_history;
            DROP TABLE report_history;
            ALTER TABLE report_history_rebuilt RENAME TO report_history;
            CREATE INDEX report_history_report ON report_history(report_id, seq);
            CREATE TABLE assignment (
                id INTEGER PRIMARY KEY,
                report_id INTEGER NOT NULL,
                account_id INTEGER NOT NULL,
                position INTEGER NOT NULL,
                started_at INTEGER NOT NULL,
                started_account_id INTEGER,
                started_api_key_id INTEGER,
                started_seq INTEGER NOT NULL,
                note TEXT,
                ended_at INTEGER,
                ended_account_id INTEGER,
                ended_api_key_id INTEGER,
                ended_seq INTEGER,
                end_note TEXT
            );
            CREATE UNIQUE INDEX assignment_active ON assignment(report_id) WHERE ended_at IS NULL;
            CREATE INDEX assignment_account ON assignment(account_id, position) WHERE ended_at IS NULL;
            CREATE INDEX assignment_report ON assignment(report_id, id);
            -- An account's notifications read its ended assignments too.
            CREATE INDEX assignment_holder ON assignment(account_id, id);
            """)
    }
}

enum AssignmentRows {
    static let columns = """
        id, report_id, account_id, position, started_at, started_account_id, started_api_key_id, started_seq, note, \
        ended_at, ended_account_id, ended_api_key_id, ended_seq, end_note
        """

    static func assignment(_ row: Row) -> Assignment {
        let ended: Int64? = row["ended_at"]
        return Assignment(
            id: row["id"], reportID: row["report_id"], accountID: row["account_id"], position: row["position"],
            startedAt: ReportRow.date(milliseconds: row["started_at"]),
            startedBy: Author(accountID: row["started_account_id"], apiKeyID: row["started_api_key_id"]), note: row["note"], startedSeq: row["started_seq"],
            ended: ended.map {
                Assignment.End(
                    at: ReportRow.date(milliseconds: $0), by: Author(accountID: row["ended_account_id"], apiKeyID: row["ended_api_key_id"]),
                    note: row["end_note"], seq: row["ended_seq"] ?? 0)
            })
    }

    static func active(_ db: Database, account: Int64) throws -> [Assignment] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT \(columns) FROM assignment WHERE account_id = ? AND ended_at IS NULL ORDER BY position, id"),
            arguments: [account]
        ).map(assignment)
    }
}

// MARK: Steps of a write transaction

extension WriteTransaction {
    public func activeAssignment(of reportID: Int64) throws -> Assignment? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(AssignmentRows.columns) FROM assignment WHERE report_id = ? AND ended_at IS NULL"), arguments: [reportID]
        ).map(AssignmentRows.assignment)
    }

    public func assignments(of account: Int64) throws -> [Assignment] {
        try AssignmentRows.active(db, account: account)
    }

    public func assign(_ reportID: Int64, to account: Int64, replacing previous: Assignment?, note: String?, author: Author, now: Date) throws -> Assignment {
        let change = FieldChange(field: "assignee", before: previous.map { String($0.accountID) }, after: String(account))
        let seq = try record(reportID, .assigned, author: author, at: now, note: note, changes: [change])
        if let previous { try end(previous, seq: seq, note: note, author: author, now: now) }
        let position = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT coalesce(max(position), 0) + 1 FROM assignment WHERE account_id = ? AND ended_at IS NULL"), arguments: [account]) ?? 1
        try db.cachedStatement(sql: """
            INSERT INTO assignment (report_id, account_id, position, started_at, started_account_id, started_api_key_id, started_seq, note)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [reportID, account, position, now.milliseconds, author.accountID, author.apiKeyID, seq, note])
        return Assignment(
            id: db.lastInsertedRowID, reportID: reportID, accountID: account, position: position, startedAt: ReportRow.date(milliseconds: now.milliseconds),
            startedBy: author, note: note, startedSeq: seq)
    }

    public func endAssignment(_ assignment: Assignment, note: String?, author: Author, now: Date) throws -> Assignment {
        let change = FieldChange(field: "assignee", before: String(assignment.accountID), after: nil)
        let seq = try record(assignment.reportID, .unassigned, author: author, at: now, note: note, changes: [change])
        return try end(assignment, seq: seq, note: note, author: author, now: now)
    }

    @discardableResult
    private func end(_ assignment: Assignment, seq: Int64, note: String?, author: Author, now: Date) throws -> Assignment {
        try db.cachedStatement(sql: """
            UPDATE assignment SET ended_at = ?, ended_account_id = ?, ended_api_key_id = ?, ended_seq = ?, end_note = ? WHERE id = ? AND ended_at IS NULL
            """).execute(arguments: [now.milliseconds, author.accountID, author.apiKeyID, seq, note, assignment.id])
        var ended = assignment
        ended.ended = Assignment.End(at: ReportRow.date(milliseconds: now.milliseconds), by: author, note: note, seq: seq)
        return ended
    }

    public func reorderAssignments(_ ids: [Int64]) throws {
        let statement = try db.cachedStatement(sql: "UPDATE assignment SET position = ? WHERE id = ?")
        for (position, id) in ids.enumerated() { try statement.execute(arguments: [position + 1, id]) }
    }
}

// MARK: Reads

extension SQLiteReports {
    public func assignments(of account: Int64) throws -> [Assignment] {
        try pool.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT \(AssignmentRows.columns) FROM assignment WHERE account_id = ? AND ended_at IS NULL
                      AND report_id IN (SELECT id FROM report) ORDER BY position, id
                    """),
                arguments: [account]
            ).map(AssignmentRows.assignment)
        }
    }

    public func assignments(ofReport id: Int64) throws -> [Assignment] {
        try pool.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(AssignmentRows.columns) FROM assignment WHERE report_id = ? ORDER BY id DESC LIMIT ?"),
                arguments: [id, Assignment.maxOfReport]
            ).map(AssignmentRows.assignment)
        }
    }

    public func assignees(of ids: some Collection<Int64>) throws -> [Int64: Int64] {
        guard !ids.isEmpty else { return [:] }
        return try pool.read { db in
            var assignees: [Int64: Int64] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT report_id, account_id FROM assignment WHERE ended_at IS NULL AND report_id IN (SELECT value FROM json_each(?))",
                arguments: [Self.jsonList(ids)])
            {
                assignees[row[0]] = row[1]
            }
            return assignees
        }
    }

    public func assignedReports() throws -> [Int64] {
        try pool.read { db in try Int64.fetchAll(db, sql: "SELECT report_id FROM assignment WHERE ended_at IS NULL ORDER BY report_id") }
    }
}
