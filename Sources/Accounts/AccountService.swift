import Dispatch
import Foundation
import Geometry
import Offloading
import ReportModel
import StorePorts
import Synchronization

/// The one door to accounts: registration, logins, refreshes, logouts, password changes,
/// administration, and who an access token speaks for.
///
/// Passwords are hashed and checked on a Dispatch thread (bcrypt takes about a quarter of
/// a second at cost 12), never on the threads that serve requests.
///
/// Whatever ends or narrows an account's power (a logout, an ended session, a detected
/// refresh-token reuse, a disabled account, a role change, a revoked API key) is written
/// with an account event in the same transaction (``AccountStorage``). This process
/// applies the events to what it keeps in memory (``Revocations``) before the write's
/// answer; every process on the database applies them when it next follows the log
/// (``followAccountEvents()``, every quarter of a second in `serve`). So an access token is
/// refused, or its role narrowed, at the next request here and within a poll elsewhere,
/// without a database read per request; and a long-lived answer that holds a
/// ``CredentialWatch`` is ended at the same moment.
public final class AccountService: Sendable {
    let storage: any AccountStorage
    let tokens: AccessTokens
    let passwords: Passwords
    let throttle: LoginThrottle
    let registrations: RegistrationThrottle
    private let revoked: Mutex<Revocations>
    private let watches = Mutex(CredentialWatches())
    /// Access tokens already verified, with what they say and when they expire. A client
    /// presents the same token for its 15 minutes, and checking the signature each time
    /// would cost more than the rest of a small request. Keyed by the whole token, its
    /// signature included, so only a token verified before can hit; emptied when full.
    private let verified = Mutex<[String: (identity: Identity, expires: Date)]>([:])
    static let verifiedLimit = 50_000
    /// Accounts as last read or written, so `GET /v1/me` costs no database read.
    private let known = Mutex(KnownAccounts())
    /// The most account events one read applies.
    static let followBatch = 1_000
    /// How long a session lasts without a refresh.
    public static let sessionLifetime: TimeInterval = 30 * 86_400
    /// How many of a session's replaced refresh tokens are remembered (a copy of an older
    /// one is refused all the same, as unknown, but no longer ends the session).
    static let rotatedKept = 64
    /// What an API key starts with (so that it is told from an access token at a glance).
    static let apiKeyPrefix = "pwk_"

    /// What a valid credential speaks for: an account's session, or an API key (whose
    /// role is `integration`; it has no account and no session).
    public struct Identity: Sendable, Hashable {
        public var accountID: Int64
        public var role: Role
        public var sessionID: String
        public var apiKeyID: Int64? = nil
        /// When the access token expires (nil for an API key).
        public var expiresAt: Date? = nil
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

    public init(
        storage: any AccountStorage, passwords: Passwords = Passwords(), throttle: LoginThrottle? = nil,
        registrations: RegistrationThrottle? = nil
    ) async throws {
        self.storage = storage
        tokens = try await AccessTokens(storage)
        self.passwords = passwords
        // By default the throttles count in the store's ledger: every replica's together.
        self.throttle = throttle ?? LoginThrottle(ledger: storage.attempts)
        self.registrations = registrations ?? RegistrationThrottle(ledger: storage.attempts)
        revoked = Mutex(try await Revocations.load(storage))
    }

    /// A new inspector's account, signed in.
    public func register(name: String, email: String, phone: String, password: String, client: String = "") async throws -> (account: Account, tokens: TokenPair) {
        try await register(try AccountDraft(name: name, email: email, phone: phone, password: password), client: client)
    }

    /// A new account from a checked draft, signed in; only inspectors register themselves.
    /// An email already registered is refused by name (a person needs to know to sign in
    /// instead), within ``RegistrationThrottle``'s limits; a phone is never refused for
    /// being in use, so a registration cannot test whether a number is an inspector's.
    public func register(_ draft: AccountDraft, client: String = "") async throws -> (account: Account, tokens: TokenPair) {
        guard draft.role == .inspector else { throw Forbidden(reason: "a registration makes an inspector; administrators appoint the other roles") }
        let now = Date()
        if let wait = try await registrations.attempt(email: AccountDraft.key(email: draft.email), client: client, now: now) {
            throw TooManyAttempts(retryAfter: Int(wait.rounded(.up)))
        }
        let hash = await Self.offloaded { [passwords] in passwords.hash(draft.password) }
        let account: Account
        do {
            account = try await storage.createAccount(draft.new(passwordHash: hash), now: Date())
        } catch let error as EmailTaken {
            throw ValidationErrors([ValidationError(field: "email", error.description)])
        } catch {
            try? await registrations.emailWasFree(client: client, at: now)
            throw error
        }
        try await registrations.emailWasFree(client: client, at: now)
        return (account, try await signIn(account, passwordHash: hash))
    }

    /// Signs in by email. A wrong login, a wrong password and a disabled account are the
    /// same ``Unauthorized``, take the same time and count the same; failures are
    /// throttled per login and client and per client (``LoginThrottle``:
    /// ``TooManyAttempts``). `client` is the caller's address as the rate limits count it.
    public func login(_ login: String, password: String, client: String) async throws -> TokenPair {
        // A login no account could have (too long, control characters) is looked up by no
        // store and counted under one key: attempts stay small whatever they send.
        let emailKey = AccountDraft.key(email: login)
        let possible = AccountDraft.couldBeLogin(emailKey)
        let found = possible ? try await storage.account(emailKey: emailKey) : nil
        let key = found.map { String($0.account.id) } ?? (possible ? emailKey : Self.impossibleLogin)
        let now = Date()
        if let wait = try await throttle.attempt(login: key, client: client, now: now) { throw TooManyAttempts(retryAfter: Int(wait.rounded(.up))) }
        let valid = await Self.offloaded { [passwords] in passwords.verify(password, hash: found?.passwordHash) }
        guard valid, let account = found?.account, !account.disabled else { throw Unauthorized(reason: Self.refusedLogin) }
        try await throttle.succeeded(login: key, client: client, at: now)
        try await storage.recordLogin(id: account.id, at: Date())
        known.withLock { $0.forget(account.id) }
        return try await signIn(account, passwordHash: found?.passwordHash)
    }

    /// The throttle's key for every login that is no email address.
    static let impossibleLogin = "(not an email address)"

    /// The one answer to a login that does not sign in.
    static let refusedLogin = "the email or the password is wrong, or the account is disabled"

    /// A new pair for a refresh token, which is used up. A token used up before ends its
    /// session (someone else holds it), however long ago: the token names its session.
    public func refresh(_ refreshToken: String) async throws -> TokenPair {
        let presented = RefreshToken(refreshToken), next = Secrets.token(bytes: 32), now = Date()
        let outcome = try await storage.rotateRefresh(
            presented: Secrets.sha256(presented.secret), session: presented.provenSession(tokens), next: Secrets.sha256(next),
            expiresAt: now.addingTimeInterval(Self.sessionLifetime), kept: Self.rotatedKept, now: now)
        switch outcome {
        case .rotated(let session):
            guard let account = try await storage.account(id: session.accountID), !account.disabled else {
                throw Unauthorized(reason: "the refresh token is not valid")
            }
            let access = try await tokens.issue(accountID: account.id, role: account.role, sessionID: session.id)
            return TokenPair(accessToken: access.token, expiresIn: access.expiresIn, refreshToken: RefreshToken(session: session.id, secret: next, tags: tokens).text)
        case .reused:
            await followAfterWrite()
            throw Unauthorized(reason: "the refresh token was already used; the session is ended, sign in again")
        case .unknown:
            throw Unauthorized(reason: "the refresh token is not valid")
        }
    }

    /// Who a bearer token speaks for: a valid access token of an open session of an
    /// enabled account, with no higher role than the account has now. Anything else is
    /// ``Unauthorized``.
    /// An API key given as a value (Open311's `api_key`): never a person's access token.
    public func authenticate(apiKey: String) async throws -> Identity {
        guard apiKey.hasPrefix(Self.apiKeyPrefix) else { throw Unauthorized(reason: "api_key is not an API key") }
        return try await authenticate(apiKey)
    }

    public func authenticate(_ token: String) async throws -> Identity {
        if token.hasPrefix(Self.apiKeyPrefix) {
            guard let key = try await storage.apiKey(hash: Secrets.sha256(token)) else { throw Unauthorized(reason: "the API key is not valid or was revoked") }
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
            identity = Identity(accountID: id, role: role, sessionID: claims.sid, expiresAt: claims.exp.value)
            verified.withLock { cache in
                if cache.count >= Self.verifiedLimit { cache.removeAll(keepingCapacity: true) }
                cache[token] = (identity, claims.exp.value)
            }
        }
        guard let admitted = revoked.withLock({ $0.admit(identity) }) else { throw Unauthorized(reason: "the session has ended") }
        return admitted
    }

    /// Whether `identity` still grants `role`.
    private func grants(_ identity: Identity, _ role: Role) -> Bool {
        guard let admitted = revoked.withLock({ $0.admit(identity) }) else { return false }
        return admitted.role.includes(role) && (admitted.expiresAt.map { $0 > Date() } ?? true)
    }

    /// Ends the caller's session (logout), or another of its own sessions.
    public func endSession(_ id: String, of identity: Identity) async throws {
        guard try await storage.endSessions(.one(id: id, accountID: identity.accountID), now: Date()) == 1 else { throw SessionNotFound(id: id) }
        await followAfterWrite()
    }

    /// The caller's open sessions, newest first.
    public func openSessions(of identity: Identity) async throws -> [Session] {
        try await storage.openSessions(accountID: identity.accountID, now: Date())
    }

    /// Changes the caller's password, given the old one, and ends every other session.
    /// Wrong old passwords count as failed logins of the account from `client` (a stolen
    /// token must not make the password guessable at the write rate).
    public func changePassword(of identity: Identity, old: String, new: String, client: String) async throws {
        guard let current = try await storage.passwordHash(id: identity.accountID) else { throw Unauthorized(reason: "the account no longer exists") }
        if let problem = Passwords.problem(new) { throw ValidationErrors([ValidationError(field: "new_password", problem)]) }
        let key = String(identity.accountID), now = Date()
        if let wait = try await throttle.attempt(login: key, client: client, now: now) { throw TooManyAttempts(retryAfter: Int(wait.rounded(.up))) }
        let valid = await Self.offloaded { [passwords] in passwords.verify(old, hash: current) }
        guard valid else { throw ValidationErrors([ValidationError(field: "old_password", "is not the current password")]) }
        try await throttle.succeeded(login: key, client: client, at: now)
        let hash = await Self.offloaded { [passwords] in passwords.hash(new) }
        try await storage.setPasswordHash(id: identity.accountID, hash, endingSessionsExcept: identity.sessionID, now: Date())
        await followAfterWrite()
    }

    /// Disables or enables an account; disabling ends its sessions and stops its tokens.
    public func setDisabled(_ id: Int64, _ disabled: Bool) async throws -> Account {
        try await change(id, disabled: disabled)
    }

    /// Changes an account's role, name or state as the system (the command line), with no
    /// caller to check: ``administer(_:role:disabled:by:)`` is the callers' way.
    public func change(_ id: Int64, role: Role? = nil, name given: String? = nil, disabled: Bool? = nil) async throws -> Account {
        let name: String?
        do {
            name = try given.map { text throws(ValidationError) in try Names.checked(text) }
            if let role { try Role.checkPerson(role) }
        } catch { throw ValidationErrors([error]) }
        let account = try await storage.updateAccount(id: id, role: role, name: name, disabled: disabled, now: Date())
        await followAfterWrite()
        return account
    }

    /// The caller's account: from memory when this service has read or written it before,
    /// else read on a Dispatch thread.
    public func account(of identity: Identity) async throws -> Account {
        guard let account = try await account(id: identity.accountID) else { throw Unauthorized(reason: "the account no longer exists") }
        return account
    }

    /// Changes the caller's name.
    public func rename(_ identity: Identity, to name: String) async throws -> Account {
        try await change(identity.accountID, name: name)
    }

    /// An administrator changes another account's role or state. Administrators do not
    /// change their own (so that the last one cannot lock everyone out by mistake).
    public func administer(_ id: Int64, role: Role?, disabled: Bool?, by admin: Identity) async throws -> Account {
        guard admin.role.includes(.admin) else { throw Forbidden(reason: "only administrators change accounts") }
        guard id != admin.accountID else {
            throw ValidationErrors([ValidationError(field: "id", "administrators do not change their own role or state; another administrator can")])
        }
        return try await change(id, role: role, disabled: disabled)
    }

    // MARK: Following the account events

    /// Applies the account events written since the last one applied, by any process:
    /// this process's own writes call it before they answer, and `serve` calls it every
    /// quarter of a second. Callers may overlap: each event is applied once, in number
    /// order, whoever read it (those at or below the last applied are passed over). A
    /// process that was away so long that events it never read were pruned reloads what
    /// the store says.
    public func followAccountEvents() async throws {
        while true {
            let from = revoked.withLock { $0.seq }
            let batch = try await storage.accountEvents(after: from, limit: Self.followBatch)
            guard let first = batch.first else { break }
            if first.seq != from + 1 {
                let fresh = try await Revocations.load(storage)
                revoked.withLock { state in
                    if fresh.seq >= state.seq { state = fresh }
                    known.withLock { $0.forgetAll() }
                }
                break
            }
            revoked.withLock { state in
                let fresh = batch.drop { $0.seq <= state.seq }
                guard fresh.first?.seq == state.seq + 1 else { return }
                for numbered in fresh {
                    state.apply(numbered.event, at: numbered.at)
                    state.seq = numbered.seq
                }
                state.forgetOld()
                // Under the same lock: a caller that finds its event applied by another
                // must not answer before the accounts it changed are forgotten.
                known.withLock { known in
                    for case .accountChanged(let id, _, _) in fresh.map(\.event) { known.forget(id) }
                }
            }
            if batch.count < Self.followBatch { break }
        }
        endWatches { !grants($0.identity, $0.role) }
    }

    /// Follows the account events after a write of this process has committed. A failed
    /// read does not undo the write nor fail its answer: the next poll applies the events.
    private func followAfterWrite() async {
        try? await followAccountEvents()
    }

    /// Follows the account events every `interval` until cancelled.
    public func followAccountEvents(every interval: Duration) async {
        while !Task.isCancelled {
            try? await followAccountEvents()
            try? await Task.sleep(for: interval)
        }
    }

    /// Holds `identity`'s power to act as `role` for a long-lived answer: `onEnd` is called
    /// once, as soon as it no longer grants it (at once when it already does not), and at
    /// the latest when its access token expires. ``unwatch(_:)`` when the answer ends.
    public func watch(_ identity: Identity, while role: Role, onEnd: @escaping @Sendable () -> Void) -> CredentialWatch {
        let watch = watches.withLock { watches in
            let watch = CredentialWatch(identity: identity, role: role, id: watches.next, onEnd: onEnd)
            watches.next += 1
            watches.all[watch.id] = watch
            return watch
        }
        if let expires = identity.expiresAt {
            let id = watch.id
            DispatchQueue.global().asyncAfter(wallDeadline: .now() + max(0, expires.timeIntervalSinceNow)) { [weak self] in
                self?.endWatches { $0.id == id }
            }
        }
        endWatches { $0.id == watch.id && !grants($0.identity, $0.role) }
        return watch
    }

    public func unwatch(_ watch: CredentialWatch) {
        _ = watches.withLock { $0.all.removeValue(forKey: watch.id) }
    }

    /// Ends (and forgets) the watches that `ending` picks.
    private func endWatches(_ ending: (CredentialWatch) -> Bool) {
        let ended = watches.withLock { watches in
            let picked = watches.all.values.filter(ending)
            for watch in picked { watches.all[watch.id] = nil }
            return picked
        }
        for watch in ended { watch.end() }
    }

    /// Starts a session while the account's password is still `passwordHash`, the one just
    /// checked, and the account not disabled.
    private func signIn(_ account: Account, passwordHash: String?) async throws -> TokenPair {
        let now = Date(), secret = Secrets.token(bytes: 32)
        let session = Session(
            id: Secrets.token(bytes: 12), accountID: account.id, createdAt: now, lastUsedAt: now, expiresAt: now.addingTimeInterval(Self.sessionLifetime))
        // Sessions ended or expired over a lifetime ago are forgotten meanwhile.
        guard try await storage.startSession(
            session, refreshHash: Secrets.sha256(secret), forgetBefore: now.addingTimeInterval(-Self.sessionLifetime), ifPasswordHash: passwordHash)
        else { throw Unauthorized(reason: Self.refusedLogin) }
        let access = try await tokens.issue(accountID: account.id, role: account.role, sessionID: session.id)
        return TokenPair(accessToken: access.token, expiresIn: access.expiresIn, refreshToken: RefreshToken(session: session.id, secret: secret, tags: tokens).text)
    }

    // MARK: Administration without a caller (the command line) and lists

    /// Makes an account from a checked draft, of any person's role (`posterwatch user
    /// add`; registration is ``register(_:client:)``). ``EmailTaken`` when its email is.
    public func create(_ draft: AccountDraft) async throws -> Account {
        let hash = await Self.offloaded { [passwords] in passwords.hash(draft.password) }
        return try await storage.createAccount(draft.new(passwordHash: hash), now: Date())
    }

    /// The account with this id, or nil: from memory when this service has read it since
    /// it last changed (here or, through the account events, anywhere).
    public func account(id: Int64) async throws -> Account? {
        let (cached, generation) = known.withLock { ($0.accounts[id], $0.generation) }
        if let cached { return cached }
        guard let account = try await storage.account(id: id) else { return nil }
        known.withLock { $0.remember(account, readAt: generation) }
        return account
    }

    /// The account with this email (in any case), or nil.
    public func account(email: String) async throws -> Account? { try await storage.account(emailKey: AccountDraft.key(email: email))?.account }

    /// Accounts in id order after `after`, at most `limit`, of one role when given.
    public func accounts(role: Role? = nil, after: Int64 = 0, limit: Int) async throws -> [Account] {
        try await storage.accounts(role: role, after: after, limit: limit)
    }

    /// Makes an API key; the key itself is in the answer and nowhere else (the store keeps
    /// its SHA-256 hash): `pwk_` and 256 random bits.
    public func createAPIKey(name given: String, role: Role = .integration) async throws -> (key: APIKey, secret: String) {
        let name: String
        do { name = try Names.checked(given) } catch { throw ValidationErrors([error]) }
        guard role == .integration else { throw ValidationErrors([ValidationError(field: "role", "an API key's role is integration")]) }
        let secret = Self.apiKeyPrefix + Secrets.token(bytes: 32)
        return (try await storage.createAPIKey(name: name, role: role, keyHash: Secrets.sha256(secret), now: Date()), secret)
    }

    public func apiKeys() async throws -> [APIKey] { try await storage.apiKeys() }

    /// Revokes a key: its requests, and its long-lived answers, stop here at once and in
    /// every process within a poll. ``APIKeyNotFound`` for an unknown id.
    public func revokeAPIKey(_ id: Int64) async throws {
        try await storage.revokeAPIKey(id: id, now: Date())
        await followAfterWrite()
    }

    /// Work that would hold a thread for long, on a Dispatch thread.
    static func offloaded<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}

/// Accounts kept in memory. Every write here, and every account event followed, bumps `generation`, and a read that began
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

    mutating func forgetAll() {
        generation &+= 1
        accounts.removeAll()
    }
}

/// The caller has no open session with this id.
public struct SessionNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: String
    public var description: String { "the caller has no open session \"\(id.prefix(40))\"" }
}

/// Too many failed logins, or registrations, from the client (HTTP 429).
public struct TooManyAttempts: Error, Sendable, Hashable, CustomStringConvertible {
    public var retryAfter: Int
    public var description: String { "too many attempts; try again in \(retryAfter) s" }
}
