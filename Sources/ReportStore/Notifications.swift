import Foundation
import GRDB

/// A status change of a report someone filed, as their notification.
public struct StatusNotification: Sendable, Hashable {
    /// The history row's number: the notification's id, and the cursor of read marks.
    public var seq: Int64
    public var reportID: Int64
    public var at: Date
    public var fromStatus: String?
    public var toStatus: String?
    public var note: String?
    public var read: Bool
}

extension ReportStore {
    /// The status changes of the reports `account` filed (not hidden ones, and not the
    /// changes the account made itself), newest first, before the cursor (a `seq`); only
    /// unread ones when asked. And how many are unread in all.
    public func notifications(of account: Int64, before: Int64?, limit: Int, unreadOnly: Bool) throws -> (notifications: [StatusNotification], unread: Int) {
        try pool.read { db in
            let upTo = try Self.readUpTo(db, account: account)
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT h.seq, h.report_id, h.at, h.from_status, h.to_status, h.note
                    FROM report_filer f JOIN report r ON r.id = f.report_id JOIN report_history h ON h.report_id = f.report_id
                    WHERE f.account_id = ? AND h.action = 'transition' AND h.account_id IS NOT f.account_id
                      AND h.seq < ? AND h.seq > ?
                    ORDER BY h.seq DESC LIMIT ?
                    """),
                arguments: [account, before ?? Int64.max, unreadOnly ? upTo : 0, limit])
            let notifications = rows.map { row in
                StatusNotification(
                    seq: row[0], reportID: row[1], at: ReportRow.date(milliseconds: row[2]), fromStatus: row[3], toStatus: row[4],
                    note: row[5], read: (row[0] as Int64) <= upTo)
            }
            let unread = try Int.fetchOne(
                db.cachedStatement(sql: """
                    SELECT count(*) FROM report_filer f JOIN report r ON r.id = f.report_id JOIN report_history h ON h.report_id = f.report_id
                    WHERE f.account_id = ? AND h.action = 'transition' AND h.account_id IS NOT f.account_id AND h.seq > ?
                    """),
                arguments: [account, upTo]) ?? 0
            return (notifications, unread)
        }
    }

    /// Marks the account's notifications read up to `seq` (never back); returns the mark.
    @discardableResult
    public func markNotificationsRead(of account: Int64, upTo seq: Int64) throws -> Int64 {
        try pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO notification_read (account_id, up_to) VALUES (?, ?)
                    ON CONFLICT (account_id) DO UPDATE SET up_to = max(up_to, excluded.up_to)
                    """,
                arguments: [account, seq])
            return try Self.readUpTo(db, account: account)
        }
    }

    private static func readUpTo(_ db: Database, account: Int64) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT up_to FROM notification_read WHERE account_id = ?"), arguments: [account]) ?? 0
    }
}
