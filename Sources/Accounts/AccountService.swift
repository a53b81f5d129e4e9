import Dispatch
import Foundation
import Geometry
import ReportStore
import Synchronization

/// The one door to accounts: registration, logins, refreshes, logouts, password changes,
/// administration, and who an access token speaks for.
///
/// Passwords are hashed and checked on a Dispatch thread (bcrypt takes about a quarter of
/// a second at cost 12), never on the threads that serve requests. Ended sessions and
/// disabled accounts are kept in memory (loaded at start, kept by every change made
/// here), so their access tokens stop at the next request rather than when they expire.
public final class AccountService: Sendable {
    public let accounts: AccountStore
    public let sessions: SessionStore
    public let apiKeys: APIKeyStore
    let tokens: AccessTokens
    let passwords: Passwords
    let throttle: LoginThrottle
    private let revoked: Mutex<Revoked>
    /// Access tokens already verified, with what they say and when they expire. A client
    /// presents the same token for its 15 minutes, and checking the signature each time
    /// would cost more than the rest of a small request. Keyed by the whole token, its
    /// signature included, so only a token verified before can hit; emptied when full.
    private let verified = Mutex<[String: (identity: Identity, expires: Date)]>([:])
    static let verifiedLimit = 50_000
    /// Accounts as last read or written here, so `GET /v1/me` costs no database read.
    private let known = Mutex(KnownAccounts())

    struct Revoked {
        var sessions: Set<String>
        var accounts: Set<Int64>
    }

    /// What a valid credential speaks for: an account's session, or an API key (whose
    /// role is `integration`; it has no account and no session).
    public struct Identity: Sendable, Hashable {
        public var accountID: Int64
        public var role: Role
        public var sessionID: String
        public var apiKeyID: Int64? = nil
    }

    /// Tokens as OAuth 2.0 answers them (RFC 6749 §5.1).
    public struct TokenPair: Sendable, Codable, Equatable {
        public var accessToken: String
        public var tokenType = "Bearer"
        public var expiresIn: Int
        public var refreshToken: String

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in", refreshToken = "refresh_token"
        }
    }

    public init(store: ReportStore, passwords: Passwords = Passwords(), throttle: LoginThrottle = LoginThrottle()) async throws {
        accounts = AccountStore(store)
        sessions = SessionStore(accounts)
        apiKeys = APIKeyStore(accounts)
        tokens = try await AccessTokens(accounts)
        self.passwords = passwords
        self.throttle = throttle
        revoked = Mutex(Revoked(sessions: Set(try sessions.recentlyEnded()), accounts: Set(try accounts.disabledIDs())))
    }

    /// A new inspector's account, signed in.
    public func register(name: String, email: String, phone: String, password: String) async throws -> (account: Account, tokens: TokenPair) {
        try await register(try AccountDraft(name: name, email: email, phone: phone, password: password))
    }

    /// A new account from a checked draft, signed in; only inspectors register themselves.
    public func register(_ draft: AccountDraft) async throws -> (account: Account, tokens: TokenPair) {
        guard draft.role == .inspector else { throw Forbidden(reason: "a registration makes an inspector; administrators appoint the other roles") }
        let hash = await Self.offloaded { [passwords] in passwords.hash(draft.password) }
        let account = try accounts.create(draft, passwordHash: hash)
        return (account, try await signIn(account))
    }

    /// Signs in by email or phone. A wrong login and a wrong password are the same
    /// ``Unauthorized`` and take the same time; `client` (the peer address) and the
    /// account are each throttled (``TooManyAttempts``).
    public func login(_ login: String, password: String, client: String) async throws -> TokenPair {
        let found = try accounts.account(login: login)
        let keys = ["login:" + (found.map { String($0.account.id) } ?? AccountDraft.key(email: login)), "client:" + client]
        if let wait = throttle.wait(keys) { throw TooManyAttempts(retryAfter: Int(wait.rounded(.up))) }
        let valid = await Self.offloaded { [passwords] in passwords.verify(password, hash: found?.passwordHash) }
        guard valid, let account = found?.account else {
            throttle.failed(keys)
            throw Unauthorized(reason: "the login or the password is wrong")
        }
        throttle.succeeded([keys[0]])
        guard !account.disabled else { throw Forbidden(reason: "this account is disabled") }
        try accounts.recordLogin(id: account.id)
        known.withLock { $0.forget(account.id) }
        return try await signIn(account)
    }

    /// A new pair for a refresh token, which is used up. A token used up before ends its
    /// session (someone else holds it).
    public func refresh(_ refreshToken: String) async throws -> TokenPair {
        let (outcome, next) = try sessions.refresh(refreshToken)
        switch outcome {
        case .rotated(let session):
            guard let account = try accounts.account(id: session.accountID), !account.disabled, let next else {
                throw Unauthorized(reason: "the refresh token is not valid")
            }
            let access = try await tokens.issue(accountID: account.id, role: account.role, sessionID: session.id)
            return TokenPair(accessToken: access.token, expiresIn: access.expiresIn, refreshToken: next)
        case .reused(let id):
            revoked.withLock { _ = $0.sessions.insert(id) }
            throw Unauthorized(reason: "the refresh token was already used; the session is ended, sign in again")
        case .unknown:
            throw Unauthorized(reason: "the refresh token is not valid")
        }
    }

    /// Who a bearer token speaks for: a valid access token of an open session of an
    /// enabled account. Anything else is ``Unauthorized``.
    public func authenticate(_ token: String) async throws -> Identity {
        if token.hasPrefix(APIKeyStore.prefix) {
            guard let key = try apiKeys.key(secret: token) else { throw Unauthorized(reason: "the API key is not valid or was revoked") }
            return Identity(accountID: 0, role: key.role, sessionID: "", apiKeyID: key.id)
        }
        let now = Date()
        let identity: Identity
        if let known = verified.withLock({ $0[token] }), known.expires > now {
            identity = known.identity
        } else {
            guard let claims = try? await tokens.verify(token), let id = Int64(claims.sub.value), let role = Role(rawValue: claims.role) else {
                throw Unauthorized(reason: "the access token is not valid or has expired")
            }
            identity = Identity(accountID: id, role: role, sessionID: claims.sid)
            verified.withLock { cache in
                if cache.count >= Self.verifiedLimit { cache.removeAll(keepingCapacity: true) }
                cache[token] = (identity, claims.exp.value)
            }
        }
        let isRevoked = revoked.withLock { $0.sessions.contains(identity.sessionID) || $0.accounts.contains(identity.accountID) }
        guard !isRevoked else { throw Unauthorized(reason: "the session has ended") }
        return identity
    }

    /// Ends the caller's session (logout), or another of its own sessions.
    public func endSession(_ id: String, of identity: Identity) throws {
        guard try sessions.end(id, accountID: identity.accountID) else { throw SessionNotFound(id: id) }
        revoked.withLock { _ = $0.sessions.insert(id) }
    }

    /// Changes the caller's password, given the old one, and ends every other session.
    public func changePassword(of identity: Identity, old: String, new: String) async throws {
        guard let current = try accounts.passwordHash(id: identity.accountID) else { throw Unauthorized(reason: "the account no longer exists") }
        if let problem = Passwords.problem(new) { throw ValidationErrors([ValidationError(field: "new_password", problem)]) }
        let valid = await Self.offloaded { [passwords] in passwords.verify(old, hash: current) }
        guard valid else { throw ValidationErrors([ValidationError(field: "old_password", "is not the current password")]) }
        let hash = await Self.offloaded { [passwords] in passwords.hash(new) }
        try accounts.setPasswordHash(id: identity.accountID, hash)
        let ended = try sessions.endAll(accountID: identity.accountID, except: identity.sessionID)
        revoked.withLock { $0.sessions.formUnion(ended) }
    }

    /// Disables or enables an account; disabling ends its sessions and stops its tokens.
    public func setDisabled(_ id: Int64, _ disabled: Bool) throws -> Account {
        let account = try changed(accounts.update(id: id, disabled: disabled))
        if disabled {
            let ended = try sessions.endAll(accountID: id)
            revoked.withLock {
                $0.accounts.insert(id)
                $0.sessions.formUnion(ended)
            }
        } else {
            revoked.withLock { _ = $0.accounts.remove(id) }
        }
        return account
    }

    /// The caller's account: from memory when this service has read or written it before,
    /// else read on a Dispatch thread.
    public func account(of identity: Identity) async throws -> Account {
        let id = identity.accountID
        let (cached, generation) = known.withLock { ($0.accounts[id], $0.generation) }
        if let cached { return cached }
        let read = await Self.offloaded { [accounts] in Result { try accounts.account(id: id) } }
        guard let account = try read.get() else { throw Unauthorized(reason: "the account no longer exists") }
        known.withLock { $0.remember(account, readAt: generation) }
        return account
    }

    /// Changes the caller's name.
    public func rename(_ identity: Identity, to name: String) throws -> Account {
        try changed(accounts.update(id: identity.accountID, name: name))
    }

    /// An administrator changes another account's role or state. Administrators do not
    /// change their own (so that the last one cannot lock everyone out by mistake).
    public func administer(_ id: Int64, role: Role?, disabled: Bool?, by admin: Identity) throws -> Account {
        guard admin.role.includes(.admin) else { throw Forbidden(reason: "only administrators change accounts") }
        guard id != admin.accountID else {
            throw ValidationErrors([ValidationError(field: "id", "administrators do not change their own role or state; another administrator can")])
        }
        var account = try changed(accounts.update(id: id, role: role))
        if let disabled { account = try setDisabled(id, disabled) }
        return account
    }

    /// Keeps the memory of accounts in step with a write made here.
    private func changed(_ account: Account) -> Account {
        known.withLock { $0.forget(account.id) }
        return account
    }

    private func signIn(_ account: Account) async throws -> TokenPair {
        let (session, refreshToken) = try sessions.start(accountID: account.id)
        let access = try await tokens.issue(accountID: account.id, role: account.role, sessionID: session.id)
        return TokenPair(accessToken: access.token, expiresIn: access.expiresIn, refreshToken: refreshToken)
    }

    /// Work that would hold a thread for long, on a Dispatch thread.
    static func offloaded<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}

/// Accounts kept in memory. Every write here bumps `generation`, and a read that began
/// before a write does not store what it read, so memory never holds an older row than
/// the database. Emptied when full.
struct KnownAccounts {
    var accounts: [Int64: Account] = [:]
    var generation: UInt64 = 0
    static let limit = 50_000

    mutating func remember(_ account: Account, readAt: UInt64) {
        guard readAt == generation else { return }
        if accounts.count >= Self.limit { accounts.removeAll(keepingCapacity: true) }
        accounts[account.id] = account
    }

    mutating func forget(_ id: Int64) {
        generation &+= 1
        accounts[id] = nil
    }
}

/// The caller has no open session with this id.
public struct SessionNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: String
    public var description: String { "the caller has no open session \"\(id.prefix(40))\"" }
}

/// A missing, malformed, expired or revoked credential (HTTP 401).
public struct Unauthorized: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// A credential that is valid but may not do this (HTTP 403).
public struct Forbidden: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Too many failed logins for the account or the client (HTTP 429).
public struct TooManyAttempts: Error, Sendable, Hashable, CustomStringConvertible {
    public var retryAfter: Int
    public var description: String { "too many failed logins; try again in \(retryAfter) s" }
}
