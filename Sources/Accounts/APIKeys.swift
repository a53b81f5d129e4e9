import Foundation
import Geometry
import GRDB
import ReportModel

/// A machine client's credential (an operator's blocklist sync, a push gateway).
public struct APIKey: Sendable, Hashable, Codable {
    public var id: Int64
    public var name: String
    public var role: Role
    public var createdAt: Date
    public var revokedAt: Date?
}

/// API keys (table `api_key`): `pwk_` and 256 random bits, shown once when made and
/// stored only as their SHA-256 hash. A key is sent like a token (`Authorization: Bearer
/// pwk_…`) and is checked against the database each time, so a key made or revoked by
/// the CLI counts at once, also in a server already running.
public struct APIKeyStore: Sendable {
    static let prefix = "pwk_"
    let pool: DatabasePool

    public init(_ accounts: AccountStore) { pool = accounts.pool }

    /// Makes a key; the key itself is in the answer and nowhere else.
    public func create(name given: String, role: Role = .integration, now: Date = Date()) throws -> (key: APIKey, secret: String) {
        let name: String
        do { name = try Names.checked(given) } catch { throw ValidationErrors([error]) }
        guard role == .integration else { throw ValidationErrors([ValidationError(field: "role", "an API key's role is integration")]) }
        let secret = Self.prefix + Secrets.token(bytes: 32)
        let id = try pool.write { db in
            try db.execute(
                sql: "INSERT INTO api_key (name, role, key_hash, created_at) VALUES (?, ?, ?, ?)",
                arguments: [name, role.rawValue, Secrets.sha256(secret), AccountStore.ms(now)])
            return db.lastInsertedRowID
        }
        return (APIKey(id: id, name: name, role: role, createdAt: now, revokedAt: nil), secret)
    }

    /// The key a secret is, when it is one and not revoked.
    public func key(secret: String) throws -> APIKey? {
        guard secret.hasPrefix(Self.prefix) else { return nil }
        return try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM api_key WHERE key_hash = ? AND revoked_at IS NULL", arguments: [Secrets.sha256(secret)])
                .map(Self.key)
        }
    }

    public func list() throws -> [APIKey] {
        try pool.read { db in try Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM api_key ORDER BY id").map(Self.key) }
    }

    /// Revokes a key, with an account event; an unknown id is an ``APIKeyNotFound``.
    public func revoke(id: Int64, now: Date = Date()) throws {
        try pool.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM api_key WHERE id = ?", arguments: [id]) == true else { throw APIKeyNotFound(id: id) }
            try db.execute(sql: "UPDATE api_key SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [AccountStore.ms(now), id])
            if db.changesCount == 1 { try AccountEventLog.record(.apiKeyRevoked(id: id), db, now: now) }
        }
    }

    static let columns = "id, name, role, created_at, revoked_at"

    static func key(_ row: Row) -> APIKey {
        APIKey(
            id: row["id"], name: row["name"], role: Role(rawValue: row["role"]) ?? .integration, createdAt: AccountStore.date(row["created_at"]),
            revokedAt: (row["revoked_at"] as Int64?).map(AccountStore.date))
    }
}

/// No API key has this id.
public struct APIKeyNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: Int64
    public var description: String { "API key \(id) does not exist" }
}
