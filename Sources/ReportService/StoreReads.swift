import Foundation
import ReportModel

/// What the server and the CLI ask of the store beyond the index (reads, and the store's
/// upkeep: forgetting old keys and changes, the last flush), through the service like
/// every other call, so that neither reaches the store itself.
extension ReportService {
    /// The number of the last change committed, by any process.
    public func lastChange() async throws -> Int64 { try await read { try await $0.lastChange() } }

    /// What changed on the blocklist after a change number.
    public func blocklistChanges(since: Int64) async throws -> BlocklistChanges { try await read { try await $0.blocklistChanges(since: since) } }

    /// How many numbers are blocked.
    public func blockedCount() async throws -> Int { try await read { try await $0.blockedCount() } }

    /// Whether a stored photo belongs to a report (a public one, when `publicOnly`).
    public func photoExists(sha256: String, publicOnly: Bool) async throws -> Bool {
        try await read { try await $0.photoExists(sha256: sha256, publicOnly: publicOnly) }
    }

    /// An account's notifications (the status changes others made to its reports), newest
    /// first, before the cursor, and how many are unread.
    public func notifications(of account: Int64, before: Int64?, limit: Int, unreadOnly: Bool) async throws -> (notifications: [StatusNotification], unread: Int) {
        try await read { try await $0.notifications(of: account, before: before, limit: limit, unreadOnly: unreadOnly) }
    }

    /// Marks an account's notifications read up to `seq` (never back); where it has read
    /// up to now, and how many are left unread.
    public func markNotificationsRead(of account: Int64, upTo seq: Int64) async throws -> (readUpTo: Int64, unread: Int) {
        try await commits.perform { t in (try t.markNotificationsRead(of: account, upTo: seq), IndexEffect()) }
    }

    /// Forgets the changes made before `cutoff` (their rows; the last number stays);
    /// returns how many. A feed reader behind them must start again from a snapshot.
    @discardableResult
    public func forgetChanges(before cutoff: Date) async throws -> Int { try await read { try await $0.forgetChanges(before: cutoff) } }

    /// Finishes what the store left for later before the process stops (SQLite folds its
    /// write-ahead log into the file); false when some of it waits for the next start.
    public func shutDown() async throws -> Bool {
        backgroundBuild.withLock { $0?.cancel() }
        return try await read { try await $0.shutDown() }
    }

    /// Figures the store gives of itself for `GET /metrics`, by metric name.
    public var storeGauges: [String: Int] { storage.gauges }

    /// How many group-commit transactions have been committed (or tried).
    public var transactionCount: Int { commits.transactions.load(ordering: .relaxed) }

    /// Calls `observer` with the number of writes of each group-commit transaction.
    public func onBatch(_ observer: @escaping @Sendable (Int) -> Void) { commits.onBatch(observer) }
}
