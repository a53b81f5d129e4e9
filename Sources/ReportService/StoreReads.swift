import Foundation
import ReportModel

/// The reads the server and the CLI answer straight from the store, through the service
/// like every other call, so that neither reaches the store itself.
extension ReportService {
    /// The number of the last change committed, by any process.
    public func lastChange() throws -> Int64 { try store.lastChange() }

    /// The numbers on the blocklist, with their public reports.
    public func blocklist() throws -> [BlockedPhone] { try store.blocklist() }

    /// What changed on the blocklist after a change number.
    public func blocklistChanges(since: Int64) throws -> BlocklistChanges { try store.blocklistChanges(since: since) }

    /// How many numbers are blocked.
    public func blockedCount() throws -> Int { try store.blockedCount() }

    /// Whether a stored photo belongs to a report (a public one, when `publicOnly`).
    public func photoExists(sha256: String, publicOnly: Bool) throws -> Bool { try store.photoExists(sha256: sha256, publicOnly: publicOnly) }

    /// An account's notifications (the status changes others made to its reports), newest
    /// first, before the cursor, and how many are unread.
    public func notifications(of account: Int64, before: Int64?, limit: Int, unreadOnly: Bool) throws -> (notifications: [StatusNotification], unread: Int) {
        try store.notifications(of: account, before: before, limit: limit, unreadOnly: unreadOnly)
    }

    /// Marks an account's notifications read up to `seq` (never back); where it has read
    /// up to now, and how many are left unread.
    public func markNotificationsRead(of account: Int64, upTo seq: Int64) throws -> (readUpTo: Int64, unread: Int) {
        try store.markNotificationsRead(of: account, upTo: seq)
    }

    /// Calls `observer` with the number of writes of each group-commit transaction.
    public func onBatch(_ observer: @escaping @Sendable (Int) -> Void) { commits.onBatch(observer) }
}
