import Foundation
import Synchronization

/// Failed logins remembered per account and per client address: after `limit` failures
/// within `window`, further attempts are refused until the oldest of them leaves the
/// window. In memory, so a restart forgets (bcrypt still makes guessing slow).
public final class LoginThrottle: Sendable {
    public let limit: Int
    public let window: TimeInterval
    private let failures = Mutex<[String: [Date]]>([:])

    public init(limit: Int = 5, window: TimeInterval = 15 * 60) {
        self.limit = limit
        self.window = window
    }

    /// How long the keys must wait before the next attempt, or nil when they may try now.
    public func wait(_ keys: [String], now: Date = Date()) -> TimeInterval? {
        failures.withLock { failures in
            let waits = keys.compactMap { key -> TimeInterval? in
                let recent = (failures[key] ?? []).filter { now.timeIntervalSince($0) < window }
                failures[key] = recent.isEmpty ? nil : recent
                guard recent.count >= limit else { return nil }
                return recent[recent.count - limit].addingTimeInterval(window).timeIntervalSince(now)
            }
            return waits.max()
        }
    }

    public func failed(_ keys: [String], now: Date = Date()) {
        failures.withLock { failures in
            for key in keys { failures[key, default: []].append(now) }
            // Bounded: keys with nothing recent are dropped when the map grows large.
            if failures.count > 100_000 { failures = failures.filter { $0.value.contains { now.timeIntervalSince($0) < window } } }
        }
    }

    /// Forgets the failures of these keys (an account after its successful login; never a
    /// client address, which one good account would otherwise clear for guesses at others).
    public func succeeded(_ keys: [String]) {
        failures.withLock { failures in for key in keys { failures[key] = nil } }
    }
}
