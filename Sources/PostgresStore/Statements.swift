import Foundation
import PostgresNIO
import ReportModel

/// The statements both the reads (on the pool) and the write transaction (on the writer's
/// connection) run, each once here.
enum Statements {
    static func report(id: Int64) -> PostgresQuery {
        "SELECT \(unescaped: Rows.reportColumns) FROM report WHERE id = \(id)"
    }

    static func hidden(id: Int64) -> PostgresQuery {
        "SELECT \(unescaped: Rows.hiddenColumns) FROM report_hidden WHERE id = \(id)"
    }

    static func filer(of id: Int64) -> PostgresQuery {
        "SELECT account_id FROM report_filer WHERE report_id = \(id)"
    }

    static func storedAnswer(caller: String, key: String) -> PostgresQuery {
        "SELECT fingerprint, status, headers, answer FROM idempotency_key WHERE caller = \(caller) AND key = \(key)"
    }

    static func photos(of id: Int64) -> PostgresQuery {
        "SELECT \(unescaped: Rows.photoColumns) FROM report_photo WHERE report_id = \(id) ORDER BY id"
    }

    static func changes(after seq: Int64, limit: Int) -> PostgresQuery {
        "SELECT \(unescaped: Rows.changeColumns) FROM report_change WHERE seq > \(seq) ORDER BY seq LIMIT \(limit)"
    }

    /// The statuses of those numbers that have a record.
    static func phoneStatuses(_ numbers: [String]) -> PostgresQuery {
        "SELECT number, status FROM phone WHERE number = ANY(\(numbers))"
    }

    static func phoneStatuses(_ rows: [PostgresRow], of numbers: some Collection<String>) throws -> [String: PhoneStatus] {
        var statuses = Dictionary(numbers.map { ($0, PhoneStatus.unverified) }, uniquingKeysWith: { a, _ in a })
        for row in rows {
            let (number, status) = try row.decode((String, String).self)
            statuses[number] = PhoneStatus(rawValue: status) ?? .unverified
        }
        return statuses
    }

    // MARK: Notifications

    /// How far an account has read its notifications (no row: nothing read).
    static func readUpTo(_ account: Int64) -> PostgresQuery {
        "SELECT up_to FROM notification_read WHERE account_id = \(account)"
    }

    /// The history rows that are an account's notifications (its filed reports' status
    /// changes, the assignments of reports to it and their ends; public reports, not its
    /// own doing): seq, report, action, at, from, to, note, as `n`.
    private static func notificationRows(_ account: Int64, _ sql: inout SQL) -> String {
        let a = sql.bind(account)
        return """
            FROM (SELECT h.seq, h.report_id, h.action, h.at, h.from_status, h.to_status, h.note
                  FROM report_filer f JOIN report r ON r.id = f.report_id JOIN report_history h ON h.report_id = f.report_id
                  WHERE f.account_id = \(a) AND h.action = 'transition' AND h.account_id IS DISTINCT FROM f.account_id
                  UNION ALL
                  SELECT h.seq, h.report_id, CASE WHEN a.ended_seq = h.seq THEN 'unassigned' ELSE 'assigned' END, h.at, h.from_status, h.to_status, h.note
                  FROM assignment a JOIN report r ON r.id = a.report_id JOIN report_history h ON h.seq IN (a.started_seq, a.ended_seq)
                  WHERE a.account_id = \(a) AND h.account_id IS DISTINCT FROM \(a)) n
            """
    }

    static func notifications(of account: Int64, before: Int64?, after: Int64, limit: Int) -> PostgresQuery {
        var sql = SQL("SELECT n.seq, n.report_id, n.action, n.at, n.from_status, n.to_status, n.note ")
        let rows = notificationRows(account, &sql)
        sql.append(rows)
        sql.append(" WHERE n.seq < \(sql.bind(before ?? Int64.max)) AND n.seq > \(sql.bind(after)) ORDER BY n.seq DESC LIMIT \(sql.bind(limit))")
        return sql.query
    }

    static func unreadCount(of account: Int64, upTo: Int64) -> PostgresQuery {
        var sql = SQL("SELECT count(*) ")
        let rows = notificationRows(account, &sql)
        sql.append(rows)
        sql.append(" WHERE n.seq > \(sql.bind(upTo))")
        return sql.query
    }
}
