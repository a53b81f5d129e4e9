import Foundation
import Synchronization

/// Failures remembered per key: a key that failed `limit` times within `window` waits
/// until the oldest of them leaves the window. In memory, so a restart forgets (bcrypt
/// still makes guessing slow).
public final class FailureCounter: Sendable {
    public let window: TimeInterval
    private let failures = Mutex<[String: [Date]]>([:])

    public init(window: TimeInterval) {
        self.window = window
    }

    /// How long the most held back of the keys must wait, each against its own limit, or
    /// nil when none is held back.
    public func wait(_ keys: [(key: String, limit: Int)], now: Date = Date()) -> TimeInterval? {
        failures.withLock { failures in Self.wait(keys, &failures, now: now, window: window) }
    }

    /// Counts a failure for each key at `now`, unless one of them is held back: then it
    /// counts nothing and says how long to wait. The check and the count are one step, so
    /// attempts made in parallel cannot all pass the check before any is counted; one that
    /// turns out well gives its count back (``giveBack(_:at:)``).
    public func take(_ keys: [(key: String, limit: Int)], now: Date = Date()) -> TimeInterval? {
        failures.withLock { failures in
            if let wait = Self.wait(keys, &failures, now: now, window: window) { return wait }
            for (key, _) in keys { failures[key, default: []].append(now) }
            // Bounded: keys with nothing recent are dropped when the map grows large.
            if failures.count > 100_000 { failures = failures.filter { $0.value.contains { now.timeIntervalSince($0) < window } } }
            return nil
        }
    }

    /// Takes back the failure each key counted at `time`.
    public func giveBack(_ keys: [String], at time: Date) {
        failures.withLock { failures in
            for key in keys {
                guard let index = failures[key]?.lastIndex(of: time) else { continue }
                failures[key]!.remove(at: index)
                if failures[key]!.isEmpty { failures[key] = nil }
            }
        }
    }

    public func forget(_ keys: [String]) {
        failures.withLock { failures in for key in keys { failures[key] = nil } }
    }

    private static func wait(_ keys: [(key: String, limit: Int)], _ failures: inout [String: [Date]], now: Date, window: TimeInterval) -> TimeInterval? {
        let waits = keys.compactMap { key, limit -> TimeInterval? in
            let recent = (failures[key] ?? []).filter { now.timeIntervalSince($0) < window }
            failures[key] = recent.isEmpty ? nil : recent
            guard recent.count >= limit else { return nil }
            return recent[recent.count - limit].addingTimeInterval(window).timeIntervalSince(now)
        }
        return waits.max()
    }
}

/// Failed sign-ins slow the one guessing, not the account's owner. A login tried from one
/// client address may fail `perAccountAndClient` times within `window`, and one address
/// `perClient` times whatever the logins; then that pair, or that address, waits. Nothing
/// counts failures of an account from every address together: a stranger's guesses from
/// elsewhere never keep its owner out (each guess still costs the guesser a bcrypt
/// check, and passwords are long and not common ones). An attempt counts as a failure
/// from its start, so parallel guesses cannot outrun the count; one that succeeds gives
/// its count back. `client` is what the rate limits count as one client (an IPv6
/// address's /64), so that a subscriber cannot take a fresh address per guess.
public final class LoginThrottle: Sendable {
    public let perAccountAndClient: Int
    public let perClient: Int
    private let counter: FailureCounter

    public init(perAccountAndClient: Int = 5, perClient: Int = 20, window: TimeInterval = 15 * 60) {
        self.perAccountAndClient = perAccountAndClient
        self.perClient = perClient
        counter = FailureCounter(window: window)
    }

    /// How long `client` must wait before trying `login` again, or nil.
    public func wait(login: String, client: String, now: Date = Date()) -> TimeInterval? {
        counter.wait(keys(login, client), now: now)
    }

    /// Starts an attempt at `now`, counted as a failure until ``succeeded(login:client:at:)``;
    /// or how long `client` must wait before trying `login` again.
    public func attempt(login: String, client: String, now: Date = Date()) -> TimeInterval? {
        counter.take(keys(login, client), now: now)
    }

    /// The attempt started at `time` succeeded: the login's failures from this client are
    /// forgotten, and the address's count of this attempt taken back (never its earlier
    /// failures: one good account would otherwise clear them for guesses at others).
    public func succeeded(login: String, client: String, at time: Date) {
        counter.forget([Self.pair(login, client)])
        counter.giveBack(["client:" + client], at: time)
    }

    private func keys(_ login: String, _ client: String) -> [(key: String, limit: Int)] {
        [(Self.pair(login, client), perAccountAndClient), ("client:" + client, perClient)]
    }

    private static func pair(_ login: String, _ client: String) -> String { "login:" + login + "\u{0}" + client }
}

/// Registrations. One email may be named by `perEmail` registrations within `window`, and
/// one client address may be told `perClientTaken` times that an email is already
/// registered: the answer a person needs to sign in instead, and the one an enumerator
/// wants. An attempt is counted as told until it turns out the email was free, so
/// parallel attempts cannot outrun the count. (The rate limit of registrations per
/// address applies before both.)
public final class RegistrationThrottle: Sendable {
    public let perEmail: Int
    public let perClientTaken: Int
    private let counter: FailureCounter

    public init(perEmail: Int = 3, perClientTaken: Int = 3, window: TimeInterval = 60 * 60) {
        self.perEmail = perEmail
        self.perClientTaken = perClientTaken
        counter = FailureCounter(window: window)
    }

    /// How long `client` must wait before registering `email` (its key), or nil.
    func wait(email: String, client: String, now: Date = Date()) -> TimeInterval? {
        counter.wait(keys(email, client), now: now)
    }

    /// Starts a registration of `email` by `client` at `now`, or says how long to wait.
    func attempt(email: String, client: String, now: Date = Date()) -> TimeInterval? {
        counter.take(keys(email, client), now: now)
    }

    /// The registration started at `time` did not find its email taken.
    func emailWasFree(client: String, at time: Date) { counter.giveBack(["taken:" + client], at: time) }

    private func keys(_ email: String, _ client: String) -> [(key: String, limit: Int)] {
        [("email:" + email, perEmail), ("taken:" + client, perClientTaken)]
    }
}
