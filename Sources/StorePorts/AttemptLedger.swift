import Foundation
import Synchronization

/// Attempts counted per key within a window, for the throttles of sign-ins and
/// registrations (`Accounts`): a key that counted `limit` attempts within the window
/// waits until the oldest of them leaves it.
///
/// Requirements (the conformance suite checks them): ``take(_:window:now:)`` checks and
/// counts in one step, so attempts made at once, in one process or several, cannot all
/// pass the check before any is counted; what every process serving one database counts
/// is one count when the store shares it (PostgreSQL's does; SQLite's is the process's own,
/// in memory, as a single server on one machine needs).
public protocol AttemptLedger: Sendable {
    /// How long the most held back of the keys must wait, each against its own limit, or
    /// nil when none is held back.
    func wait(_ keys: [(key: String, limit: Int)], window: TimeInterval, now: Date) async throws -> TimeInterval?
    /// Counts an attempt for each key at `now`, unless one of them is held back: then it
    /// counts nothing and says how long to wait.
    func take(_ keys: [(key: String, limit: Int)], window: TimeInterval, now: Date) async throws -> TimeInterval?
    /// Takes back the attempt each key counted at `time`.
    func giveBack(_ keys: [String], at time: Date) async throws
    /// Forgets every attempt of these keys.
    func forget(_ keys: [String]) async throws
}

extension AttemptLedger {
    /// When the most held back of these keys, with the times of their attempts within the
    /// window (oldest first), may try again; nil when none is held back.
    public static func wait(_ recent: [(times: [Date], limit: Int)], window: TimeInterval, now: Date) -> TimeInterval? {
        recent.compactMap { times, limit -> TimeInterval? in
            guard times.count >= limit else { return nil }
            return times[times.count - limit].addingTimeInterval(window).timeIntervalSince(now)
        }.max()
    }
}

/// The attempts of this process, in memory: a restart forgets them (bcrypt still makes
/// guessing slow). Bounded: keys with nothing recent are dropped when the map grows large.
public final class MemoryAttemptLedger: AttemptLedger {
    private let attempts = Mutex<[String: [Date]]>([:])

    public init() {}

    public func wait(_ keys: [(key: String, limit: Int)], window: TimeInterval, now: Date) -> TimeInterval? {
        attempts.withLock { attempts in Self.wait(keys, &attempts, window: window, now: now) }
    }

    public func take(_ keys: [(key: String, limit: Int)], window: TimeInterval, now: Date) -> TimeInterval? {
        attempts.withLock { attempts in
            if let wait = Self.wait(keys, &attempts, window: window, now: now) { return wait }
            for (key, _) in keys { attempts[key, default: []].append(now) }
            if attempts.count > 100_000 { attempts = attempts.filter { $0.value.contains { now.timeIntervalSince($0) < window } } }
            return nil
        }
    }

    public func giveBack(_ keys: [String], at time: Date) {
        attempts.withLock { attempts in
            for key in keys {
                guard let index = attempts[key]?.lastIndex(of: time) else { continue }
                attempts[key]!.remove(at: index)
                if attempts[key]!.isEmpty { attempts[key] = nil }
            }
        }
    }

    public func forget(_ keys: [String]) {
        attempts.withLock { attempts in for key in keys { attempts[key] = nil } }
    }

    /// The wait, dropping what left the window.
    private static func wait(_ keys: [(key: String, limit: Int)], _ attempts: inout [String: [Date]], window: TimeInterval, now: Date) -> TimeInterval? {
        let recent = keys.map { key, limit in
            let times = (attempts[key] ?? []).filter { now.timeIntervalSince($0) < window }
            attempts[key] = times.isEmpty ? nil : times
            return (times, limit)
        }
        return wait(recent, window: window, now: now)
    }
}
