import Foundation
import GRDB
import GRDBSQLite
import ReportModel

/// The rows of a bulk load on their way to the report table: appended, as they are read,
/// to a table of a scratch database beside the target, then read back in key order
/// through SQLite's sorter, which sorts runs in temporary files and merges them.
///
/// Why: the report table is appended to in key order, and the drafts used to wait in
/// memory until all were read to be sorted: 1.25 KB a report, 14 GB at ten million. The
/// scratch file holds them instead, and the R*Tree and the phone indexes are built from it
/// by helpers on a second core (``buildAside(_:beside:thread:_:)``), so the import's memory
/// is the caches', whatever its size.
///
/// The scratch databases are nobody else's: made under the import's write lock (so two
/// imports into one database never share them), journaled in memory, never synced; they
/// are deleted when the import ends, however it ends (one a killed import left is
/// replaced by the next).
final class ImportStaging {
    static let table = "staged"
    let path: String
    private let queue: DatabaseQueue

    /// A new scratch database next to `target` (in the temporary directory for an
    /// in-memory target), with the staging table.
    init(beside target: String) throws {
        path = Self.scratchPath(beside: target, named: "staging")
        Self.remove(path)
        queue = try DatabaseQueue(path: path, configuration: Self.configuration())
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TABLE \(Self.table) (
                    key INTEGER, id INTEGER, longitude REAL, latitude REAL, address TEXT, city TEXT, district TEXT,
                    object_type TEXT, balance_holder TEXT, violator TEXT, phones TEXT, comment TEXT, status TEXT,
                    created_at INTEGER, updated_at INTEGER, location INTEGER)
                """)
        }
    }

    /// The settings of a scratch connection: its journal in memory (new pages are not
    /// journaled, and a failed step can still roll back), no syncs, sorts in temporary
    /// files, a page cache of 64 MiB (which also bounds each of the sorter's runs).
    static func configuration(readonly: Bool = false) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readonly
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = OFF; PRAGMA temp_store = FILE; PRAGMA cache_size = -65536")
            if !readonly { _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = MEMORY") }
        }
        return configuration
    }

    /// A scratch file's path beside `target`.
    static func scratchPath(beside target: String, named name: String) -> String {
        let base = target.isEmpty || target == ":memory:" || target.hasPrefix("file:")
            ? NSTemporaryDirectory() + "/posterwatch-\(UUID().uuidString)" : target
        return "\(base).import-\(name)"
    }

    /// Runs `body` with the staging database in one transaction (the rows go in during it),
    /// rolled back if it throws.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try queue.inDatabase { db in
            var result: T?
            try db.inTransaction {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    /// Calls `body` with a prepared `SELECT` of the staged rows in key order: the report
    /// columns (``RowInserter/columns``), then the record's location (see ``location(_:)``).
    func inKeyOrder<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        try queue.inDatabase { db in
            let select = try db.makeStatement(sql: "SELECT \(RowInserter.columns), location FROM \(Self.table) ORDER BY key")
            return try body(select.sqliteStatement)
        }
    }

    /// A scratch database a helper built from the staged rows, to be copied into the target.
    struct Aside: Sendable {
        let path: String
    }

    /// A helper building a scratch database on a thread of its own; ``ImportStaging/close()``
    /// waits for one whose result was never taken and deletes what it built.
    final class Helper {
        private let background: Background<Result<Aside, any Error>>
        private(set) var taken = false

        fileprivate init(_ background: Background<Result<Aside, any Error>>) { self.background = background }

        /// What the helper built, waiting for it; once.
        func result() throws -> Aside {
            taken = true
            return try background.wait().get()
        }
    }

    private var helpers: [Helper] = []

    /// Runs `build` on a thread of its own (`thread`), in one transaction, over a new scratch
    /// database beside `target` (named `name`), with the staging database attached as
    /// `staging` (complete by then: nothing writes it any more). The scratch database is
    /// deleted if `build` fails.
    func buildAside(_ name: String, beside target: String, thread: String, _ build: @escaping @Sendable (Database) throws -> Void) -> Helper {
        let path = Self.scratchPath(beside: target, named: name), staging = self.path
        let helper = Helper(Background(name: thread) {
            Result {
                Self.remove(path)
                do {
                    let queue = try DatabaseQueue(path: path, configuration: Self.configuration())
                    try queue.writeWithoutTransaction { db in
                        try db.execute(sql: "ATTACH DATABASE ? AS staging", arguments: [staging])
                        // Raw BEGIN and COMMIT: GRDB's own transaction over the attached
                        // database failed its COMMIT as locked; a failure still rolls back.
                        try db.execute(sql: "BEGIN")
                        do {
                            try build(db)
                            try db.execute(sql: "COMMIT")
                        } catch {
                            try? db.execute(sql: "ROLLBACK")
                            throw error
                        }
                        try db.execute(sql: "DETACH DATABASE staging")
                    }
                    try queue.close()
                    return Aside(path: path)
                } catch {
                    Self.remove(path)
                    throw error
                }
            }
        })
        helpers.append(helper)
        return helper
    }

    /// Empties each target table of `db` and copies into it the rows of its `SELECT` in the
    /// scratch database (`insert` is `INSERT` or `INSERT OR IGNORE`, `into` the table and
    /// its columns as the statement names them); then deletes the scratch database.
    static func copy(_ aside: Aside, into db: Database, _ steps: [(select: String, table: String, into: String, insert: String)]) throws {
        defer { remove(aside.path) }
        let source = try DatabaseQueue(path: aside.path, configuration: configuration(readonly: true))
        defer { try? source.close() }
        try source.inDatabase { source in
            for step in steps {
                try db.execute(sql: "DELETE FROM \(step.table)")
                let select = try source.makeStatement(sql: step.select)
                let marks = Array(repeating: "?", count: select.columnCount).joined(separator: ", ")
                try db.copyRows(from: select, into: db.makeStatement(sql: "\(step.insert) INTO \(step.into) VALUES (\(marks))"))
            }
        }
    }

    /// A record's location as an integer, and back: lines positive, features negative.
    static func number(_ location: RecordLocation) -> Int64 {
        switch location {
        case .line(let n): Int64(n)
        case .feature(let n): -Int64(n)
        }
    }

    static func location(_ number: Int64) -> RecordLocation {
        number >= 0 ? .line(Int(number)) : .feature(Int(-number))
    }

    /// Closes the connection and deletes the file, and what any helper built that was
    /// not taken (an import that failed midway), once it is done.
    func close() {
        for helper in helpers where !helper.taken {
            if let built = try? helper.result() { Self.remove(built.path) }
        }
        helpers = []
        try? queue.close()
        Self.remove(path)
    }

    deinit { close() }

    static func remove(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}
