import Foundation
import GRDB
import ReportModel

extension SQLiteReports {
    /// The history rows that are notifications of `?1`'s (an account): the status changes
    /// of the reports it filed, and the assignments of reports to it and their ends; not
    /// of hidden reports, not what it did itself. Columns: seq, report, action, at, from,
    /// to, note.
    private static let notificationRows = """
        FROM (SELECT h.seq, h.report_id, h.action, h.at, h.from_status, h.to_status, h.note
              FROM report_filer f JOIN report r ON r.id = f.report_id JOIN report_history h ON h.report_id = f.report_id
              WHERE f.account_id = ?1 AND h.action = 'transition' AND h.account_id IS NOT f.account_id
              UNION ALL
              SELECT h.seq, h.report_id, CASE WHEN a.ended_seq = h.seq THEN 'unassigned' ELSE 'assigned' END, h.at, h.from_status, h.to_status, h.note
              FROM assignment a JOIN report r ON r.id = a.report_id JOIN report_history h ON h.seq IN (a.started_seq, a.ended_seq)
              WHERE a.account_id = ?1 AND h.account_id IS NOT ?1) n
        WHERE 1
        """

    /// The account's notifications, newest first, before the cursor (a `seq`); only unread
    /// ones when asked. And how many are unread in all.
    public func notifications(of account: Int64, before: Int64?, limit: Int, unreadOnly: Bool) throws -> (notifications: [StatusNotification], unread: Int) {
        try pool.read { db in
            let upTo = try Self.readUpTo(db, account: account)
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT n.seq, n.report_id, n.action, n.at, n.from_status, n.to_status, n.note \(Self.notificationRows)
                      AND n.seq < ?2 AND n.seq > ?3 ORDER BY n.seq DESC LIMIT ?4
                    """),
                arguments: [account, before ?? Int64.max, unreadOnly ? upTo : 0, limit])
            let notifications = rows.map { row in
                StatusNotification(
                    seq: row[0], reportID: row[1], action: ReportAction(rawValue: row[2]) ?? .transition, at: ReportRow.date(milliseconds: row[3]),
                    fromStatus: row[4], toStatus: row[5], note: row[6], read: (row[0] as Int64) <= upTo)
            }
            return (notifications, try Self.unreadCount(db, account: account, upTo: upTo))
        }
    }

    static func unreadCount(_ db: Database, account: Int64, upTo: Int64) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) \(notificationRows) AND n.seq > ?2"), arguments: [account, upTo]) ?? 0
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
                INSERT INTO notification_read (account_id, up_to)
                VALUES (?, min(?, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'report_change'), 0)))
                ON CONFLICT (account_id) DO UPDATE SET up_to = max(up_to, excluded.up_to)
                """,
            arguments: [account, seq])
        let upTo = try SQLiteReports.readUpTo(db, account: account)
        return (upTo, try SQLiteReports.unreadCount(db, account: account, upTo: upTo))
    }
}
