import Foundation
import GRDB
import ReportModel

extension SQLiteReports {
    /// The history rows that are notifications of `?1`'s (an account): the status changes
    /// of the reports it filed, not hidden ones, not the changes it made itself.
    private static let notificationRows = """
        FROM report_filer f JOIN report r ON r.id = f.report_id JOIN report_history h ON h.report_id = f.report_id
        WHERE f.account_id = ?1 AND h.action = 'transition' AND h.account_id IS NOT f.account_id
        """

    /// The account's notifications, newest first, before the cursor (a `seq`); only unread
    /// ones when asked. And how many are unread in all.
    public func notifications(of account: Int64, before: Int64?, limit: Int, unreadOnly: Bool) throws -> (notifications: [StatusNotification], unread: Int) {
        try pool.read { db in
            let upTo = try Self.readUpTo(db, account: account)
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT h.seq, h.report_id, h.at, h.from_status, h.to_status, h.note \(Self.notificationRows)
                      AND h.seq < ?2 AND h.seq > ?3 ORDER BY h.seq DESC LIMIT ?4
                    """),
                arguments: [account, before ?? Int64.max, unreadOnly ? upTo : 0, limit])
            let notifications = rows.map { row in
                StatusNotification(
                    seq: row[0], reportID: row[1], at: ReportRow.date(milliseconds: row[2]), fromStatus: row[3], toStatus: row[4],
                    note: row[5], read: (row[0] as Int64) <= upTo)
            }
            return (notifications, try Self.unreadCount(db, account: account, upTo: upTo))
        }
    }

    static func unreadCount(_ db: Database, account: Int64, upTo: Int64) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) \(notificationRows) AND h.seq > ?2"), arguments: [account, upTo]) ?? 0
    }

    static func readUpTo(_ db: Database, account: Int64) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT up_to FROM notification_read WHERE account_id = ?"), arguments: [account]) ?? 0
    }
}

extension WriteTransaction {
    /// Marks the account's notifications read up to `seq` (never back); returns the mark
    /// and how many are still unread.
    public func markNotificationsRead(of account: Int64, upTo seq: Int64) throws -> (readUpTo: Int64, unread: Int) {
        try db.execute(
            sql: """
                INSERT INTO notification_read (account_id, up_to) VALUES (?, ?)
                ON CONFLICT (account_id) DO UPDATE SET up_to = max(up_to, excluded.up_to)
                """,
            arguments: [account, seq])
        let upTo = try SQLiteReports.readUpTo(db, account: account)
        return (upTo, try SQLiteReports.unreadCount(db, account: account, upTo: upTo))
    }
}
