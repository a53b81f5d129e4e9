import Foundation
import GRDB
import ReportModel
import StorePorts

/// The account tables of an SQLite database (`account`, `session`, `session_rotated`,
/// `api_key`, `signing_key`, `account_event`): ``AccountStorage`` in SQL with bound
/// parameters only. Times are milliseconds since 1970.
///
/// Each method is one short statement or transaction, run through GRDB's async calls on
/// its own queues, off the cooperative pool.
public struct SQLiteAccounts: AccountStorage {
    let pool: DatabasePool
    /// In memory: a process's own count (one server on one machine).
    public let attempts: any AttemptLedger = MemoryAttemptLedger()

    public init(_ store: SQLiteReports) { pool = store.pool }

    // MARK: Accounts

    public func createAccount(_ new: NewAccount, now: Date) async throws -> Account {
        try await pool.writeOrBusy { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE email_key = ?", arguments: [new.emailKey]) == true { throw EmailTaken() }
            try db.execute(
                sql: "INSERT INTO account (name, email, email_key, phone, password_hash, role, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [new.name, new.email, new.emailKey, new.phone, new.passwordHash, new.role.rawValue, now.milliseconds])
            return try Self.fetch(db, id: db.lastInsertedRowID)!
        }
    }

    /// One row by its key needs no transaction around it.
    public func account(id: Int64) async throws -> Account? {
        try await pool.unsafeRead { db in try Self.fetch(db, id: id) }
    }

    public func account(emailKey: String) async throws -> (account: Account, passwordHash: String)? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.columns), password_hash FROM account WHERE email_key = ?", arguments: [emailKey])
                .map { (Self.account($0), $0["password_hash"]) }
        }
    }

    public func accounts(role: Role?, after: Int64, limit: Int) async throws -> [Account] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.columns) FROM account WHERE id > ? AND (? IS NULL OR role = ?) ORDER BY id LIMIT ?",
                arguments: [after, role?.rawValue, role?.rawValue, limit]
            ).map(Self.account)
        }
    }

    public func updateAccount(id: Int64, role: Role?, name: String?, disabled: Bool?, now: Date) async throws -> Account {
        try await pool.writeOrBusy { db in
            try db.execute(
                sql: "UPDATE account SET role = coalesce(?, role), name = coalesce(?, name), disabled = coalesce(?, disabled) WHERE id = ?",
                arguments: [role?.rawValue, name, disabled, id])
            guard let account = try Self.fetch(db, id: id) else { throw AccountNotFound(id: id) }
            try Self.record(.accountChanged(id: id, role: account.role, disabled: account.disabled), db, now: now)
            if disabled == true { try Self.endSessions(db, "account_id = ?", [id], now: now) }
            return account
        }
    }

    public func passwordHash(id: Int64) async throws -> String? {
        try await pool.read { db in try String.fetchOne(db, sql: "SELECT password_hash FROM account WHERE id = ?", arguments: [id]) }
    }

    public func setPasswordHash(id: Int64, _ hash: String, endingSessionsExcept kept: String?, now: Date) async throws {
        try await pool.writeOrBusy { db in
            try db.execute(sql: "UPDATE account SET password_hash = ? WHERE id = ?", arguments: [hash, id])
            guard db.changesCount == 1 else { throw AccountNotFound(id: id) }
            try Self.endSessions(db, "account_id = ? AND id IS NOT ?", [id, kept], now: now)
        }
    }

    public func recordLogin(id: Int64, at time: Date) async throws {
        try await pool.writeOrBusy { db in try db.execute(sql: "UPDATE account SET last_login_at = ? WHERE id = ?", arguments: [time.milliseconds, id]) }
    }

    static let columns = "id, name, email, phone, role, disabled, created_at, last_login_at"

    static func fetch(_ db: Database, id: Int64) throws -> Account? {
        try Row.fetchOne(try db.cachedStatement(sql: "SELECT \(columns) FROM account WHERE id = ?"), arguments: [id]).map(account)
    }

    static func account(_ row: Row) -> Account {
        Account(
            id: row["id"], name: row["name"], email: row["email"], phone: row["phone"], role: Role(rawValue: row["role"]) ?? .inspector,
            disabled: row["disabled"], createdAt: Date(milliseconds: row["created_at"]), lastLoginAt: (row["last_login_at"] as Int64?).map(Date.init(milliseconds:)))
    }

    // MARK: Sessions

    public func startSession(_ session: Session, refreshHash: Data, forgetBefore: Date, ifPasswordHash passwordHash: String?) async throws -> Bool {
        try await pool.writeOrBusy { db in
            if let passwordHash {
                let current = try Bool.fetchOne(
                    db, sql: "SELECT password_hash = ? AND NOT disabled FROM account WHERE id = ?", arguments: [passwordHash, session.accountID])
                guard current == true else { return false }
            }
            let forgotten = forgetBefore.milliseconds
            try db.execute(
                sql: "DELETE FROM session_rotated WHERE session_id IN (SELECT id FROM session WHERE ended_at < ? OR expires_at < ?)",
                arguments: [forgotten, forgotten])
            try db.execute(sql: "DELETE FROM session WHERE ended_at < ? OR expires_at < ?", arguments: [forgotten, forgotten])
            try db.execute(
                sql: "INSERT INTO session (id, account_id, refresh_hash, created_at, last_used_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [session.id, session.accountID, refreshHash, session.createdAt.milliseconds, session.lastUsedAt.milliseconds, session.expiresAt.milliseconds])
            return true
        }
    }

    public func rotateRefresh(presented: Data, session claimed: String?, next: Data, expiresAt: Date, kept: Int, now: Date) async throws -> RefreshOutcome {
        try await pool.writeOrBusy { db in
            if let row = try Row.fetchOne(
                db, sql: "SELECT \(Self.sessionColumns) FROM session WHERE refresh_hash = ? AND ended_at IS NULL AND expires_at > ?",
                arguments: [presented, now.milliseconds])
            {
                var session = Self.session(row)
                guard claimed == nil || claimed == session.id else { return .unknown }
                session.lastUsedAt = now
                session.expiresAt = expiresAt
                try db.execute(sql: "INSERT INTO session_rotated (refresh_hash, session_id) VALUES (?, ?)", arguments: [presented, session.id])
                // The session's last rotated tokens are enough to catch a copy in use.
                try db.execute(
                    sql: """
                        DELETE FROM session_rotated WHERE session_id = ?1 AND rowid NOT IN (
                            SELECT rowid FROM session_rotated WHERE session_id = ?1 ORDER BY rowid DESC LIMIT ?2)
                        """,
                    arguments: [session.id, kept])
                try db.execute(
                    sql: "UPDATE session SET refresh_hash = ?, last_used_at = ?, expires_at = ? WHERE id = ?",
                    arguments: [next, now.milliseconds, expiresAt.milliseconds, session.id])
                return .rotated(session)
            }
            if let id = try String.fetchOne(db, sql: "SELECT session_id FROM session_rotated WHERE refresh_hash = ?", arguments: [presented]) {
                try Self.endSessions(db, "id = ?", [id], now: now)
                return .reused(sessionID: id)
            }
            if let claimed, try Self.endSessions(db, "id = ? AND expires_at > ?", [claimed, now.milliseconds], now: now) > 0 {
                return .reused(sessionID: claimed)
            }
            return .unknown
        }
    }

    public func endSessions(_ which: SessionSelection, now: Date) async throws -> Int {
        try await pool.writeOrBusy { db in
            switch which {
            case .one(let id, let accountID): try Self.endSessions(db, "id = ? AND account_id = ?", [id, accountID], now: now)
            case .all(let accountID, let kept): try Self.endSessions(db, "account_id = ? AND id IS NOT ?", [accountID, kept], now: now)
            }
        }
    }

    /// Ends the open sessions that `condition` picks, each with an account event; how many.
    @discardableResult
    static func endSessions(_ db: Database, _ condition: String, _ arguments: StatementArguments, now: Date) throws -> Int {
        let ended = try Row.fetchAll(db, sql: "SELECT id, account_id FROM session WHERE ended_at IS NULL AND \(condition)", arguments: arguments)
        for row in ended {
            try db.execute(sql: "UPDATE session SET ended_at = ? WHERE id = ?", arguments: [now.milliseconds, row["id"] as String])
            try record(.sessionEnded(sessionID: row["id"], accountID: row["account_id"]), db, now: now)
        }
        return ended.count
    }

    public func openSessions(accountID: Int64, now: Date) async throws -> [Session] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.sessionColumns) FROM session WHERE account_id = ? AND ended_at IS NULL AND expires_at > ? ORDER BY created_at DESC, id",
                arguments: [accountID, now.milliseconds]
            ).map(Self.session)
        }
    }

    static let sessionColumns = "id, account_id, created_at, last_used_at, expires_at"

    static func session(_ row: Row) -> Session {
        Session(
            id: row["id"], accountID: row["account_id"], createdAt: Date(milliseconds: row["created_at"]), lastUsedAt: Date(milliseconds: row["last_used_at"]),
            expiresAt: Date(milliseconds: row["expires_at"]))
    }

    // MARK: API keys

    public func createAPIKey(name: String, role: Role, keyHash: Data, now: Date) async throws -> APIKey {
        let id = try await pool.writeOrBusy { db in
            try db.execute(
                sql: "INSERT INTO api_key (name, role, key_hash, created_at) VALUES (?, ?, ?, ?)", arguments: [name, role.rawValue, keyHash, now.milliseconds])
            return db.lastInsertedRowID
        }
        return APIKey(id: id, name: name, role: role, createdAt: now, revokedAt: nil)
    }

    public func apiKey(hash: Data) async throws -> APIKey? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.keyColumns) FROM api_key WHERE key_hash = ? AND revoked_at IS NULL", arguments: [hash]).map(Self.key)
        }
    }

    public func apiKeys() async throws -> [APIKey] {
        try await pool.read { db in try Row.fetchAll(db, sql: "SELECT \(Self.keyColumns) FROM api_key ORDER BY id").map(Self.key) }
    }

    public func revokeAPIKey(id: Int64, now: Date) async throws {
        try await pool.writeOrBusy { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM api_key WHERE id = ?", arguments: [id]) == true else { throw APIKeyNotFound(id: id) }
            try db.execute(sql: "UPDATE api_key SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [now.milliseconds, id])
            if db.changesCount == 1 { try Self.record(.apiKeyRevoked(id: id), db, now: now) }
        }
    }

    static let keyColumns = "id, name, role, created_at, revoked_at"

    static func key(_ row: Row) -> APIKey {
        APIKey(
            id: row["id"], name: row["name"], role: Role(rawValue: row["role"]) ?? .integration, createdAt: Date(milliseconds: row["created_at"]),
            revokedAt: (row["revoked_at"] as Int64?).map(Date.init(milliseconds:)))
    }

    // MARK: Signing keys

    public func signingKeys(storingIfNone first: SigningKey) async throws -> [SigningKey] {
        // Read without the writers' lock (servers read the keys again while they run).
        let kept = try await pool.read { db in try Self.signingKeys(db) }
        if !kept.isEmpty { return kept }
        return try await pool.writeOrBusy { db in
            if try Int.fetchOne(db, sql: "SELECT count(*) FROM signing_key") == 0 { try Self.insert(first, db) }
            return try Self.signingKeys(db)
        }
    }

    private static func signingKeys(_ db: Database) throws -> [SigningKey] {
        try Row.fetchAll(db, sql: "SELECT kid, secret, created_at FROM signing_key ORDER BY rowid DESC")
            .map { SigningKey(kid: $0["kid"], secret: $0["secret"], createdAt: Date(milliseconds: $0["created_at"])) }
    }

    public func addSigningKey(_ key: SigningKey, keeping: Int) async throws {
        try await pool.writeOrBusy { db in
            try Self.insert(key, db)
            try db.execute(
                sql: "DELETE FROM signing_key WHERE kid NOT IN (SELECT kid FROM signing_key ORDER BY rowid DESC LIMIT ?)", arguments: [keeping])
        }
    }

    static func insert(_ key: SigningKey, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO signing_key (kid, secret, created_at) VALUES (?, ?, ?)", arguments: [key.kid, key.secret, key.createdAt.milliseconds])
    }

    // MARK: Account events

    /// Writes an event in the caller's transaction, and prunes rows older than
    /// ``StorePorts/eventRetention`` but never the newest. AUTOINCREMENT: a number is never given
    /// twice, even after the newest rows are pruned; writers are serialized, so numbers
    /// follow commit order.
    static func record(_ event: AccountEvent, _ db: Database, now: Date) throws {
        let (kind, account, session, role, disabled, key): (String, Int64?, String?, String?, Bool?, Int64?) =
            switch event {
            case .sessionEnded(let session, let account): ("session_ended", account, session, nil, nil, nil)
            case .accountChanged(let id, let role, let disabled): ("account_changed", id, nil, role.rawValue, disabled, nil)
            case .apiKeyRevoked(let id): ("api_key_revoked", nil, nil, nil, nil, id)
            }
        try db.execute(
            sql: "INSERT INTO account_event (kind, account_id, session_id, role, disabled, api_key_id, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [kind, account, session, role, disabled, key, now.milliseconds])
        try db.execute(
            sql: "DELETE FROM account_event WHERE at < ? AND seq < (SELECT max(seq) FROM account_event)",
            arguments: [now.addingTimeInterval(-eventRetention).milliseconds])
    }

    public func accountEvents(after seq: Int64, limit: Int) async throws -> [NumberedAccountEvent] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT seq, at, kind, account_id, session_id, role, disabled, api_key_id FROM account_event WHERE seq > ? ORDER BY seq LIMIT ?",
                arguments: [seq, limit]
            ).map { row in
                NumberedAccountEvent(seq: row["seq"], at: Date(milliseconds: row["at"]), event: try Self.event(row))
            }
        }
    }

    /// An event row's event; one that names no account, session or key where its kind
    /// needs one (the table's CHECKs allow none) is a damaged database.
    static func event(_ row: Row) throws -> AccountEvent {
        let kind: String = row["kind"]
        switch (kind, row["account_id"] as Int64?, row["session_id"] as String?, row["api_key_id"] as Int64?) {
        case ("session_ended", let account?, let session?, _): return .sessionEnded(sessionID: session, accountID: account)
        case ("account_changed", let account?, _, _):
            return .accountChanged(id: account, role: Role(rawValue: row["role"] ?? "") ?? .inspector, disabled: row["disabled"] ?? false)
        case ("api_key_revoked", _, _, let key?): return .apiKeyRevoked(id: key)
        default: throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "account event \(row["seq"] as Int64) of kind \(kind.prefix(40)) is incomplete")
        }
    }

    public func revocations(since: Date) async throws -> RevocationSnapshot {
        try await pool.read { db in
            let horizon = since.milliseconds
            var ended: [String: Date] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, ended_at FROM session WHERE ended_at >= ?", arguments: [horizon]) {
                ended[row["id"]] = Date(milliseconds: row["ended_at"])
            }
            let roles = try Row.fetchAll(
                db, sql: "SELECT account_id, role, at FROM account_event WHERE kind = 'account_changed' AND at >= ? ORDER BY seq", arguments: [horizon]
            ).map { (accountID: $0["account_id"] as Int64, role: Role(rawValue: $0["role"]) ?? .inspector, at: Date(milliseconds: $0["at"])) }
            return RevocationSnapshot(
                seq: try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM account_event") ?? 0, endedSessions: ended,
                disabledAccounts: Set(try Int64.fetchAll(db, sql: "SELECT id FROM account WHERE disabled")), roleChanges: roles,
                revokedKeys: Set(try Int64.fetchAll(db, sql: "SELECT id FROM api_key WHERE revoked_at IS NOT NULL")))
        }
    }

}
