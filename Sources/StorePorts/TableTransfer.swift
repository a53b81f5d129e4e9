import Foundation

/// One value of a table's row, as both stores can give and take it.
public enum Cell: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// Some rows of one table, their columns named.
public struct TableBatch: Sendable, Hashable {
    public var table: String
    public var columns: [String]
    public var rows: [[Cell]]

    public init(table: String, columns: [String], rows: [[Cell]]) {
        (self.table, self.columns, self.rows) = (table, columns, rows)
    }
}

/// The tables a city's data is, in the words both stores share: what `posterwatch migrate`
/// moves from one store to another, in this order (a table after those it refers to).
/// Each store maps them onto its own schema (SQLite's report keeps a storage key,
/// PostgreSQL's a PostGIS point; the counters are rows of their own in PostgreSQL).
/// Derived tables (indexes, the phone index, queues) are not among them: a store
/// rebuilds those from these.
public enum TransferTables {
    /// Table → its columns, in the order of the move.
    public static let all: [(table: String, columns: [String])] = [
        ("reference_data", ["document"]),
        ("account", ["id", "name", "email", "email_key", "phone", "password_hash", "role", "disabled", "created_at", "last_login_at"]),
        ("session", ["id", "account_id", "refresh_hash", "created_at", "last_used_at", "expires_at", "ended_at"]),
        ("session_rotated", ["refresh_hash", "session_id"]),
        ("api_key", ["id", "name", "role", "key_hash", "created_at", "revoked_at"]),
        ("signing_key", ["kid", "secret", "created_at"]),
        ("account_event", ["seq", "at", "kind", "account_id", "session_id", "role", "disabled", "api_key_id"]),
        ("account_event_counter", ["last"]),
        ("report", ["id", "longitude", "latitude", "address", "city", "district", "object_type", "balance_holder", "violator", "phones", "comment", "status", "created_at", "updated_at"]),
        ("report_sequence", ["last_id"]),
        ("report_hidden", ["id", "longitude", "latitude", "address", "city", "district", "object_type", "balance_holder", "violator", "phones", "comment", "status", "created_at", "updated_at", "hidden_at", "hide_note"]),
        ("report_filer", ["report_id", "account_id"]),
        ("report_history", ["seq", "report_id", "at", "account_id", "api_key_id", "action", "from_status", "to_status", "note", "changes"]),
        ("report_change", ["seq", "report_id", "action", "at", "history_seq", "phone"]),
        ("change_counter", ["last", "pruned_through"]),
        ("idempotency_key", ["caller", "key", "fingerprint", "status", "headers", "answer", "created_at"]),
        ("phone", ["number", "status", "changed_at", "blocked_at"]),
        ("phone_history", ["seq", "number", "at", "account_id", "api_key_id", "action", "from_status", "to_status", "note", "moved"]),
        ("phone_block_move", ["report_id", "history_seq"]),
        ("autodial_campaign", [
            "id", "number", "started_at", "started_account_id", "started_api_key_id", "note", "ended_at", "ended_account_id", "ended_api_key_id",
            "end_reason", "end_note",
        ]),
        ("autodial_call", ["id", "campaign_id", "number", "placed_at", "lease_until", "ended_at", "outcome", "sip_code", "seconds_played", "reason"]),
        ("assignment", [
            "id", "report_id", "account_id", "position", "started_at", "started_account_id", "started_api_key_id", "started_seq", "note",
            "ended_at", "ended_account_id", "ended_api_key_id", "ended_seq", "end_note",
        ]),
        ("report_photo", ["id", "report_id", "sha256", "width", "height", "bytes", "created_at", "account_id"]),
        ("notification_read", ["account_id", "up_to"]),
        ("webhook", ["id", "url", "description", "secret", "enabled", "disabled_reason", "created_at", "updated_at"]),
        ("webhook_event", ["action", "webhook_id"]),
        ("webhook_delivery", ["id", "webhook_id", "change_seq", "action", "created_at", "state", "attempts", "next_at", "payload", "last_status", "last_error", "finished_at"]),
        ("webhook_attempt", ["delivery_id", "number", "at", "status", "error", "duration_ms"]),
    ]

    /// The columns of a table.
    public static func columns(of table: String) -> [String]? { all.first { $0.table == table }?.columns }
}

/// A store read table by table (``TransferTables``).
public protocol TableDump: Sendable {
    /// How many rows a table holds.
    func rowCount(_ table: String) async throws -> Int
    /// Up to `limit` rows of a table after the `offset` first, in a stable order (its key's).
    func rows(of table: String, offset: Int, limit: Int) async throws -> TableBatch
}

/// A store written table by table, as `posterwatch migrate` fills a new one.
///
/// Requirements: loading a batch again writes nothing twice (a row whose key the table
/// holds is left as it is), so an interrupted move can be run again; the one-row tables
/// (counters, sequences, reference data) take the larger or the given value; the outbox is
/// not written again by the changes loaded (their deliveries come as rows of their own).
public protocol TableLoad: Sendable {
    /// Whether the store holds any account, report, change or webhook.
    func holdsData() async throws -> Bool
    /// What a previous move into this store recorded of its source, if any.
    func transferSource() async throws -> String?
    /// Records the source of the move (before the first row).
    func beginTransfer(from source: String) async throws
    /// Writes a batch; returns how many rows were new.
    @discardableResult
    func load(_ batch: TableBatch) async throws -> Int
    /// Brings what numbers rows (sequences) past the rows loaded, and records the move done.
    func finishTransfer() async throws
}

/// A table the move does not know.
public struct UnknownTable: Error, Sendable, CustomStringConvertible {
    public var name: String
    public init(name: String) { self.name = name }
    public var description: String { "no table \(name) is moved between stores" }
}
