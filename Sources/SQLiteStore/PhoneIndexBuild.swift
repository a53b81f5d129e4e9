import Foundation
import GRDB
import GRDBSQLite

/// The phone indexes of a bulk load into a new database: the FTS5 index built on a second
/// core from the staged reports' phones in recency order (``ImportStaging``) while the
/// rows go into the report table on the first, and `report_phone` from its staged rows in
/// its own order.
///
/// FTS5 keeps an index wholly in two tables of its own, `report_search_data` (the segments'
/// pages, the structure record) and `report_search_idx` (where each segment's terms start).
/// The index is built in a scratch database beside the target, under the same definition
/// and settings, then those tables are copied into the new database: a copy instead of
/// tokenizing on the critical path.
///
/// Only for a database that no other connection has opened
/// (``SQLiteReports/create(path:reference:options:now:next:progress:)``), whose connection
/// is closed after the import: an FTS5 table keeps its structure record cached per
/// connection, so a connection that later wrote through `report_search` itself would not
/// see that its pages were replaced underneath it.
struct PhoneIndexBuild {
    private let search: ImportStaging.Helper
    /// `report_phone`'s rows, merged at once so that the runs' memory is given back.
    private let phones: SortedRuns<PhoneRowKey>.Merge

    /// A report's rowid in `report_search`, its recency: `(created_at in seconds) << 31 | id`,
    /// as an SQL expression over the two given (the triggers spell it out too).
    static func recency(createdAt: String, id: String) -> String { "((\(createdAt) / 1000) << 31) | \(id)" }

    /// The same of values (`createdAt` in milliseconds, not negative).
    static func recency(createdAt: Int64, id: Int64) -> Int64 { ((createdAt / 1000) << 31) | id }

    /// Fills `report_search` from the stored reports, in recency order: FTS5 then meets
    /// its rowids (nearly) ascending, as it likes.
    static let fillFromTable = """
        INSERT INTO report_search(rowid, phones, id_digits)
            SELECT \(recency(createdAt: "created_at", id: "id")), phones, id FROM report ORDER BY created_at, id
        """

    /// Starts building, on a thread of its own, the FTS5 index of the reports of `staging`,
    /// as `db` defines it, into a scratch database beside `target`; nil when the phones
    /// were not staged (an import into a database that held reports: the indexes are then
    /// built from the table).
    init?(_ staging: ImportStaging, like db: Database, beside target: String) throws {
        guard let searches = staging.searches, let phones = staging.phones else { return nil }
        let definition = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'report_search'") ?? ""
        let settings = try Row.fetchAll(db, sql: "SELECT k, v FROM report_search_config WHERE k <> 'version'")
            .map { (key: $0[0] as String, value: $0[1] as DatabaseValue) }
        let inRecencyOrder = try searches.merged()
        self.phones = try phones.merged()
        search = staging.buildAside("search-index", beside: target, thread: "posterwatch.phone-index") { db in
            try db.execute(sql: definition)
            for setting in settings {
                try db.execute(sql: "INSERT INTO report_search(report_search, rank) VALUES (?, ?)", arguments: [setting.key, setting.value])
            }
            // No merging while the index fills: the optimize at the end merges every
            // segment once, where incremental merges would rewrite the postings level by
            // level first. (Settings of the scratch database only: they are not copied.)
            try db.execute(sql: "INSERT INTO report_search(report_search, rank) VALUES ('automerge', 0)")
            try db.execute(sql: "INSERT INTO report_search(report_search, rank) VALUES ('crisismerge', 1000)")
            let insert = try db.makeStatement(sql: "INSERT INTO report_search(rowid, phones, id_digits) VALUES (?, ?, ?)")
            let s = insert.sqliteStatement
            while let (recency, payload) = try inRecencyOrder.next() {
                var report = RecordReader(payload)
                sqlite3_bind_int64(s, 1, recency)
                RowInserter.bind(s, 2, report.text())
                sqlite3_bind_int64(s, 3, report.int())
                try db.forEachRow(insert) { _ in true }
            }
            try db.execute(sql: SearchQueue.optimize)
        }
    }

    /// Replaces the indexes of `db` by those built (waiting for the FTS5 index), and
    /// deletes their scratch database. A number given twice on one report is one row (as
    /// the triggers keep it). (Unused, the build is deleted by ``ImportStaging/close()``.)
    func copy(into db: Database) throws {
        // `report_phone` first, while the FTS5 index may still be in the making.
        try db.execute(sql: "DELETE FROM report_phone")
        let insert = try db.makeStatement(sql: "INSERT OR IGNORE INTO report_phone VALUES (?, ?, ?, ?, ?)")
        let s = insert.sqliteStatement
        while let (_, payload) = try phones.next() {
            var row = RecordReader(payload)
            RowInserter.bind(s, 1, row.text())
            sqlite3_bind_int64(s, 2, row.int())
            sqlite3_bind_double(s, 3, row.double())
            sqlite3_bind_double(s, 4, row.double())
            RowInserter.bind(s, 5, row.text())
            try db.forEachRow(insert) { _ in true }
        }
        try ImportStaging.copy(try search.result(), into: db, [
            ("SELECT * FROM report_search_data", "report_search_data", "report_search_data", "INSERT"),
            ("SELECT * FROM report_search_idx", "report_search_idx", "report_search_idx", "INSERT"),
        ])
    }
}
