import Dispatch
import Foundation
import Synchronization

/// Work kept off Swift's cooperative thread pool: synchronous work run on blocking threads
/// (``run(on:_:)``), and async work whose store calls are done in place, on the same
/// threads (``offPool(_:)``).
public enum Blocking {
    public static let queue = DispatchQueue(label: "posterwatch.blocking", attributes: .concurrent)

    /// The threads of ``queue`` as a task executor (see ``offPool(_:)``).
    public static let executor = BlockingExecutor()

    /// Runs `body`, and every async function it calls that is not bound to an actor, on the
    /// threads of ``queue`` instead of the cooperative pool, and waits. A store whose async
    /// methods do their work in place (SQLite: a read is a few microseconds of file access)
    /// is called from here; a networked store suspends here as anywhere. Nested calls cost
    /// no further hop (measured: 0.3 µs), so a service can enter it for each read while the
    /// server enters it once per request: the in-memory work of an answer then stays off
    /// the two cooperative threads, which move the bytes (keeping z14 clusters on it was
    /// 15-20 % slower under wrk).
    public static func offPool<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        try await withTaskExecutorPreference(executor, operation: body)
    }

    /// Runs `body` on `queue` (by default one that runs any number at once) and waits.
    public static func run<T: Sendable>(on queue: DispatchQueue = queue, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// The blocking threads as an executor of tasks' jobs.
public final class BlockingExecutor: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job), executor = asUnownedTaskExecutor()
        Blocking.queue.async { job.runSynchronously(on: executor) }
    }
}

/// Synchronous work of which at most `width` pieces run at once, off the cooperative pool;
/// the rest wait their turn, first come first served. Photo decoding runs this way, so that
/// a burst of uploads cannot take every core from the reads.
public final class Lanes: Sendable {
    private let state: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    public init(width: Int) {
        precondition(width >= 1, "a lane at least")
        state = Mutex((free: width, waiting: []))
    }

    /// Runs `body` on ``Blocking/queue`` once a lane is free, and waits for it.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        await enter()
        defer { leave() }
        return try await Blocking.run(body)
    }

    private func enter() async {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = state.withLock { lanes in
                guard lanes.free > 0 else {
                    lanes.waiting.append(turn)
                    return false
                }
                lanes.free -= 1
                return true
            }
            if now { turn.resume() }
        }
    }

    /// Hands the lane to the first waiter, or frees it.
    private func leave() {
        let next = state.withLock { lanes -> CheckedContinuation<Void, Never>? in
            guard !lanes.waiting.isEmpty else {
                lanes.free += 1
                return nil
            }
            return lanes.waiting.removeFirst()
        }
        next?.resume()
    }
}
