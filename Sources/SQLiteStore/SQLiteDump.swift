import Foundation
import GRDB
import ReportModel
import StorePorts

/// The SQLite database read table by table in the shared words of ``TransferTables``: the
/// source of `posterwatch migrate`. Its own bookkeeping becomes the shared one-row tables
/// (`sqlite_sequence` the counters, `report_change_pruned` the retention mark).
extension SQLiteReports: TableDump {
    public func rowCount(_ table: String) async throws -> Int {
        guard let statement = Self.dumpStatements[table] else { throw UnknownTable(name: table) }
        if statement.single { return 1 }
        return try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0 }
    }

    public func rows(of table: String, offset: Int, limit: Int) async throws -> TableBatch {
        guard let columns = TransferTables.columns(of: table), let statement = Self.dumpStatements[table] else { throw UnknownTable(name: table) }
        if table == "reference_data" {
            let document = String(decoding: try JSONEncoder().encode(reference), as: UTF8.self)
            return TableBatch(table: table, columns: columns, rows: offset > 0 ? [] : [[.text(document)]])
        }
        return try await pool.read { db in
            let sql = statement.single ? statement.sql : statement.sql + " LIMIT \(limit) OFFSET \(offset)"
            let rows = statement.single && offset > 0 ? [] : try Row.fetchAll(db, sql: sql)
            return TableBatch(table: table, columns: columns, rows: rows.map { row in row.databaseValues.map(Self.cell) })
        }
    }

    private static func cell(_ value: DatabaseValue) -> Cell {
        switch value.storage {
        case .null: .null
        case .int64(let n): .integer(n)
        case .double(let x): .real(x)
        case .string(let s): .text(s)
        case .blob(let data): .blob(data)
        }
    }

    /// Each table's statement: its shared columns, in a stable order; `single` for the
    /// one-row tables.
    private static let dumpStatements: [String: (sql: String, single: Bool)] = {
        var statements: [String: (sql: String, single: Bool)] = [
            "reference_data": ("", true),
            "account_event_counter": ("SELECT ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'account_event'), 0)", true),
            "report_sequence": ("SELECT last_id FROM report_sequence", true),
            "change_counter": (
                "SELECT ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'report_change'), 0), (SELECT through FROM report_change_pruned)", true),
        ]
        // Tables without a rowid are ordered by their keys.
        let order = [
            "idempotency_key": "caller, key", "phone": "number", "webhook_event": "action, webhook_id", "webhook_attempt": "delivery_id, number",
            "report": "id",
        ]
        for (table, columns) in TransferTables.all where statements[table] == nil {
            statements[table] = ("SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY \(order[table] ?? "rowid")", false)
        }
        return statements
    }()
}

