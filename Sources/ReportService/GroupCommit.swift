import Clustering
import Dispatch
import Foundation
import Tally
import StorePorts
import Synchronization

/// What a committed write changes in the index, and the entries it touched (the old and
/// new versions), for the observers.
struct IndexEffect: Sendable {
    var changes: [ClusterIndex.Change] = []
    var touched: [ClusterEntry] = []
    /// What the write changes in the phone tally.
    var phones: [ReportTally.Change] = []
    /// The reports whose rows changed: written by the transaction, or by other processes
    /// as the change log says (the row cache drops them).
    var rowsChanged: [Int64] = []
    /// An index and a tally rebuilt from the rows, to take the place of those served
    /// (before the changes of this and later effects are applied), and the last change
    /// they include. A replacement and a pass stay the caller's when effects are added.
    var replacement: (index: ClusterIndex, tally: ReportTally, through: Int64)?
    /// A pass over the change log: what it read, whose every change is in the index once
    /// the effect is applied.
    var pass: FollowedChange.Pass?

    /// Adds another write's effect after this one's (a replacement stays the caller's).
    static func += (total: inout IndexEffect, other: IndexEffect) {
        total.changes += other.changes
        total.touched += other.touched
        total.phones += other.phones
        total.rowsChanged += other.rowsChanged
    }
}

/// Writes waiting their turn, committed together by one thread: every write waiting when
/// a transaction begins joins it (``ReportWrites/commit(_:)``: one that fails leaves
/// nothing), so writers arriving together share one commit, and one sync of the disc,
/// instead of queuing for one each.
/// Only after the commit are the writes applied, in order, to the index (and its
/// observers told); only then is each writer answered. So no write reaches the index,
/// nor a client, before it is in the database.
package final class GroupCommit: Sendable {
    struct Pending: Sendable {
        let write: @Sendable (any ReportTransaction) throws -> IndexEffect
        let done: @Sendable (Result<Void, any Error>) -> Void
    }

    /// At most this many writes share a transaction (a bound on how long one writer waits
    /// behind the others).
    static let maxBatch = 512

    private let storage: any ReportWrites
    /// Applies a transaction's effects, told the change numbers it gave out.
    private let apply: @Sendable ([IndexEffect], ChangeNumbers?) -> Void
    private let queue = Mutex<[Pending]>([])
    /// How many transactions have been committed (or tried), for tests and metrics.
    package let transactions = Atomic<Int>(0)
    /// Told the number of writes of each transaction once it is committed (metrics).
    private let batchObservers = Mutex<[@Sendable (Int) -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    init(storage: any ReportWrites, apply: @escaping @Sendable ([IndexEffect], ChangeNumbers?) -> Void) {
        self.storage = storage
        self.apply = apply
        let thread = Thread { [self] in run() }
        thread.name = "posterwatch.writer"
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Adds an observer of the batches: it hears each transaction's number of writes.
    package func onBatch(_ observer: @escaping @Sendable (Int) -> Void) {
        batchObservers.withLock { $0.append(observer) }
    }

    /// Queues a write; `done` is called once it is committed and applied, or has failed.
    func submit(_ pending: Pending) {
        queue.withLock { $0.append(pending) }
        ready.signal()
    }

    /// Runs `write` in the next transaction and waits for it.
    func perform<T: Sendable>(_ write: @escaping @Sendable (any ReportTransaction) throws -> (T, IndexEffect)) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit(write) { continuation.resume(with: $0) }
        }
    }

    /// The same, for a caller that is not async (tests, the benchmarks): blocks its thread.
    func performWaiting<T: Sendable>(_ write: @escaping @Sendable (any ReportTransaction) throws -> (T, IndexEffect)) throws -> T {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        submit(write) { result in
            outcome.withLock { $0 = result }
            finished.signal()
        }
        finished.wait()
        return try outcome.withLock { $0! }.get()
    }

    private func submit<T: Sendable>(
        _ write: @escaping @Sendable (any ReportTransaction) throws -> (T, IndexEffect), then done: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let value = Mutex<T?>(nil)
        submit(Pending(
            write: { transaction in
                var (result, effect) = try write(transaction)
                effect.rowsChanged += transaction.takeReportsWritten()
                value.withLock { $0 = result }
                return effect
            },
            done: { outcome in done(outcome.map { value.withLock { $0.take()! } }) }))
    }

    /// The first ``maxBatch`` writes of `pending`, taken out of it. The whole queue, the
    /// common case, is swapped out, not copied: with a copy sharing the queue's buffer and
    /// then the removal, one buffer a transaction stayed alive (some 2 KB a write: `make
    /// soak`'s memory grew 132% in 10 min; heaptrack named this line). Swapped, it is flat.
    private static func take(_ pending: inout [Pending]) -> [Pending] {
        guard pending.count > maxBatch else {
            var all: [Pending] = []
            swap(&all, &pending)
            return all
        }
        let taken = Array(pending[..<maxBatch])
        pending.removeFirst(maxBatch)
        return taken
    }

    private func run() {
        while true {
            ready.wait()
            let batch = queue.withLock { pending in Self.take(&pending) }
            guard !batch.isEmpty else { continue }
            // The semaphore counted one signal per write; those taken along are used up.
            for _ in 1..<batch.count { ready.wait() }
            let committed = storage.commitNumbered(batch.map { $0.write })
            let outcomes = committed.outcomes
            transactions.add(1, ordering: .relaxed)
            for observer in batchObservers.withLock({ $0 }) { observer(batch.count) }
            apply(outcomes.compactMap { try? $0.get() }, committed.numbers)
            for (pending, outcome) in zip(batch, outcomes) { pending.done(outcome.map { _ in () }) }
        }
    }
}
