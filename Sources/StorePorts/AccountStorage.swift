import Foundation
import ReportModel

/// Where accounts, their sessions, API keys, the keys that sign access tokens and the
/// account events are kept. The account service (`Accounts`) is its only caller: it
/// makes the secrets and hands the store only their hashes, and it decides the rules
/// (lifetimes, what a role may do); a store keeps rows and keeps them consistent.
///
/// Requirements every store meets (the conformance suite checks them):
/// - **Emails are unique by their key** (the lowercased form): a second account with one
///   is ``EmailTaken`` and writes nothing. Phones are not unique.
/// - **Every change that ends or narrows a credential's power is an account event**,
///   written in the same transaction as the change: a session ended (by any path), an
///   account updated (its role and state as they are after), an API key revoked.
///   Disabling an account ends its open sessions in that same transaction.
/// - **The account events are numbered in commit order, one after another**: a reader
///   that has seen event N never later finds one below N, and the event after N is N + 1.
///   The only gap is a pruned prefix: events are kept at least ``eventRetention``, and
///   never the newest, so that a reader that was away longer sees that the first event
///   after its number is not the next number, and reloads (``revocations(since:)``). (A
///   reader takes any gap for pruning, so a store whose numbers can skip must close the
///   gap, not leave it.)
/// - **A refresh token is used once**: rotating it is atomic, so of two uses of one token
///   at most one rotates; a token replaced before is ``RefreshOutcome/reused(sessionID:)``
///   and ends its session.
public protocol AccountStorage: Sendable {
    /// Where the throttles of sign-ins and registrations count attempts (see ``AttemptLedger``).
    var attempts: any AttemptLedger { get }

    // MARK: Accounts

    /// Adds an account; ``EmailTaken`` when its email key is registered already.
    func createAccount(_ account: NewAccount, now: Date) async throws -> Account
    func account(id: Int64) async throws -> Account?
    /// The account with this email key, and its password hash.
    func account(emailKey: String) async throws -> (account: Account, passwordHash: String)?
    /// Accounts in id order after `after`, at most `limit`, of one role when given.
    func accounts(role: Role?, after: Int64, limit: Int) async throws -> [Account]
    /// Changes what is given; the account as it is now. ``AccountNotFound`` for an unknown
    /// id. Writes an account event, and ends the account's sessions when it disables it.
    func updateAccount(id: Int64, role: Role?, name: String?, disabled: Bool?, now: Date) async throws -> Account
    func passwordHash(id: Int64) async throws -> String?
    /// Replaces the password hash and ends every other session of the account (each with
    /// an account event), in one transaction. ``AccountNotFound`` for an unknown id.
    func setPasswordHash(id: Int64, _ hash: String, endingSessionsExcept kept: String?, now: Date) async throws
    func recordLogin(id: Int64, at: Date) async throws

    // MARK: Sessions

    /// Adds a session with the hash of its refresh token, and forgets sessions that ended
    /// or expired before `forgetBefore`. With `passwordHash`, only while the account's
    /// password hash is still that one and the account is not disabled: a login checks the
    /// password (a quarter of a second) before its session starts, and a password change
    /// or a disable in between must end it too. Whether the session started.
    @discardableResult
    func startSession(_ session: Session, refreshHash: Data, forgetBefore: Date, ifPasswordHash passwordHash: String?) async throws -> Bool
    /// Replaces the session's refresh token whose hash is `presented` with `next`, moving
    /// its expiry to `expiresAt`; the session's last `kept` replaced hashes are remembered,
    /// so that one presented again ends the session. A token that names its `session`
    /// (all since tokens carry it) and is not that open session's current one ends it
    /// too, however many rotations ago it was replaced; one that names another session
    /// than its own is unknown.
    func rotateRefresh(presented: Data, session: String?, next: Data, expiresAt: Date, kept: Int, now: Date) async throws -> RefreshOutcome
    /// Ends the open sessions picked, each with an account event; how many.
    func endSessions(_ which: SessionSelection, now: Date) async throws -> Int
    /// The account's sessions open at `now`, newest first.
    func openSessions(accountID: Int64, now: Date) async throws -> [Session]

    // MARK: API keys

    func createAPIKey(name: String, role: Role, keyHash: Data, now: Date) async throws -> APIKey
    /// The key with this hash, unless revoked.
    func apiKey(hash: Data) async throws -> APIKey?
    func apiKeys() async throws -> [APIKey]
    /// Revokes a key (an account event the first time); ``APIKeyNotFound`` for an unknown id.
    func revokeAPIKey(id: Int64, now: Date) async throws

    // MARK: Signing keys

    /// The keys that sign access tokens, the last added first; `first` is stored when there
    /// is none.
    func signingKeys(storingIfNone first: SigningKey) async throws -> [SigningKey]
    /// Adds a key, which becomes the first, and keeps only the `keeping` last added.
    func addSigningKey(_ key: SigningKey, keeping: Int) async throws

    // MARK: Account events

    /// Up to `limit` events after number `seq`, in number order.
    func accountEvents(after seq: Int64, limit: Int) async throws -> [NumberedAccountEvent]
    /// What the store says now of credentials ended or narrowed since `since`, as of the
    /// newest event: one consistent snapshot (a single read transaction).
    func revocations(since: Date) async throws -> RevocationSnapshot
}

/// How long every store keeps account events at least: the life of the tokens they
/// narrow, many times over (a process reloads when it was away longer).
public let eventRetention: TimeInterval = 86_400

/// An account as the account service makes it: its fields checked, its password hashed.
public struct NewAccount: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var email: String
    /// The form emails are compared by (lowercased).
    public var emailKey: String
    public var phone: String
    public var role: Role
    public var passwordHash: String

    public init(name: String, email: String, emailKey: String, phone: String, role: Role, passwordHash: String) {
        (self.name, self.email, self.emailKey, self.phone, self.role, self.passwordHash) = (name, email, emailKey, phone, role, passwordHash)
    }

    /// Never the hash: a log line or a failed test's message may print it.
    public var description: String { "NewAccount(\(role) \(email))" }
}

/// Which open sessions to end.
public enum SessionSelection: Sendable, Hashable {
    /// One session, if it is the account's.
    case one(id: String, accountID: Int64)
    /// Every session of the account but one.
    case all(accountID: Int64, except: String?)
}

/// What a refresh token turned out to be.
public enum RefreshOutcome: Sendable, Equatable {
    /// The session's current token: now replaced.
    case rotated(Session)
    /// A token the session had before: the session is ended.
    case reused(sessionID: String)
    /// No session's token (unknown, expired, or of an ended session).
    case unknown
}

/// A key that signs access tokens: its id (the token's `kid`) and 256 random bits.
public struct SigningKey: Sendable, Hashable {
    public var kid: String
    public var secret: Data
    public var createdAt: Date

    public init(kid: String, secret: Data, createdAt: Date) {
        (self.kid, self.secret, self.createdAt) = (kid, secret, createdAt)
    }
}

/// An account event with its number and time.
public struct NumberedAccountEvent: Sendable, Hashable {
    public var seq: Int64
    public var at: Date
    public var event: AccountEvent

    public init(seq: Int64, at: Date, event: AccountEvent) {
        (self.seq, self.at, self.event) = (seq, at, event)
    }
}

/// Credentials ended or narrowed, as the tables say at one moment: the number of the
/// newest account event then, the sessions ended since a time, every disabled account,
/// the role changes since that time (oldest first), and every revoked API key.
public struct RevocationSnapshot: Sendable {
    public var seq: Int64
    public var endedSessions: [String: Date]
    public var disabledAccounts: Set<Int64>
    public var roleChanges: [(accountID: Int64, role: Role, at: Date)]
    public var revokedKeys: Set<Int64>

    public init(
        seq: Int64, endedSessions: [String: Date], disabledAccounts: Set<Int64>, roleChanges: [(accountID: Int64, role: Role, at: Date)],
        revokedKeys: Set<Int64>
    ) {
        (self.seq, self.endedSessions, self.disabledAccounts, self.roleChanges, self.revokedKeys) =
            (seq, endedSessions, disabledAccounts, roleChanges, revokedKeys)
    }
}

/// The email of a new account is already registered.
public struct EmailTaken: Error, Sendable, Hashable, CustomStringConvertible {
    public init() {}
    public var description: String { "is already registered" }
}

/// No account has this id.
public struct AccountNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: Int64
    public init(id: Int64) { self.id = id }
    public var description: String { "account \(id) does not exist" }
}

/// No API key has this id.
public struct APIKeyNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: Int64
    public init(id: Int64) { self.id = id }
    public var description: String { "API key \(id) does not exist" }
}
