import Foundation

/// A person who may write: an inspector, a supervisor or an administrator.
public struct Account: Sendable, Hashable, Codable {
    public var id: Int64
    public var name: String
    public var email: String
    /// Normalized like report phones (`380671234567`).
    public var phone: String
    public var role: Role
    public var disabled: Bool
    public var createdAt: Date
    public var lastLoginAt: Date?

    public init(id: Int64, name: String, email: String, phone: String, role: Role, disabled: Bool, createdAt: Date, lastLoginAt: Date? = nil) {
        self.id = id
        self.name = name
        self.email = email
        self.phone = phone
        self.role = role
        self.disabled = disabled
        self.createdAt = createdAt
        self.lastLoginAt = lastLoginAt
    }
}

/// A signed-in device of an account: it holds one refresh token at a time.
public struct Session: Sendable, Hashable, Codable {
    public var id: String
    public var accountID: Int64
    public var createdAt: Date
    public var lastUsedAt: Date
    public var expiresAt: Date

    public init(id: String, accountID: Int64, createdAt: Date, lastUsedAt: Date, expiresAt: Date) {
        self.id = id
        self.accountID = accountID
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
    }
}

/// A machine client's credential (an operator's blocklist sync, a push gateway).
public struct APIKey: Sendable, Hashable, Codable {
    public var id: Int64
    public var name: String
    public var role: Role
    public var createdAt: Date
    public var revokedAt: Date?

    public init(id: Int64, name: String, role: Role, createdAt: Date, revokedAt: Date? = nil) {
        self.id = id
        self.name = name
        self.role = role
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// Something that ends or narrows a credential's power. Each is a numbered row of
/// `account_event`, written in the transaction of the change itself, so that every
/// process serving the database learns of it by reading the rows after the last it read
/// (``AccountService``), whichever process (or `posterwatch user …`) made it.
public enum AccountEvent: Sendable, Hashable {
    /// A session was ended: logout, ended by its owner, by a password change, by a
    /// detected refresh-token reuse, or because its account was disabled.
    case sessionEnded(sessionID: String, accountID: Int64)
    /// An account's role, name or state was written; the role and state it has now.
    case accountChanged(id: Int64, role: Role, disabled: Bool)
    /// An API key was revoked.
    case apiKeyRevoked(id: Int64)
}
