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

    /// The next event, or nil at the deadline or when the connection has ended.
    func next(until deadline: Date) async -> Element? {
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
            let wait = max(0, deadline.timeIntervalSinceNow)
            Task {
                try? await Task.sleep(for: .seconds(wait))
                let expired = self.state.withLock { s -> CheckedContinuation<Element?, Never>? in
                    guard let w = s.waiter, w.token == token else { return nil }
                    s.waiter = nil
                    return w.continuation
                }
                expired?.resume(returning: nil)
            }
        }
    }
}
