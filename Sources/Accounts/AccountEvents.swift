import Foundation
import GRDB
import ReportModel

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

/// The table of ``AccountEvent``s: written by the account stores inside their own
/// transactions, read by ``AccountService`` in number order.
///
/// The numbers are SQLite's AUTOINCREMENT rowids: writes are serialized, so a row's
/// number is below that of every row committed after it, and a reader that has seen N
/// never later finds a row below N. Rows older than ``retention`` are pruned as new ones
/// are written, but never the newest, so a reader that was away longer can tell that it
/// missed some (the first row after its number is not the next number) and reloads.
enum AccountEventLog {
    /// How long rows are kept. Only their last ``AccessTokens/lifetime`` matters to tokens
    /// still out; a process that has not read them for longer reloads from the tables.
    static let retention: TimeInterval = 86_400

    static func record(_ event: AccountEvent, _ db: Database, now: Date = Date()) throws {
        let (kind, account, session, role, disabled, key): (String, Int64?, String?, String?, Bool?, Int64?) =
            switch event {
            case .sessionEnded(let session, let account): ("session_ended", account, session, nil, nil, nil)
            case .accountChanged(let id, let role, let disabled): ("account_changed", id, nil, role.rawValue, disabled, nil)
            case .apiKeyRevoked(let id): ("api_key_revoked", nil, nil, nil, nil, id)
            }
        try db.execute(
            sql: "INSERT INTO account_event (kind, account_id, session_id, role, disabled, api_key_id, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [kind, account, session, role, disabled, key, AccountStore.ms(now)])
        try db.execute(
            sql: "DELETE FROM account_event WHERE at < ? AND seq < (SELECT max(seq) FROM account_event)",
            arguments: [AccountStore.ms(now.addingTimeInterval(-retention))])
    }

    /// The events after `seq`, in number order, at most `limit`.
    static func events(after seq: Int64, limit: Int, _ db: Database) throws -> [(seq: Int64, at: Date, event: AccountEvent)] {
        try Row.fetchAll(
            db, sql: "SELECT seq, at, kind, account_id, session_id, role, disabled, api_key_id FROM account_event WHERE seq > ? ORDER BY seq LIMIT ?",
            arguments: [seq, limit]
        ).compactMap { row in
            let event: AccountEvent
            switch row["kind"] as String {
            case "session_ended": event = .sessionEnded(sessionID: row["session_id"], accountID: row["account_id"])
            case "account_changed": event = .accountChanged(id: row["account_id"], role: Role(rawValue: row["role"]) ?? .inspector, disabled: row["disabled"])
            case "api_key_revoked": event = .apiKeyRevoked(id: row["api_key_id"])
            default: return nil
            }
            return (row["seq"], AccountStore.date(row["at"]), event)
        }
    }

    /// The number of the newest event, 0 when there is none.
    static func last(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM account_event") ?? 0
    }
}
