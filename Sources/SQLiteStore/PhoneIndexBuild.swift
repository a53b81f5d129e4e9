import Foundation
import GRDB
import GRDBSQLite

/// The phone index of a bulk load into a new database, built on a second core while SQLite
/// takes the rows on the first.
///
/// FTS5 keeps an index wholly in two tables of its own, `report_search_data` (the segments'
/// pages, the structure record) and `report_search_idx` (where each segment's terms start).
/// The index is built in a private in-memory database, under the same definition and
/// settings, from the reports in the same order as ``DeferredIndexes`` reads the stored
/// table, and those two tables are then copied into the new database: a copy of 150 MB
/// instead of seconds of tokenizing on the critical path.
///
/// Only for a database that no other connection has opened
/// (``SQLiteReports/create(path:reference:options:now:next:progress:)``), whose connection
/// is closed after the import: an FTS5 table keeps its structure record cached per
/// connection, so a connection that later wrote through `report_search` itself would not
/// see that its pages were replaced underneath it.
enum PhoneIndexBuild {
    /// What the indexes hold of one report.
    struct Entry: Sendable {
        var createdAt: Int64  // milliseconds, as stored
        var id: Int64
        var phones: [String]
        var longitude: Double
        var latitude: Double
        var status: String
    }

    /// The built indexes: the FTS5 one in a database of its own, and the rows of
    /// `report_phone` in its key order.
    struct Built: Sendable {
        var search: DatabaseQueue
        var holders: [(phone: String, entry: Int)]
        var entries: [Entry]
    }

    /// A report's rowid in `report_search`, its recency: `(created_at in seconds) << 31 | id`,
    /// as an SQL expression over the two given (the triggers spell it out too).
    static func recency(createdAt: String, id: String) -> String { "((\(createdAt) / 1000) << 31) | \(id)" }

    /// Fills `report_search` from the stored reports, read through `report_recent` in
    /// recency order: FTS5 then meets its rowids (nearly) ascending, as it likes.
    static let fillFromTable = """
        INSERT INTO report_search(rowid, phones, id_digits)
            SELECT \(recency(createdAt: "created_at", id: "id")), phones, id FROM report ORDER BY created_at, id
        """

    /// Starts building, on a thread of its own, the index over `entries` as `db` defines it.
    static func start(_ entries: [Entry], like db: Database) throws -> Background<Result<Built, any Error>> {
        let definition = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'report_search'") ?? ""
        let settings = try Row.fetchAll(db, sql: "SELECT k, v FROM report_search_config WHERE k <> 'version'")
            .map { (key: $0[0] as String, value: $0[1] as DatabaseValue) }
        return Background(name: "posterwatch.phone-index") {
            Result {
                let search = try build(entries, definition: definition, settings: settings)
                var holders: [(phone: String, entry: Int)] = []
                holders.reserveCapacity(entries.count * 5 / 4)
                for (i, entry) in entries.enumerated() {
                    for phone in entry.phones { holders.append((phone, i)) }
                }
                holders.sort { ($0.phone, entries[$0.entry].id) < ($1.phone, entries[$1.entry].id) }
                return Built(search: search, holders: holders, entries: entries)
            }
        }
    }

    private static func build(_ entries: [Entry], definition: String, settings: [(key: String, value: DatabaseValue)]) throws -> DatabaseQueue {
        let built = try DatabaseQueue()
        try built.write { db in
            try db.execute(sql: definition)
            for setting in settings {
                try db.execute(sql: "INSERT INTO report_search(report_search, rank) VALUES (?, ?)", arguments: [setting.key, setting.value])
            }
            // In the same order as the stored table is read.
            let insert = try db.makeStatement(sql: """
                INSERT INTO report_search(rowid, phones, id_digits) VALUES (\(recency(createdAt: "?1", id: "?2")), ?3, ?2)
                """)
            let s = insert.sqliteStatement
            for entry in entries.sorted(by: { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }) {
                var phones = RowInserter.phoneText(entry.phones)
                sqlite3_reset(s)
                sqlite3_bind_int64(s, 1, entry.createdAt)
                sqlite3_bind_int64(s, 2, entry.id)
                let code = phones.withUTF8 { text in
                    // SQLITE_STATIC (nil): the text outlives the step; cleared below.
                    sqlite3_bind_text(s, 3, UnsafeRawPointer(text.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(text.count), nil)
                    let code = sqlite3_step(s)
                    sqlite3_clear_bindings(s)
                    return code
                }
                guard code == SQLITE_DONE else { throw db.sqliteError(code, insert.sql) }
            }
            try db.execute(sql: SearchQueue.optimize)
        }
        return built
    }

    /// Replaces the indexes of `db` by those built.
    static func copy(_ built: Built, into db: Database) throws {
        try copySearch(built.search, into: db)
        try db.execute(sql: "DELETE FROM report_phone")
        let insert = try db.makeStatement(sql: "INSERT INTO report_phone VALUES (?, ?, ?, ?, ?)")
        let s = insert.sqliteStatement
        for holder in built.holders {
            let entry = built.entries[holder.entry]
            var phone = holder.phone, status = entry.status
            sqlite3_reset(s)
            sqlite3_bind_int64(s, 2, entry.id)
            sqlite3_bind_double(s, 3, entry.longitude)
            sqlite3_bind_double(s, 4, entry.latitude)
            let code = phone.withUTF8 { p in
                status.withUTF8 { t in
                    // SQLITE_STATIC (nil): the texts outlive the step; cleared below.
                    sqlite3_bind_text(s, 1, UnsafeRawPointer(p.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(p.count), nil)
                    sqlite3_bind_text(s, 5, UnsafeRawPointer(t.baseAddress)?.assumingMemoryBound(to: CChar.self), Int32(t.count), nil)
                    let code = sqlite3_step(s)
                    sqlite3_clear_bindings(s)
                    return code
                }
            }
            // A number given twice on one report is one row (as the triggers keep it).
            guard code == SQLITE_DONE || code == SQLITE_CONSTRAINT else { throw db.sqliteError(code, insert.sql) }
        }
    }

    private static func copySearch(_ built: DatabaseQueue, into db: Database) throws {
        try db.execute(sql: "DELETE FROM report_search_data; DELETE FROM report_search_idx")
        try built.read { source in
            for table in ["report_search_data", "report_search_idx"] {
                let columns = try source.columns(in: table).count
                let insert = try db.makeStatement(sql: "INSERT INTO \(table) VALUES (\(Array(repeating: "?", count: columns).joined(separator: ", ")))")
                let rows = try Row.fetchCursor(source, sql: "SELECT * FROM \(table)")
                while let row = try rows.next() {
                    try insert.execute(arguments: StatementArguments(row.databaseValues))
                }
            }
        }
    }
}
