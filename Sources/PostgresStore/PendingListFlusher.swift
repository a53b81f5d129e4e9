import Logging
import PostgresNIO
import ReportModel
import Synchronization

/// Keeps the trigram index's pending list short, off the writers' path.
///
/// Why: a GIN index gathers new entries in a pending list and merges them into its tree
/// once the list outgrows `gin_pending_list_limit`, in whichever insert fills it. That
/// insert runs in a write transaction, which holds the writers' lock (``PostgresReports``),
/// so the merge (110–205 ms at 2,000 filings a second here, BENCHMARKS.md) stalled every
/// filing queued behind it, in every replica. Now a replica that has written merges the
/// list itself every ``interval``, on a connection of the pool (`gin_clean_pending_list`),
/// while inserts go on. The index's limit (8 MB, migration v13) is above what an interval
/// gathers at such rates, so a writer merges only when this falls behind.
///
/// Merging needs the serving role to own the index (be its table's owner, a member of
/// that role, or a superuser); otherwise one warning is logged, this stops, and the
/// writers merge the list whenever it reaches the limit.
public final class PendingListFlusher: Sendable {
    public static let defaultInterval = Duration.seconds(8)
    static let refusedByRights = "42501"

    let interval: Duration
    private let database: PostgresDatabase
    /// Whether a write committed since the last merge (or a merge failed since).
    private let written = Atomic<Bool>(false)
    private let flushing = Mutex(Flushing())
    private let merged = Atomic<Int>(0)
    private let refused = Atomic<Bool>(false)
    /// Whether a failed merge has been logged (once: a lasting failure, such as a
    /// statement timeout shorter than a merge, would otherwise fill the log).
    private let failureLogged = Atomic<Bool>(false)

    init(_ database: PostgresDatabase, interval: Duration = defaultInterval) {
        self.database = database
        self.interval = max(interval, .milliseconds(10))
    }

    /// How many merges this replica has run.
    var merges: Int { merged.load(ordering: .relaxed) }

    /// Whether merging was refused for want of rights, and left to the writers.
    var leftToWriters: Bool { refused.load(ordering: .relaxed) }

    /// Notes a committed write; the first starts the merging (a command that only reads
    /// never does).
    func wrote() {
        written.store(true, ordering: .relaxed)
        flushing.withLock { flushing in
            guard flushing.task == nil, !flushing.stopped else { return }
            flushing.task = Task { [weak self, interval] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard let self, !Task.isCancelled else { return }
                    guard self.written.exchange(false, ordering: .relaxed) else { continue }
                    guard await self.merge() else { return }
                }
            }
        }
    }

    /// Stops the merging, for good: a write after this starts nothing.
    func stop() {
        flushing.withLock { flushing in
            flushing.task?.cancel()
            flushing.stopped = true
        }
    }

    private struct Flushing {
        var task: Task<Void, Never>?
        var stopped = false
    }

    /// Merges the pending list; false when this role may not.
    private func merge() async -> Bool {
        do {
            _ = try await database.client.query("SELECT gin_clean_pending_list('report_search'::regclass)", logger: database.logger).collect()
            merged.add(1, ordering: .relaxed)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == Self.refusedByRights {
            database.logger.warning("the trigram index's pending list is merged by the writers: this role does not own index report_search")
            refused.store(true, ordering: .relaxed)
            return false
        } catch {
            // The connection lost, the database restarting: the next interval tries again.
            written.store(true, ordering: .relaxed)
            if !failureLogged.exchange(true, ordering: .relaxed) {
                database.logger.warning("merging the trigram index's pending list failed, tried again every interval: \(loggable(error))")
            }
        }
        return true
    }
}
