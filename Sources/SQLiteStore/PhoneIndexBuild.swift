import Foundation
import GRDB
import GRDBSQLite

/// The phone indexes of a bulk load into a new database, built on a second core from the
/// staged rows (``ImportStaging``) while SQLite moves them into the report table on the
/// first.
///
/// FTS5 keeps an index wholly in two tables of its own, `report_search_data` (the segments'
/// pages, the structure record) and `report_search_idx` (where each segment's terms start).
/// The index is built in a scratch database beside the target, under the same definition
/// and settings, from the staged rows in the same order as ``DeferredIndexes`` reads the
/// stored table; `report_phone`'s rows are sorted there too. Those tables are then copied
/// into the new database: a copy instead of tokenizing and sorting on the critical path.
/// Everything goes through SQLite's pages and sorter (runs in temporary files), so the
/// build's memory does not grow with the import.
///
/// Only for a database that no other connection has opened
/// (``SQLiteReports/create(path:reference:options:now:next:progress:)``), whose connection
/// is closed after the import: an FTS5 table keeps its structure record cached per
/// connection, so a connection that later wrote through `report_search` itself would not
/// see that its pages were replaced underneath it.
enum PhoneIndexBuild {
    /// A report's rowid in `report_search`, its recency: `(created_at in seconds) << 31 | id`,
    /// as an SQL expression over the two given (the triggers spell it out too).
    static func recency(createdAt: String, id: String) -> String { "((\(createdAt) / 1000) << 31) | \(id)" }

    /// Fills `report_search` from the rows of `table`, in recency order: FTS5 then meets
    /// its rowids (nearly) ascending, as it likes.
    static func fill(from table: String) -> String {
        """
        INSERT INTO report_search(rowid, phones, id_digits)
            SELECT \(recency(createdAt: "created_at", id: "id")), phones, id FROM \(table) ORDER BY created_at, id
        """
    }

    /// Fills `report_search` from the stored reports.
    static let fillFromTable = fill(from: "report")

    /// Starts building, on a thread of its own, the indexes of the rows of `staging`, as
    /// `db` defines them, into a scratch database beside `target`.
    static func start(_ staging: ImportStaging, like db: Database, beside target: String) throws -> ImportStaging.Helper {
        let definition = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'report_search'") ?? ""
        let settings = try Row.fetchAll(db, sql: "SELECT k, v FROM report_search_config WHERE k <> 'version'")
            .map { (key: $0[0] as String, value: $0[1] as DatabaseValue) }
        return staging.buildAside("phones", beside: target, thread: "posterwatch.phone-index") { db in
            try db.execute(sql: definition)
            for setting in settings {
                try db.execute(sql: "INSERT INTO report_search(report_search, rank) VALUES (?, ?)", arguments: [setting.key, setting.value])
            }
            try db.execute(sql: fill(from: "staging.\(ImportStaging.table)"))
            try db.execute(sql: SearchQueue.optimize)
            try db.execute(sql: "CREATE TABLE phone_rows (phone TEXT, report_id INTEGER, longitude REAL, latitude REAL, status TEXT)")
            try db.execute(sql: "INSERT INTO phone_rows " + ReportPhones.rows(of: "staging.\(ImportStaging.table)"))
        }
    }

    /// Replaces the indexes of `db` by those built, and deletes their scratch database. A
    /// number given twice on one report is one row (as the triggers keep it).
    static func copy(_ built: ImportStaging.Aside, into db: Database) throws {
        try ImportStaging.copy(built, into: db, [
            ("SELECT * FROM report_search_data", "report_search_data", "report_search_data", "INSERT"),
            ("SELECT * FROM report_search_idx", "report_search_idx", "report_search_idx", "INSERT"),
            ("SELECT * FROM phone_rows", "report_phone", "report_phone", "INSERT OR IGNORE"),
        ])
    }
}
