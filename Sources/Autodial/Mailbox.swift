import Foundation
import Synchronization

/// Values handed from one thread or task to the one that waits for them, with a deadline:
/// baresip's events to the call, the end of a call to the dialer's loop.
final class Mailbox<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        var waiter: (token: UInt64, continuation: CheckedContinuation<Element?, Never>)?
        var closed = false
        var nextToken: UInt64 = 0
    }
    private let state = Mutex(State())

    func put(_ event: Element) {
        let waiter = state.withLock { s -> CheckedContinuation<Element?, Never>? in
            if let w = s.waiter {
                s.waiter = nil
                return w.continuation
            }
            s.buffer.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    func close() {
        let waiter = state.withLock { s -> CheckedContinuation<Element?, Never>? in
            s.closed = true
            defer { s.waiter = nil }
            return s.waiter?.continuation
        }
        waiter?.resume(returning: nil)
    }

    func drain() { state.withLock { $0.buffer.removeAll() } }

    /// The next event, or nil at the deadline or when the connection has ended; when
    /// `cancellable`, also nil as soon as the waiting task is cancelled.
    func next(until deadline: Date, cancellable: Bool = false) async -> Element? {
        guard cancellable else { return await wait(until: deadline) }
        let token = Mutex<UInt64?>(nil)
        return await withTaskCancellationHandler {
            // Cancelled before the waiter was registered: the handler found no token.
            await wait(until: deadline) { t in
                token.withLock { $0 = t }
                if Task.isCancelled { self.expire(t) }
            }
        } onCancel: {
            if let t = token.withLock({ $0 }) { self.expire(t) }
        }
    }

    /// Wakes the waiter `token` with nil, if it still waits.
    private func expire(_ token: UInt64) {
        let expired = state.withLock { s -> CheckedContinuation<Element?, Never>? in
            guard let w = s.waiter, w.token == token else { return nil }
            s.waiter = nil
            return w.continuation
        }
        expired?.resume(returning: nil)
    }

    private func wait(until deadline: Date, registered: @Sendable (UInt64) -> Void = { _ in }) async -> Element? {
        await withCheckedContinuation { continuation in
            let token = state.withLock { s -> UInt64? in
                if !s.buffer.isEmpty {
                    continuation.resume(returning: s.buffer.removeFirst())
                    return nil
                }
                if s.closed {
                    continuation.resume(returning: nil)
                    return nil
                }
                s.nextToken += 1
                s.waiter = (s.nextToken, continuation)
                return s.nextToken
            }
            guard let token else { return }
            registered(token)
            let wait = max(0, deadline.timeIntervalSinceNow)
            Task {
                try? await Task.sleep(for: .seconds(wait))
                self.expire(token)
            }
        }
    }
}
