import Foundation
import GRDB
import Geometry
import ReportModel
import ReportStore

/// The accounts in the database (table `account`): every read and write of them, SQL with
/// bound parameters only. Passwords arrive here already hashed.
public struct AccountStore: Sendable {
    let pool: DatabasePool

    public init(_ store: ReportStore) { pool = store.pool }

    /// Adds an account. An email already registered (in any case) is an ``EmailTaken``;
    /// a phone may be on several accounts.
    public func create(_ draft: AccountDraft, passwordHash: String, now: Date = Date()) throws -> Account {
        try pool.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE email_key = ?", arguments: [AccountDraft.key(email: draft.email)]) == true {
                throw EmailTaken()
            }
            try db.execute(
                sql: """
                    INSERT INTO account (name, email, email_key, phone, password_hash, role, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [draft.name, draft.email, AccountDraft.key(email: draft.email), draft.phone, passwordHash, draft.role.rawValue, Self.ms(now)])
            return try Self.fetch(db, id: db.lastInsertedRowID)!
        }
    }

    /// The account with this id, or nil. One row by its key needs no transaction around it.
    public func account(id: Int64) throws -> Account? {
        try pool.unsafeRead { db in try Self.fetch(db, id: id) }
    }

    /// The account a login names (its email, in any case) and its password hash; nil when
    /// there is none. A phone is no login: several accounts may give one number.
    public func account(login: String) throws -> (account: Account, passwordHash: String)? {
        try pool.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT \(Self.columns), password_hash FROM account WHERE email_key = ?", arguments: [AccountDraft.key(email: login)])
            return row.map { (Self.account($0), $0["password_hash"]) }
        }
    }

    /// Accounts in id order after `after`, at most `limit`, of one role when given.
    public func list(role: Role? = nil, after: Int64 = 0, limit: Int) throws -> [Account] {
        try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.columns) FROM account WHERE id > ? AND (? IS NULL OR role = ?) ORDER BY id LIMIT ?",
                arguments: [after, role?.rawValue, role?.rawValue, limit]
            ).map(Self.account)
        }
    }

    /// Changes an account's role, its name or whether it is disabled; the account as it is
    /// now, written as an account event too. Disabling ends its sessions in the same
    /// transaction (so enabling it again brings none back). An unknown id is an
    /// ``AccountNotFound``.
    public func update(id: Int64, role: Role? = nil, name given: String? = nil, disabled: Bool? = nil) throws -> Account {
        let name: String?
        do {
            name = try given.map { text throws(ValidationError) in try Names.checked(text) }
            if let role { try Role.checkPerson(role) }
        } catch { throw ValidationErrors([error]) }
        return try pool.write { db in
            try db.execute(
                sql: "UPDATE account SET role = coalesce(?, role), name = coalesce(?, name), disabled = coalesce(?, disabled) WHERE id = ?",
                arguments: [role?.rawValue, name, disabled, id])
            guard let account = try Self.fetch(db, id: id) else { throw AccountNotFound(id: id) }
            try AccountEventLog.record(.accountChanged(id: id, role: account.role, disabled: account.disabled), db)
            if disabled == true { try SessionStore.end(db, sessions: "account_id = ?", [id]) }
            return account
        }
    }

    /// An account's password hash, or nil when there is no such account.
    public func passwordHash(id: Int64) throws -> String? {
        try pool.read { db in try String.fetchOne(db, sql: "SELECT password_hash FROM account WHERE id = ?", arguments: [id]) }
    }

    /// Replaces an account's password hash.
    public func setPasswordHash(id: Int64, _ hash: String) throws {
        try pool.write { db in
            try db.execute(sql: "UPDATE account SET password_hash = ? WHERE id = ?", arguments: [hash, id])
            guard db.changesCount == 1 else { throw AccountNotFound(id: id) }
        }
    }

    public func recordLogin(id: Int64, at time: Date = Date()) throws {
        try pool.write { db in try db.execute(sql: "UPDATE account SET last_login_at = ? WHERE id = ?", arguments: [Self.ms(time), id]) }
    }

    static let columns = "id, name, email, phone, role, disabled, created_at, last_login_at"

    static func fetch(_ db: Database, id: Int64) throws -> Account? {
        try Row.fetchOne(try db.cachedStatement(sql: "SELECT \(columns) FROM account WHERE id = ?"), arguments: [id]).map(account)
    }

    static func account(_ row: Row) -> Account {
        Account(
            id: row["id"], name: row["name"], email: row["email"], phone: row["phone"], role: Role(rawValue: row["role"]) ?? .inspector,
            disabled: row["disabled"], createdAt: date(row["created_at"]), lastLoginAt: (row["last_login_at"] as Int64?).map(date))
    }

    static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}

/// The email of a new account is already registered.
public struct EmailTaken: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String { "is already registered" }
}

/// No account has this id.
public struct AccountNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: Int64
    public var description: String { "account \(id) does not exist" }
}
