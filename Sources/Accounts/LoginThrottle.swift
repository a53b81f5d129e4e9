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
        failures.withLock { failures in
            let waits = keys.compactMap { key, limit -> TimeInterval? in
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

    public func forget(_ keys: [String]) {
        failures.withLock { failures in for key in keys { failures[key] = nil } }
    }
}

/// Failed sign-ins slow the one guessing, not the account's owner. A login tried from one
/// client address may fail `perAccountAndClient` times within `window`, and one address
/// `perClient` times whatever the logins; then that pair, or that address, waits. Nothing
/// counts failures of an account from every address together: a stranger's guesses from
/// elsewhere never keep its owner out (each guess still costs the guesser a bcrypt
/// check, and passwords are long and not common ones).
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
        counter.wait([(Self.pair(login, client), perAccountAndClient), ("client:" + client, perClient)], now: now)
    }

    public func failed(login: String, client: String, now: Date = Date()) {
        counter.failed([Self.pair(login, client), "client:" + client], now: now)
    }

    /// Forgets the failures of the login from this client (never the address's own: one
    /// good account would otherwise clear it for guesses at others).
    public func succeeded(login: String, client: String) {
        counter.forget([Self.pair(login, client)])
    }

    private static func pair(_ login: String, _ client: String) -> String { "login:" + login + "\u{0}" + client }
}

/// Registrations. One email may be named by `perEmail` registrations within `window`, and
/// one client address may be told `perClientTaken` times that an email is already
/// registered: the answer a person needs to sign in instead, and the one an enumerator
/// wants. (The rate limit of registrations per address applies before both.)
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
        counter.wait([("email:" + email, perEmail), ("taken:" + client, perClientTaken)], now: now)
    }

    /// Counts a registration naming `email`.
    func attempted(email: String, now: Date = Date()) { counter.failed(["email:" + email], now: now) }

    /// Counts an answer to `client` that an email is taken.
    func toldTaken(client: String, now: Date = Date()) { counter.failed(["taken:" + client], now: now) }
}
