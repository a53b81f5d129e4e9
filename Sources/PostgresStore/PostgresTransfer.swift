import Foundation
import NIOCore
import PostgresNIO
import ReportModel
import StorePorts

/// A PostgreSQL database read and written table by table in the shared words of
/// ``TransferTables``: the target of `posterwatch migrate` (and a source, to compare).
///
/// Rows go in with `ON CONFLICT DO NOTHING`, so a batch loaded twice writes nothing twice;
/// the changes go in with the outbox trigger off (their deliveries are rows of their own);
/// the one-row tables take the larger value; and at the end every sequence that numbers
/// rows is brought past the rows loaded. Table and column names come from
/// ``TransferTables`` and the catalogue, never from input; values are always bound.
public struct PostgresTransfer: TableDump, TableLoad {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    /// Each table's order (its key), for stable pages.
    private static let order: [String: String] = [
        "session": "id", "session_rotated": "seq", "signing_key": "seq", "account_event": "seq", "report_filer": "report_id",
        "report_history": "seq", "report_change": "seq", "idempotency_key": "caller, key", "phone": "number", "phone_history": "seq",
        "phone_block_move": "report_id", "report_photo": "id", "notification_read": "account_id", "webhook_event": "action, webhook_id",
        "webhook_delivery": "id", "webhook_attempt": "delivery_id, number",
    ]

    /// The one-row tables, as one statement each.
    private static let single: [String: String] = [
        "reference_data": "SELECT document::text FROM reference_data",
        "account_event_counter": "SELECT last FROM account_event_counter",
        "report_sequence": "SELECT last_id FROM report_sequence",
        "change_counter": "SELECT last, pruned_through FROM change_counter",
    ]

    public func rowCount(_ table: String) async throws -> Int {
        guard TransferTables.columns(of: table) != nil else { throw UnknownTable(name: table) }
        if Self.single[table] != nil { return 1 }
        return try await database.client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: logger).collect()[0].decode(Int.self)
    }

    public func rows(of table: String, offset: Int, limit: Int) async throws -> TableBatch {
        guard let columns = TransferTables.columns(of: table) else { throw UnknownTable(name: table) }
        let sql = Self.single[table] ?? "SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY \(Self.order[table] ?? "id") LIMIT \(limit) OFFSET \(offset)"
        let rows = Self.single[table] != nil && offset > 0 ? [] : try await database.client.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
        return TableBatch(table: table, columns: columns, rows: try rows.map { row in try row.map(Self.cell) })
    }

    /// A value as both stores give it: booleans as 0 and 1, as SQLite keeps them.
    private static func cell(_ value: PostgresCell) throws -> Cell {
        guard value.bytes != nil else { return .null }
        switch value.dataType {
        case .bool: return .integer(try value.decode(Bool.self) ? 1 : 0)
        case .int2, .int4, .int8: return .integer(try value.decode(Int64.self))
        case .float4, .float8: return .real(try value.decode(Double.self))
        case .bytea: return .blob(try value.decode(Data.self))
        default: return .text(try value.decode(String.self))
        }
    }

    // MARK: Loading

    public func holdsData() async throws -> Bool {
        try await database.client.query(
            """
            SELECT EXISTS (SELECT 1 FROM account) OR EXISTS (SELECT 1 FROM report) OR EXISTS (SELECT 1 FROM report_hidden)
                OR EXISTS (SELECT 1 FROM report_change) OR EXISTS (SELECT 1 FROM webhook)
            """, logger: logger
        ).collect()[0].decode(Bool.self)
    }

    public func transferSource() async throws -> String? {
        try await database.client.query("SELECT source FROM transfer ORDER BY started_at DESC LIMIT 1", logger: logger).collect().first?.decode(String.self)
    }

    public func beginTransfer(from source: String) async throws {
        try await database.client.query("INSERT INTO transfer (source, started_at) VALUES (\(source), \(Date().milliseconds))", logger: logger)
    }

    public func load(_ batch: TableBatch) async throws -> Int {
        guard !batch.rows.isEmpty else { return 0 }
        switch batch.table {
        case "reference_data": return try await loadReference(batch)
        case "account_event_counter":
            try await database.client.query("UPDATE account_event_counter SET last = greatest(last, \(Self.integer(batch.rows[0][0])))", logger: logger)
            return 0
        case "report_sequence":
            try await database.client.query("UPDATE report_sequence SET last_id = greatest(last_id, \(Self.integer(batch.rows[0][0])))", logger: logger)
            return 0
        case "change_counter":
            let row = batch.rows[0]
            try await database.client.query(
                "UPDATE change_counter SET last = greatest(last, \(Self.integer(row[0]))), pruned_through = greatest(pruned_through, \(Self.integer(row[1])))",
                logger: logger)
            return 0
        default: return try await insert(batch)
        }
    }

    private static func integer(_ cell: Cell) -> Int64 {
        if case .integer(let n) = cell { return n }
        return 0
    }

    /// The city's vocabularies replace those the new database was seeded with.
    private func loadReference(_ batch: TableBatch) async throws -> Int {
        guard case .text(let document) = batch.rows[0][0] else { return 0 }
        let reference = try JSONDecoder().decode(ReferenceData.self, from: Data(document.utf8))
        try await database.transaction { c in
            try await c.query("UPDATE reference_data SET document = \(document)::jsonb", logger: logger)
            for d in reference.districts {
                try await c.query(
                    """
                    INSERT INTO district VALUES (\(d.code), \(d.nameUk), \(d.nameEn))
                    ON CONFLICT (code) DO UPDATE SET name_uk = excluded.name_uk, name_en = excluded.name_en
                    """, logger: logger)
            }
            for (position, s) in reference.statuses.enumerated() {
                try await c.query(
                    """
                    INSERT INTO status VALUES (\(s.code), \(-1 - position), \(s.nameUk), \(s.nameEn), \(s.open))
                    ON CONFLICT (code) DO UPDATE SET name_uk = excluded.name_uk, name_en = excluded.name_en, open = excluded.open
                    """, logger: logger)
            }
            // Positions last, through negatives, so that no two statuses ever share one.
            for (position, s) in reference.statuses.enumerated() {
                try await c.query("UPDATE status SET position = \(position) WHERE code = \(s.code)", logger: logger)
            }
        }
        return 0  // replaced, never added
    }

    /// The rows, each converted to its column's type, in one statement.
    private func insert(_ batch: TableBatch) async throws -> Int {
        let types = try await columnTypes(batch.table)
        var sql = SQL("INSERT INTO \(batch.table) (\(batch.columns.joined(separator: ", "))) VALUES ")
        for (r, row) in batch.rows.enumerated() {
            var values: [String] = []
            for (column, cell) in zip(batch.columns, row) {
                values.append(sql.bind(cell, as: types[column] ?? "text"))
            }
            sql.append((r > 0 ? ", (" : "(") + values.joined(separator: ", ") + ")")
        }
        sql.append(" ON CONFLICT DO NOTHING RETURNING 1")
        let query = sql.query
        return try await database.transaction { c in
            // Changes loaded are not new changes: their deliveries come as rows of their own.
            if batch.table == "report_change" { try await c.query("ALTER TABLE report_change DISABLE TRIGGER report_change_outbox", logger: logger) }
            let inserted = try await c.query(query, logger: logger).collect().count
            if batch.table == "report_change" { try await c.query("ALTER TABLE report_change ENABLE TRIGGER report_change_outbox", logger: logger) }
            return inserted
        }
    }

    /// Column → its type, as the catalogue names it.
    private func columnTypes(_ table: String) async throws -> [String: String] {
        var types: [String: String] = [:]
        for row in try await database.client.query(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(table)", logger: logger
        ).collect() {
            let (column, type) = try row.decode((String, String).self)
            types[column] = type
        }
        return types
    }

    public func finishTransfer() async throws {
        let serials = try await database.client.query(
            """
            SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'
            """, logger: logger
        ).collect().map { try $0.decode((String, String).self) }
        for (table, column) in serials {
            try await database.client.query(
                PostgresQuery(unsafeSQL: "SELECT setval(pg_get_serial_sequence('\(table)', '\(column)'), greatest((SELECT max(\(column)) FROM \(table)), 1))"),
                logger: logger)
        }
        try await database.client.query("UPDATE transfer SET finished_at = \(Date().milliseconds) WHERE finished_at IS NULL", logger: logger)
    }
}

extension SQL {
    /// Binds a moved value as its column's type (SQLite keeps booleans as integers).
    mutating func bind(_ cell: Cell, as type: String) -> String {
        switch (cell, type) {
        case (.null, _): return bind(Optional<String>.none) + "::" + (type == "USER-DEFINED" ? "text" : type)
        case (.integer(let n), "boolean"): return bind(n != 0)
        case (.integer(let n), "double precision"): return bind(Double(n))
        case (.integer(let n), _): return bind(n)
        case (.real(let x), _): return bind(x)
        case (.text(let s), _): return bind(s)
        case (.blob(let data), _): return bind(ByteBuffer(bytes: data))
        }
    }
}
