import Foundation
import PostgresNIO
import ReportModel
import StorePorts

/// The account tables of a PostgreSQL database: ``AccountStorage`` with bound parameters
/// only. Times are milliseconds since 1970, as in the SQLite store.
///
/// Where SQLite has one writer at a time, PostgreSQL commits concurrently, so the rules
/// that rest on order are kept by locks held to commit:
/// - an account event takes its number from a one-row counter it updates in its own
///   transaction: the next writer waits for that commit, so numbers follow commit order;
/// - a refresh token is rotated under the session row's lock (`FOR UPDATE`): of two
///   presentations of one token, the second finds it rotated, a reuse;
/// - the first signing key is stored under an advisory lock: two processes starting at
///   once keep one key.
public struct PostgresAccounts: AccountStorage {
    let database: PostgresDatabase
    /// In the database: every replica's attempts count together.
    public let attempts: any AttemptLedger

    public init(_ database: PostgresDatabase) {
        self.database = database
        attempts = PostgresAttempts(database)
    }

    var logger: Logger { database.logger }

    // MARK: Accounts

    public func createAccount(_ new: NewAccount, now: Date) async throws -> Account {
        do {
            let rows = try await database.client.query(
                """
                INSERT INTO account (name, email, email_key, phone, password_hash, role, created_at)
                VALUES (\(new.name), \(new.email), \(new.emailKey), \(new.phone), \(new.passwordHash), \(new.role.rawValue), \(now.milliseconds))
                RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            return try await Self.accounts(rows)[0]
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw EmailTaken()
        }
    }

    public func account(id: Int64) async throws -> Account? {
        try await Self.accounts(database.client.query("SELECT \(unescaped: Self.columns) FROM account WHERE id = \(id)", logger: logger)).first
    }

    public func account(emailKey: String) async throws -> (account: Account, passwordHash: String)? {
        let rows = try await database.client.query(
            "SELECT \(unescaped: Self.columns), password_hash FROM account WHERE email_key = \(emailKey)", logger: logger)
        for try await (id, name, email, phone, role, disabled, created, login, hash) in rows.decode(
            (Int64, String, String, String, String, Bool, Int64, Int64?, String).self)
        {
            return (Self.account(id, name, email, phone, role, disabled, created, login), hash)
        }
        return nil
    }

    public func accounts(role: Role?, after: Int64, limit: Int) async throws -> [Account] {
        try await Self.accounts(database.client.query(
            """
            SELECT \(unescaped: Self.columns) FROM account WHERE id > \(after) AND (\(role?.rawValue)::text IS NULL OR role = \(role?.rawValue))
            ORDER BY id LIMIT \(limit)
            """, logger: logger))
    }

    public func updateAccount(id: Int64, role: Role?, name: String?, disabled: Bool?, now: Date) async throws -> Account {
        try await database.transaction { c in
            let rows = try await c.query(
                """
                UPDATE account SET role = coalesce(\(role?.rawValue)::text, role), name = coalesce(\(name)::text, name),
                    disabled = coalesce(\(disabled)::boolean, disabled)
                WHERE id = \(id) RETURNING \(unescaped: Self.columns)
                """, logger: logger)
            guard let account = try await Self.accounts(rows).first else { throw AccountNotFound(id: id) }
            try await record(.accountChanged(id: id, role: account.role, disabled: account.disabled), c, now: now)
            if disabled == true { try await endSessions(.ofAccount(id), c, now: now) }
            return account
        }
    }

    public func passwordHash(id: Int64) async throws -> String? {
        for try await hash in try await database.client.query("SELECT password_hash FROM account WHERE id = \(id)", logger: logger).decode(String.self) {
            return hash
        }
        return nil
    }

    public func setPasswordHash(id: Int64, _ hash: String, endingSessionsExcept kept: String?, now: Date) async throws {
        try await database.transaction { c in
            let updated = try await c.query("UPDATE account SET password_hash = \(hash) WHERE id = \(id) RETURNING id", logger: logger)
            guard try await Self.count(updated) == 1 else { throw AccountNotFound(id: id) }
            try await endSessions(.allBut(accountID: id, kept: kept), c, now: now)
        }
    }

    public func recordLogin(id: Int64, at time: Date) async throws {
        try await database.client.query("UPDATE account SET last_login_at = \(time.milliseconds) WHERE id = \(id)", logger: logger)
    }

    static let columns = "id, name, email, phone, role, disabled, created_at, last_login_at"

    static func accounts(_ rows: PostgresRowSequence) async throws -> [Account] {
        var accounts: [Account] = []
        for try await (id, name, email, phone, role, disabled, created, login) in rows.decode((Int64, String, String, String, String, Bool, Int64, Int64?).self) {
            accounts.append(account(id, name, email, phone, role, disabled, created, login))
        }
        return accounts
    }

    static func account(_ id: Int64, _ name: String, _ email: String, _ phone: String, _ role: String, _ disabled: Bool, _ created: Int64, _ login: Int64?) -> Account {
        Account(
            id: id, name: name, email: email, phone: phone, role: Role(rawValue: role) ?? .inspector, disabled: disabled,
            createdAt: Date(milliseconds: created), lastLoginAt: login.map(Date.init(milliseconds:)))
    }

    /// How many rows a statement returned.
    static func count(_ rows: PostgresRowSequence) async throws -> Int {
        var n = 0
        for try await _ in rows { n += 1 }
        return n
    }

    // MARK: Sessions

    public func startSession(_ session: Session, refreshHash: Data, forgetBefore: Date, ifPasswordHash passwordHash: String?) async throws -> Bool {
        let forgotten = forgetBefore.milliseconds
        return try await database.transaction { c in
            if let passwordHash {
                // The account's row held to the commit: a password change or a disable (which
                // write it) waits, and then ends this session with the others. First, as they
                // take the account's row before its sessions' rows.
                let rows = try await c.query(
                    "SELECT password_hash = \(passwordHash) AND NOT disabled FROM account WHERE id = \(session.accountID) FOR SHARE", logger: logger
                ).collect()
                guard try rows.first?.decode(Bool.self) == true else { return false }
            }
            try await c.query("DELETE FROM session WHERE ended_at < \(forgotten) OR expires_at < \(forgotten)", logger: logger)
            try await c.query(
                """
                INSERT INTO session (id, account_id, refresh_hash, created_at, last_used_at, expires_at)
                VALUES (\(session.id), \(session.accountID), \(refreshHash), \(session.createdAt.milliseconds), \(session.lastUsedAt.milliseconds),
                        \(session.expiresAt.milliseconds))
                """, logger: logger)
            return true
        }
    }

    public func rotateRefresh(presented: Data, session claimed: String?, next: Data, expiresAt: Date, kept: Int, now: Date) async throws -> RefreshOutcome {
        try await database.transaction { c in
            let open = try await Self.sessions(c.query(
                """
                SELECT \(unescaped: Self.sessionColumns) FROM session
                WHERE refresh_hash = \(presented) AND ended_at IS NULL AND expires_at > \(now.milliseconds) FOR UPDATE
                """, logger: logger))
            if var session = open.first {
                guard claimed == nil || claimed == session.id else { return .unknown }
                session.lastUsedAt = now
                session.expiresAt = expiresAt
                try await c.query("INSERT INTO session_rotated (refresh_hash, session_id) VALUES (\(presented), \(session.id))", logger: logger)
                // The session's last rotated tokens are enough to catch a copy in use.
                try await c.query(
                    """
                    DELETE FROM session_rotated WHERE session_id = \(session.id) AND seq NOT IN (
                        SELECT seq FROM session_rotated WHERE session_id = \(session.id) ORDER BY seq DESC LIMIT \(kept))
                    """, logger: logger)
                try await c.query(
                    """
                    UPDATE session SET refresh_hash = \(next), last_used_at = \(now.milliseconds), expires_at = \(expiresAt.milliseconds)
                    WHERE id = \(session.id)
                    """, logger: logger)
                return .rotated(session)
            }
            for try await id in try await c.query("SELECT session_id FROM session_rotated WHERE refresh_hash = \(presented)", logger: logger).decode(String.self) {
                try await endSessions(.one(id), c, now: now)
                return .reused(sessionID: id)
            }
            if let claimed {
                let open = try await c.query(
                    "SELECT id FROM session WHERE id = \(claimed) AND ended_at IS NULL AND expires_at > \(now.milliseconds) FOR UPDATE", logger: logger
                ).collect()
                if !open.isEmpty {
                    try await endSessions(.one(claimed), c, now: now)
                    return .reused(sessionID: claimed)
                }
            }
            return .unknown
        }
    }

    public func endSessions(_ which: SessionSelection, now: Date) async throws -> Int {
        try await database.transaction { c in
            switch which {
            case .one(let id, let accountID): try await endSessions(.oneOf(id, accountID: accountID), c, now: now)
            case .all(let accountID, let kept): try await endSessions(.allBut(accountID: accountID, kept: kept), c, now: now)
            }
        }
    }

    /// Which open sessions to end.
    enum Ending {
        case one(String)
        case oneOf(String, accountID: Int64)
        case allBut(accountID: Int64, kept: String?)
        case ofAccount(Int64)
    }

    /// Ends the open sessions `which` picks, each with an account event; how many.
    @discardableResult
    func endSessions(_ which: Ending, _ c: PostgresConnection, now: Date) async throws -> Int {
        let at = now.milliseconds
        let rows = switch which {
        case .one(let id):
            try await c.query("UPDATE session SET ended_at = \(at) WHERE ended_at IS NULL AND id = \(id) RETURNING id, account_id", logger: logger)
        case .oneOf(let id, let account):
            try await c.query(
                "UPDATE session SET ended_at = \(at) WHERE ended_at IS NULL AND id = \(id) AND account_id = \(account) RETURNING id, account_id",
                logger: logger)
        case .allBut(let account, let kept):
            try await c.query(
                """
                UPDATE session SET ended_at = \(at) WHERE ended_at IS NULL AND account_id = \(account) AND id IS DISTINCT FROM \(kept)::text
                RETURNING id, account_id
                """, logger: logger)
        case .ofAccount(let account):
            try await c.query("UPDATE session SET ended_at = \(at) WHERE ended_at IS NULL AND account_id = \(account) RETURNING id, account_id", logger: logger)
        }
        var ended: [(String, Int64)] = []
        for try await row in rows.decode((String, Int64).self) { ended.append(row) }
        for (id, account) in ended.sorted(by: { $0.0 < $1.0 }) { try await record(.sessionEnded(sessionID: id, accountID: account), c, now: now) }
        return ended.count
    }

    public func openSessions(accountID: Int64, now: Date) async throws -> [Session] {
        try await Self.sessions(database.client.query(
            """
            SELECT \(unescaped: Self.sessionColumns) FROM session
            WHERE account_id = \(accountID) AND ended_at IS NULL AND expires_at > \(now.milliseconds) ORDER BY created_at DESC, id
            """, logger: logger))
    }

    static let sessionColumns = "id, account_id, created_at, last_used_at, expires_at"

    static func sessions(_ rows: PostgresRowSequence) async throws -> [Session] {
        var sessions: [Session] = []
        for try await (id, account, created, used, expires) in rows.decode((String, Int64, Int64, Int64, Int64).self) {
            sessions.append(Session(
                id: id, accountID: account, createdAt: Date(milliseconds: created), lastUsedAt: Date(milliseconds: used), expiresAt: Date(milliseconds: expires)))
        }
        return sessions
    }

    // MARK: API keys

    public func createAPIKey(name: String, role: Role, keyHash: Data, now: Date) async throws -> APIKey {
        let rows = try await database.client.query(
            "INSERT INTO api_key (name, role, key_hash, created_at) VALUES (\(name), \(role.rawValue), \(keyHash), \(now.milliseconds)) RETURNING id",
            logger: logger)
        for try await id in rows.decode(Int64.self) { return APIKey(id: id, name: name, role: role, createdAt: now, revokedAt: nil) }
        throw PostgresAnswerMissing(what: "the new API key's id")
    }

    public func apiKey(hash: Data) async throws -> APIKey? {
        try await Self.keys(database.client.query(
            "SELECT \(unescaped: Self.keyColumns) FROM api_key WHERE key_hash = \(hash) AND revoked_at IS NULL", logger: logger)).first
    }

    public func apiKeys() async throws -> [APIKey] {
        try await Self.keys(database.client.query("SELECT \(unescaped: Self.keyColumns) FROM api_key ORDER BY id", logger: logger))
    }

    public func revokeAPIKey(id: Int64, now: Date) async throws {
        try await database.transaction { c in
            guard try await Self.count(c.query("SELECT id FROM api_key WHERE id = \(id) FOR UPDATE", logger: logger)) == 1 else { throw APIKeyNotFound(id: id) }
            let revoked = try await c.query(
                "UPDATE api_key SET revoked_at = \(now.milliseconds) WHERE id = \(id) AND revoked_at IS NULL RETURNING id", logger: logger)
            if try await Self.count(revoked) == 1 { try await record(.apiKeyRevoked(id: id), c, now: now) }
        }
    }

    static let keyColumns = "id, name, role, created_at, revoked_at"

    static func keys(_ rows: PostgresRowSequence) async throws -> [APIKey] {
        var keys: [APIKey] = []
        for try await (id, name, role, created, revoked) in rows.decode((Int64, String, String, Int64, Int64?).self) {
            keys.append(APIKey(
                id: id, name: name, role: Role(rawValue: role) ?? .integration, createdAt: Date(milliseconds: created),
                revokedAt: revoked.map(Date.init(milliseconds:))))
        }
        return keys
    }

    // MARK: Signing keys

    /// The advisory lock under which the first signing key is stored.
    static let signingKeyLock: Int64 = 0x706F_7374_6B65_79  // "postkey"

    public func signingKeys(storingIfNone first: SigningKey) async throws -> [SigningKey] {
        try await database.transaction { c in
            try await c.query("SELECT pg_advisory_xact_lock(\(Self.signingKeyLock))", logger: logger)
            if try await Self.count(c.query("SELECT kid FROM signing_key LIMIT 1", logger: logger)) == 0 { try await insert(first, c) }
            var keys: [SigningKey] = []
            for try await (kid, secret, created) in try await c.query(
                "SELECT kid, secret, created_at FROM signing_key ORDER BY seq DESC", logger: logger
            ).decode((String, Data, Int64).self) {
                keys.append(SigningKey(kid: kid, secret: secret, createdAt: Date(milliseconds: created)))
            }
            return keys
        }
    }

    public func addSigningKey(_ key: SigningKey, keeping: Int) async throws {
        try await database.transaction { c in
            try await insert(key, c)
            try await c.query(
                "DELETE FROM signing_key WHERE seq NOT IN (SELECT seq FROM signing_key ORDER BY seq DESC LIMIT \(keeping))", logger: logger)
        }
    }

    func insert(_ key: SigningKey, _ c: PostgresConnection) async throws {
        try await c.query(
            "INSERT INTO signing_key (kid, secret, created_at) VALUES (\(key.kid), \(key.secret), \(key.createdAt.milliseconds))", logger: logger)
    }

    // MARK: Account events

    /// Writes an event in the caller's transaction, numbered by the counter (whose row lock,
    /// held to commit, orders the numbers as the commits), and prunes rows older than
    /// ``StorePorts/eventRetention`` but never the newest.
    func record(_ event: AccountEvent, _ c: PostgresConnection, now: Date) async throws {
        let (kind, account, session, role, disabled, key): (String, Int64?, String?, String?, Bool?, Int64?) =
            switch event {
            case .sessionEnded(let session, let account): ("session_ended", account, session, nil, nil, nil)
            case .accountChanged(let id, let role, let disabled): ("account_changed", id, nil, role.rawValue, disabled, nil)
            case .apiKeyRevoked(let id): ("api_key_revoked", nil, nil, nil, nil, id)
            }
        var seq: Int64?
        for try await last in try await c.query("UPDATE account_event_counter SET last = last + 1 RETURNING last", logger: logger).decode(Int64.self) {
            seq = last
        }
        guard let seq else { throw PostgresAnswerMissing(what: "the account events' counter") }
        try await c.query(
            """
            INSERT INTO account_event (seq, at, kind, account_id, session_id, role, disabled, api_key_id)
            VALUES (\(seq), \(now.milliseconds), \(kind), \(account), \(session), \(role), \(disabled), \(key))
            """, logger: logger)
        try await c.query(
            "DELETE FROM account_event WHERE at < \(now.addingTimeInterval(-eventRetention).milliseconds) AND seq < \(seq)", logger: logger)
    }

    public func accountEvents(after seq: Int64, limit: Int) async throws -> [NumberedAccountEvent] {
        let rows = try await database.client.query(
            """
            SELECT seq, at, kind, account_id, session_id, role, disabled, api_key_id FROM account_event
            WHERE seq > \(seq) ORDER BY seq LIMIT \(limit)
            """, logger: logger)
        var events: [NumberedAccountEvent] = []
        for try await (seq, at, kind, account, session, role, disabled, key) in rows.decode(
            (Int64, Int64, String, Int64?, String?, String?, Bool?, Int64?).self)
        {
            let event: AccountEvent
            switch (kind, account, session, key) {
            case ("session_ended", let account?, let session?, _): event = .sessionEnded(sessionID: session, accountID: account)
            case ("account_changed", let account?, _, _): event = .accountChanged(id: account, role: Role(rawValue: role ?? "") ?? .inspector, disabled: disabled ?? false)
            case ("api_key_revoked", _, _, let key?): event = .apiKeyRevoked(id: key)
            default: throw PostgresAnswerMissing(what: "what account event \(seq) of kind \(kind.prefix(40)) is about")
            }
            events.append(NumberedAccountEvent(seq: seq, at: Date(milliseconds: at), event: event))
        }
        return events
    }

    public func revocations(since: Date) async throws -> RevocationSnapshot {
        let horizon = since.milliseconds
        // One snapshot of the four reads, as a reload must start from one point of the events.
        return try await database.transaction { c in
            try await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
            var seq: Int64 = 0
            for try await last in try await c.query("SELECT last FROM account_event_counter", logger: logger).decode(Int64.self) { seq = last }
            var ended: [String: Date] = [:]
            for try await (id, at) in try await c.query(
                "SELECT id, ended_at FROM session WHERE ended_at >= \(horizon)", logger: logger
            ).decode((String, Int64).self) {
                ended[id] = Date(milliseconds: at)
            }
            var roles: [(accountID: Int64, role: Role, at: Date)] = []
            for try await (account, role, at) in try await c.query(
                "SELECT account_id, role, at FROM account_event WHERE kind = 'account_changed' AND at >= \(horizon) ORDER BY seq", logger: logger
            ).decode((Int64, String, Int64).self) {
                roles.append((account, Role(rawValue: role) ?? .inspector, Date(milliseconds: at)))
            }
            var disabled: Set<Int64> = []
            for try await id in try await c.query("SELECT id FROM account WHERE disabled", logger: logger).decode(Int64.self) { disabled.insert(id) }
            var revoked: Set<Int64> = []
            for try await id in try await c.query("SELECT id FROM api_key WHERE revoked_at IS NOT NULL", logger: logger).decode(Int64.self) { revoked.insert(id) }
            return RevocationSnapshot(seq: seq, endedSessions: ended, disabledAccounts: disabled, roleChanges: roles, revokedKeys: revoked)
        }
    }
}

/// A statement that had to answer a row answered none: a damaged database.
public struct PostgresAnswerMissing: Error, Sendable, CustomStringConvertible {
    public var what: String
    public var description: String { "PostgreSQL gave no \(what)" }
}
