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

    /// The history rows that are an account's notifications: the status changes of the
    /// reports it filed, public ones, not the changes it made itself.
    private static let notificationRows = """
        FROM report_filer f JOIN report r ON r.id = f.report_id JOIN report_history h ON h.report_id = f.report_id
        WHERE h.action = 'transition' AND h.account_id IS DISTINCT FROM f.account_id AND f.account_id =
        """

    static func notifications(of account: Int64, before: Int64?, after: Int64, limit: Int) -> PostgresQuery {
        """
        SELECT h.seq, h.report_id, h.at, h.from_status, h.to_status, h.note \(unescaped: notificationRows) \(account)
          AND h.seq < \(before ?? Int64.max) AND h.seq > \(after) ORDER BY h.seq DESC LIMIT \(limit)
        """
    }

    static func unreadCount(of account: Int64, upTo: Int64) -> PostgresQuery {
        "SELECT count(*) \(unescaped: notificationRows) \(account) AND h.seq > \(upTo)"
    }
}
