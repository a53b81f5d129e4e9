import Foundation
import GRDB
import GRDBSQLite
import Geometry
import ReportModel
import StorePorts
import Synchronization

/// The embedded SQLite store of poster reports.
///
/// Central decisions:
/// - **Exact coordinates in the table, an R*Tree as a filter.** SQLite's R*Tree keeps
///   32-bit floats rounded outward, so it can only over-answer. Reports whose float boxes
///   lie inside a query box are certain; those straddling its edge are checked against
///   the exact doubles. A box query returns exactly the reports inside the box, edges
///   included; boxes that cross the antimeridian are answered as two boxes.
/// - **Rows laid out by place.** The table's key is the Morton code of the report's
///   zoom-16 Web Mercator cell, then its id, so a box reads a few ranges of the table
///   rather than one lookup per report (`BoxQueries.swift`).
/// - **Phone search through an FTS5 `trigram` index** over the normalized phones and the
///   id's digits, keyed by recency so the newest matches come first; 1–2 digit queries
///   walk a newest-first index. The order, "exact id, then newest", is exact whichever
///   plan answers (`PhoneSearch.swift`).
/// - **Indexes follow the table through triggers**, so every insert, update and delete
///   keeps the R*Tree, the phone indexes and the report count consistent (the full-text
///   index through a queue drained at the end of each transaction: `SearchQueue.swift`;
///   writes by hand must also keep each row's `key`, which the store computes). A bulk import drops the triggers and
///   secondary indexes inside its own transaction and rebuilds everything at the end:
///   the R*Tree is packed (Sort-Tile-Recursive) straight into its node table
///   (`PackedRTree.swift`), instead of the ~9 s per million that row-by-row R*Tree
///   inserts cost.
/// - **Writes are transactions**: a batch that fails leaves nothing behind.
///
/// ```swift
/// let store = try SQLiteReports(path: "var/posterwatch.sqlite")
/// let inView = try store.reports(in: BoundingBox(parsing: "30.50,50.44,30.54,50.46"))
/// let hits = try store.search("067 12", limit: 50)
/// ```
public final class SQLiteReports: ReportStorage {
    /// The connection pool: one writer, several concurrent readers (WAL).
    public let pool: DatabasePool
    /// The vocabularies reports are checked against, as stored in this database.
    public let reference: ReferenceData
    /// Where the query plans switch; see ``QueryTuning``.
    public let tuning: QueryTuning
    /// Started by the first ``commit(_:)``: from then on the writer leaves checkpoints to it.
    let checkpointer = Mutex<Checkpointer?>(nil)

    /// Opens (creating when absent) the database at `path`, migrating it to the current
    /// schema. A new database is seeded with `reference`, by default the reference data
    /// compiled from `data/reference`.
    public init(path: String, reference: ReferenceData? = nil, tuning: QueryTuning = QueryTuning()) throws {
        self.tuning = tuning
        SQLiteSettings.applied
        var config = Configuration()
        config.label = "posterwatch"
        config.busyMode = .timeout(tuning.busySeconds)
        config.prepareDatabase { db in
            try db.execute(sql: """
                PRAGMA synchronous = FULL;
                PRAGMA cache_size = \(SQLiteReports.cacheSize);
                PRAGMA temp_store = MEMORY;
                PRAGMA mmap_size = \(SQLiteReports.mmapSize);
                PRAGMA journal_size_limit = \(Checkpointer.restartPages * 4096);
                """)
        }
        let seed = try reference ?? ReferenceData.bundled()
        let migrations = Schema.migrator(seed: seed)
        do {
            try migrations.refuseNewer(path: path)
        } catch let error as SchemaFromNewerRelease {
            throw StoreUnavailable(path: path, reason: error.description)
        }
        do {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            pool = try DatabasePool(path: path, configuration: config)
        } catch let error as DatabaseError {
            throw StoreUnavailable(path: path, reason: error.message ?? "\(error.resultCode)")
        } catch is CocoaError {
            throw StoreUnavailable(path: path, reason: "cannot create its folder \(URL(fileURLWithPath: path).deletingLastPathComponent().path)")
        }
        do {
            try migrations.migrate(pool)
        } catch let error as SchemaFromNewerRelease {
            throw StoreUnavailable(path: path, reason: error.description)
        }
        self.reference = try pool.read(Schema.loadReference)
    }

    deinit {
        checkpointer.withLock { $0?.stop() }
    }

    /// SQLite's page cache per connection: 64 MiB (negative: in KiB).
    static let cacheSize = -65536
    /// How much of the file each connection maps (bytes).
    static let mmapSize = 1_073_741_824

    /// The memory SQLite has allocated in this process, page caches included (each
    /// connection's bounded by ``cacheSize``); nil unless SQLite counts it
    /// (`POSTERWATCH_SQLITE_MEMORY_STATS=1`, see ``SQLiteSettings``).
    public static var sqliteHeapBytes: Int? {
        _ = SQLiteSettings.applied
        return SQLiteSettings.memoryStatistics ? Int(sqlite3_memory_used()) : nil
    }

    public var gauges: [String: Int] { Self.sqliteHeapBytes.map { ["sqlite_heap_bytes": $0] } ?? [:] }

    /// How many reports the store holds (kept by the triggers: no scan).
    public func count() throws -> Int {
        try pool.read(Self.reportCount)
    }

    static func reportCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT report_count FROM report_sequence") ?? 0
    }

    /// One report by its public number, or nil.
    public func report(id: Int64) throws -> Report? {
        try pool.read { db in
            try ReportRow.fetch(db, id: id)
        }
    }
}

/// A database that cannot be opened or created, and why.
public struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot open the database \(path): \(reason)" }
}

/// The thresholds at which the store's adaptive plans switch. Results never depend on
/// them, only speed; tests lower them to exercise every plan on small data.
public struct QueryTuning: Sendable {
    /// Box paging: how many rows the id walk reads before it estimates the box's share
    /// of all reports.
    public var boxSample = 400
    /// Box paging: what one R*Tree candidate costs against one row of the id walk
    /// (measured: ~0.15 µs against ~0.27 µs).
    public var rtreeToWalkCost = 0.55
    /// How long a write waits for another process's write (an import into the served
    /// file) before it fails.
    public var busySeconds = 10.0

    public init(boxSample: Int = 400, rtreeToWalkCost: Double = 0.55, busySeconds: Double = 10) {
        self.boxSample = boxSample
        self.rtreeToWalkCost = rtreeToWalkCost
        self.busySeconds = busySeconds
    }
}

extension Stores {
    /// The stores of the SQLite database at `path` (created and migrated when needed).
    public static func sqlite(path: String) throws -> Stores {
        let reports = try SQLiteReports(path: path)
        return Stores(reports: reports, accounts: SQLiteAccounts(reports), webhooks: SQLiteWebhooks(reports))
    }

    /// Creates the SQLite database at `path` holding the records `next` hands out, built
    /// aside and moved into place once complete (``SQLiteReports/create(path:reference:options:now:next:progress:)``).
    public static func createSQLite(
        path: String, options: ImportOptions, next: () throws -> [DraftRecord]?, progress: (Int) -> Void = { _ in }
    ) throws -> ImportSummary {
        try SQLiteReports.create(path: path, options: options, next: next, progress: progress)
    }
}
