import Foundation
import StorePorts

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
    public let window: TimeInterval
    /// Where failures are counted: shared by every replica when the store shares it.
    let ledger: any AttemptLedger

    public init(perAccountAndClient: Int = 5, perClient: Int = 20, window: TimeInterval = 15 * 60, ledger: any AttemptLedger = MemoryAttemptLedger()) {
        self.perAccountAndClient = perAccountAndClient
        self.perClient = perClient
        self.window = window
        self.ledger = ledger
    }

    /// How long `client` must wait before trying `login` again, or nil.
    public func wait(login: String, client: String, now: Date = Date()) async throws -> TimeInterval? {
        try await ledger.wait(keys(login, client), window: window, now: now)
    }

    /// Starts an attempt at `now`, counted as a failure until ``succeeded(login:client:at:)``;
    /// or how long `client` must wait before trying `login` again.
    public func attempt(login: String, client: String, now: Date = Date()) async throws -> TimeInterval? {
        try await ledger.take(keys(login, client), window: window, now: now)
    }

    /// The attempt started at `time` succeeded: the login's failures from this client are
    /// forgotten, and the address's count of this attempt taken back (never its earlier
    /// failures: one good account would otherwise clear them for guesses at others).
    public func succeeded(login: String, client: String, at time: Date) async throws {
        try await ledger.forget([Self.pair(login, client)])
        try await ledger.giveBack(["client:" + client], at: time)
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
    public let window: TimeInterval
    let ledger: any AttemptLedger

    public init(perEmail: Int = 3, perClientTaken: Int = 3, window: TimeInterval = 60 * 60, ledger: any AttemptLedger = MemoryAttemptLedger()) {
        self.perEmail = perEmail
        self.perClientTaken = perClientTaken
        self.window = window
        self.ledger = ledger
    }

    /// How long `client` must wait before registering `email` (its key), or nil.
    func wait(email: String, client: String, now: Date = Date()) async throws -> TimeInterval? {
        try await ledger.wait(keys(email, client), window: window, now: now)
    }

    /// Starts a registration of `email` by `client` at `now`, or says how long to wait.
    func attempt(email: String, client: String, now: Date = Date()) async throws -> TimeInterval? {
        try await ledger.take(keys(email, client), window: window, now: now)
    }

    /// The registration started at `time` did not find its email taken.
    func emailWasFree(client: String, at time: Date) async throws { try await ledger.giveBack(["taken:" + client], at: time) }

    private func keys(_ email: String, _ client: String) -> [(key: String, limit: Int)] {
        [("email:" + email, perEmail), ("taken:" + client, perClientTaken)]
    }
}
