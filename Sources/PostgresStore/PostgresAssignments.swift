import Foundation
import PostgresNIO
import ReportModel
import StorePorts

/// Who checks which report, on PostgreSQL: as on SQLite, one active row per report (a
/// partial unique index), ended rows kept, both ends in the report's history. Every
/// writer holds the change counter's row to its commit, so two replicas' assignments of
/// one report take turns and the second sees the first; the index is a backstop.
enum AssignmentSchema {
    static let migration: (identifier: String, statements: [String]) = (
        "v9: assignments, in the reports' history",
        [
            "ALTER TABLE report_history DROP CONSTRAINT report_history_action_check",
            """
            ALTER TABLE report_history ADD CONSTRAINT report_history_action_check
            CHECK (action IN ('filed', 'edited', 'transition', 'hidden', 'unhidden', 'deleted', 'assigned', 'unassigned'))
            """,
            """
            CREATE TABLE assignment (
                id bigserial PRIMARY KEY,
                report_id bigint NOT NULL,
                account_id bigint NOT NULL,
                position bigint NOT NULL,
                started_at bigint NOT NULL,
                started_account_id bigint,
                started_api_key_id bigint,
                started_seq bigint NOT NULL,
                note text,
                ended_at bigint,
                ended_account_id bigint,
                ended_api_key_id bigint,
                ended_seq bigint,
                end_note text
            )
            """,
            "CREATE UNIQUE INDEX assignment_active ON assignment (report_id) WHERE ended_at IS NULL",
            "CREATE INDEX assignment_account ON assignment (account_id, position) WHERE ended_at IS NULL",
            "CREATE INDEX assignment_report ON assignment (report_id, id)",
            // An account's notifications read its ended assignments too.
            "CREATE INDEX assignment_holder ON assignment (account_id, id)",
        ])

    static let columns = """
        id, report_id, account_id, position, started_at, started_account_id, started_api_key_id, started_seq, note, \
        ended_at, ended_account_id, ended_api_key_id, ended_seq, end_note
        """

    static func assignment(_ row: PostgresRow) throws -> Assignment {
        let (id, report, account, position, started, startedAccount, startedKey, startedSeq, note, ended, endedAccount, endedKey, endedSeq, endNote) =
            try row.decode((Int64, Int64, Int64, Int64, Int64, Int64?, Int64?, Int64, String?, Int64?, Int64?, Int64?, Int64?, String?).self)
        return Assignment(
            id: id, reportID: report, accountID: account, position: position, startedAt: Date(milliseconds: started),
            startedBy: Author(accountID: startedAccount, apiKeyID: startedKey), note: note, startedSeq: startedSeq,
            ended: ended.map { Assignment.End(at: Date(milliseconds: $0), by: Author(accountID: endedAccount, apiKeyID: endedKey), note: endNote, seq: endedSeq ?? 0) })
    }
}

// MARK: Steps of a write transaction

extension PostgresTransaction {
    func activeAssignment(of reportID: Int64) throws -> Assignment? {
        try rows("SELECT \(unescaped: AssignmentSchema.columns) FROM assignment WHERE report_id = \(reportID) AND ended_at IS NULL")
            .first.map(AssignmentSchema.assignment)
    }

    func assignments(of account: Int64) throws -> [Assignment] {
        try rows("SELECT \(unescaped: AssignmentSchema.columns) FROM assignment WHERE account_id = \(account) AND ended_at IS NULL ORDER BY position, id")
            .map(AssignmentSchema.assignment)
    }

    func assign(_ reportID: Int64, to account: Int64, replacing previous: Assignment?, note: String?, author: Author, now: Date) throws -> Assignment {
        let change = FieldChange(field: "assignee", before: previous.map { String($0.accountID) }, after: String(account))
        let seq = try record(reportID, .assigned, author: author, at: now, note: note, changes: [change])
        if let previous { try end(previous, seq: seq, note: note, author: author, now: now) }
        let at = now.milliseconds
        let (id, position) = try rows(
            """
            INSERT INTO assignment (report_id, account_id, position, started_at, started_account_id, started_api_key_id, started_seq, note)
            SELECT \(reportID), \(account), coalesce(max(position), 0) + 1, \(at), \(author.accountID), \(author.apiKeyID), \(seq), \(note)
            FROM assignment WHERE account_id = \(account) AND ended_at IS NULL
            RETURNING id, position
            """)[0].decode((Int64, Int64).self)
        return Assignment(
            id: id, reportID: reportID, accountID: account, position: position, startedAt: Date(milliseconds: at), startedBy: author, note: note, startedSeq: seq)
    }

    func endAssignment(_ assignment: Assignment, note: String?, author: Author, now: Date) throws -> Assignment {
        let change = FieldChange(field: "assignee", before: String(assignment.accountID), after: nil)
        let seq = try record(assignment.reportID, .unassigned, author: author, at: now, note: note, changes: [change])
        return try end(assignment, seq: seq, note: note, author: author, now: now)
    }

    @discardableResult
    private func end(_ assignment: Assignment, seq: Int64, note: String?, author: Author, now: Date) throws -> Assignment {
        let at = now.milliseconds
        try execute(
            """
            UPDATE assignment SET ended_at = \(at), ended_account_id = \(author.accountID), ended_api_key_id = \(author.apiKeyID),
                ended_seq = \(seq), end_note = \(note)
            WHERE id = \(assignment.id) AND ended_at IS NULL
            """)
        var ended = assignment
        ended.ended = Assignment.End(at: Date(milliseconds: at), by: author, note: note, seq: seq)
        return ended
    }

    func reorderAssignments(_ ids: [Int64]) throws {
        try execute(
            """
            UPDATE assignment SET position = o.position
            FROM unnest(\(ids)::bigint[]) WITH ORDINALITY AS o(id, position) WHERE assignment.id = o.id
            """)
    }
}

// MARK: Reads

extension PostgresReports {
    public func assignments(of account: Int64) async throws -> [Assignment] {
        try await rows(
            """
            SELECT \(unescaped: AssignmentSchema.columns) FROM assignment
            WHERE account_id = \(account) AND ended_at IS NULL AND report_id IN (SELECT id FROM report) ORDER BY position, id
            """
        ).map(AssignmentSchema.assignment)
    }

    public func assignments(ofReport id: Int64) async throws -> [Assignment] {
        try await rows(
            "SELECT \(unescaped: AssignmentSchema.columns) FROM assignment WHERE report_id = \(id) ORDER BY id DESC LIMIT \(Assignment.maxOfReport)"
        ).map(AssignmentSchema.assignment)
    }

    public func assignees(of ids: some Collection<Int64>) async throws -> [Int64: Int64] {
        guard !ids.isEmpty else { return [:] }
        var assignees: [Int64: Int64] = [:]
        for row in try await rows("SELECT report_id, account_id FROM assignment WHERE ended_at IS NULL AND report_id = ANY(\(Array(ids)))") {
            let (report, account) = try row.decode((Int64, Int64).self)
            assignees[report] = account
        }
        return assignees
    }

    public func assignedReports() async throws -> [Int64] {
        try await rows("SELECT report_id FROM assignment WHERE ended_at IS NULL ORDER BY report_id").map { try $0.decode(Int64.self) }
    }
}
