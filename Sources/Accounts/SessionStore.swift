import Foundation
import GRDB

/// A signed-in device of an account: it holds one refresh token at a time.
public struct Session: Sendable, Hashable, Codable {
    public var id: String
    public var accountID: Int64
    public var createdAt: Date
    public var lastUsedAt: Date
    public var expiresAt: Date
}

/// Sessions (table `session`): refresh tokens are stored only as SHA-256 hashes. Each
/// refresh replaces the session's token and remembers the old hash, so that an old token
/// presented again (it was stolen, or the client was) ends the whole session.
public struct SessionStore: Sendable {
    let pool: DatabasePool
    /// How long a session lasts without a refresh.
    public static let lifetime: TimeInterval = 30 * 86_400

    public init(_ accounts: AccountStore) { pool = accounts.pool }

    /// What a refresh token turned out to be.
    public enum Refresh: Sendable, Equatable {
        /// The session's current token: now replaced.
        case rotated(Session)
        /// A token the session had before: the session is ended.
        case reused(sessionID: String)
        /// No session's token (unknown, expired, or of an ended session).
        case unknown
    }

    /// How many of a session's replaced refresh tokens are remembered (a copy of an older
    /// one is refused all the same, as unknown, but no longer ends the session).
    static let rotatedKept = 64

    /// Starts a session for the account; its id, and the refresh token to hand out.
    /// Sessions ended or expired over a month ago are forgotten meanwhile.
    public func start(accountID: Int64, now: Date = Date()) throws -> (session: Session, refreshToken: String) {
        let token = Secrets.token(bytes: 32)
        let session = Session(
            id: Secrets.token(bytes: 12), accountID: accountID, createdAt: now, lastUsedAt: now, expiresAt: now.addingTimeInterval(Self.lifetime))
        try pool.write { db in
            let forgotten = AccountStore.ms(now.addingTimeInterval(-Self.lifetime))
            try db.execute(
                sql: "DELETE FROM session_rotated WHERE session_id IN (SELECT id FROM session WHERE ended_at < ? OR expires_at < ?)",
                arguments: [forgotten, forgotten])
            try db.execute(sql: "DELETE FROM session WHERE ended_at < ? OR expires_at < ?", arguments: [forgotten, forgotten])
            try db.execute(
                sql: "INSERT INTO session (id, account_id, refresh_hash, created_at, last_used_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [session.id, accountID, Secrets.sha256(token), AccountStore.ms(now), AccountStore.ms(now), AccountStore.ms(session.expiresAt)])
        }
        return (session, token)
    }

    /// Replaces a session's refresh token; the new token, or why there is none.
    public func refresh(_ token: String, now: Date = Date()) throws -> (outcome: Refresh, refreshToken: String?) {
        let presented = Secrets.sha256(token)
        let next = Secrets.token(bytes: 32)
        return try pool.write { db in
            if let row = try Row.fetchOne(
                db, sql: "SELECT \(Self.columns) FROM session WHERE refresh_hash = ? AND ended_at IS NULL AND expires_at > ?",
                arguments: [presented, AccountStore.ms(now)])
            {
                var session = Self.session(row)
                session.lastUsedAt = now
                session.expiresAt = now.addingTimeInterval(Self.lifetime)
                try db.execute(sql: "INSERT INTO session_rotated (refresh_hash, session_id) VALUES (?, ?)", arguments: [presented, session.id])
                // The session's last rotated tokens are enough to catch a copy in use.
                try db.execute(
                    sql: """
                        DELETE FROM session_rotated WHERE session_id = ?1 AND rowid NOT IN (
                            SELECT rowid FROM session_rotated WHERE session_id = ?1 ORDER BY rowid DESC LIMIT \(Self.rotatedKept))
                        """,
                    arguments: [session.id])
                try db.execute(
                    sql: "UPDATE session SET refresh_hash = ?, last_used_at = ?, expires_at = ? WHERE id = ?",
                    arguments: [Secrets.sha256(next), AccountStore.ms(now), AccountStore.ms(session.expiresAt), session.id])
                return (.rotated(session), next)
            }
            if let id = try String.fetchOne(db, sql: "SELECT session_id FROM session_rotated WHERE refresh_hash = ?", arguments: [presented]) {
                try Self.end(db, sessions: "id = ?", [id], now: now)
                return (.reused(sessionID: id), nil)
            }
            return (.unknown, nil)
        }
    }

    /// Ends a session of the account (logout, or a session deleted by its owner); whether
    /// there was one to end.
    @discardableResult
    public func end(_ id: String, accountID: Int64, now: Date = Date()) throws -> Bool {
        try pool.write { db in try Self.end(db, sessions: "id = ? AND account_id = ?", [id, accountID], now: now) == 1 }
    }

    /// Ends every session of the account but `kept`; how many.
    @discardableResult
    public func endAll(accountID: Int64, except kept: String? = nil, now: Date = Date()) throws -> Int {
        try pool.write { db in try Self.end(db, sessions: "account_id = ? AND id IS NOT ?", [accountID, kept], now: now) }
    }

    /// Ends the open sessions that `condition` picks, each with an account event; how many.
    @discardableResult
    static func end(_ db: Database, sessions condition: String, _ arguments: StatementArguments, now: Date = Date()) throws -> Int {
        let ended = try Row.fetchAll(db, sql: "SELECT id, account_id FROM session WHERE ended_at IS NULL AND \(condition)", arguments: arguments)
        for row in ended {
            try db.execute(sql: "UPDATE session SET ended_at = ? WHERE id = ?", arguments: [AccountStore.ms(now), row["id"] as String])
            try AccountEventLog.record(.sessionEnded(sessionID: row["id"], accountID: row["account_id"]), db, now: now)
        }
        return ended.count
    }

    /// The account's sessions that are still open, newest first.
    public func open(accountID: Int64, now: Date = Date()) throws -> [Session] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.columns) FROM session WHERE account_id = ? AND ended_at IS NULL AND expires_at > ? ORDER BY created_at DESC, id",
                arguments: [accountID, AccountStore.ms(now)]
            ).map(Self.session)
        }
    }

    static let columns = "id, account_id, created_at, last_used_at, expires_at"

    static func session(_ row: Row) -> Session {
        Session(
            id: row["id"], accountID: row["account_id"], createdAt: AccountStore.date(row["created_at"]),
            lastUsedAt: AccountStore.date(row["last_used_at"]), expiresAt: AccountStore.date(row["expires_at"]))
    }
}
