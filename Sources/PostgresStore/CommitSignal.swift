import Foundation
import PostgresNIO
import Synchronization

/// News of commits, from any process on the database: a connection of its own LISTENs to
/// ``channel`` (every write transaction notifies it as it commits), and each notification
/// moves ``generation`` on and wakes the waiters. Should the connection be lost, it is
/// opened again a second later; waiters look at the data again at least every ``recheck``
/// meanwhile, so a lost notification delays a follower, never loses a change.
final class CommitSignal: Sendable {
    static let channel = "posterwatch_change"
    /// The longest a waiter goes without looking at the last change number itself.
    static let recheck = Duration.seconds(1)

    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())
    private let listening = Mutex<Task<Void, Never>?>(nil)
    private let database: PostgresDatabase

    init(_ database: PostgresDatabase) {
        self.database = database
    }

    /// How many notifications have arrived (and reconnections made).
    var generation: UInt64 {
        startListening()
        return state.withLock { $0.generation }
    }

    /// Starts the listening connection, once (lazily: a command that never follows the
    /// log never opens it).
    private func startListening() {
        listening.withLock { task in
            guard task == nil else { return }
            task = Task { [database, weak self] in
                while !Task.isCancelled {
                    // Lost or refused: waiters recheck by themselves meanwhile.
                    if let connection = try? await database.connect() {
                        try? await withTaskCancellationHandler {
                            try await connection.listen(on: Self.channel) { notifications in
                                self?.notify()  // whatever came while it was not listening
                                for try await _ in notifications { self?.notify() }
                            }
                        } onCancel: {
                            connection.close().whenComplete { _ in _ = connection }
                        }
                        try? await connection.close()
                    }
                    self?.notify()
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    func stop() {
        listening.withLock { $0?.cancel() }
    }

    /// Moves the generation on and wakes every waiter.
    private func notify() {
        let waiters = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when the generation has moved past `generation`, or after `timeout`.
    func wait(beyond generation: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForNotification(beyond: generation) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForNotification(beyond generation: UInt64) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
