import Foundation
import GRDB
import ReportModel

/// The reports of a bulk load on their way to the report table and its indexes. As each
/// admitted report is read it goes, in the form each consumer takes, into sorted runs of
/// our own (``SortedRuns``): its row by storage key (the table is appended to in that
/// order), its point by longitude (the R*Tree is packed from that order), and, for a new
/// database, its phones by recency (FTS5 likes its rowids ascending) and by number and
/// id (`report_phone`'s own order).
///
/// Why: the drafts used to wait in memory until all were read, 1.25 KB a report, 14 GB at
/// ten million; then in a staging table of a scratch database, read back through SQLite's
/// sorter once for each of those orders. The runs cost each report one encoding, and
/// each order a sort of plain keys; the import's memory is the runs' budgets and the
/// caches', whatever its size.
///
/// The runs' scratch files are unlinked as soon as they are made; the scratch databases
/// the helpers build (``buildAside(_:beside:thread:_:)``) are nobody else's: made under the
/// import's write lock, journaled in memory, never synced, deleted when the import ends
/// however it ends (one a killed import left is replaced by the next).
final class ImportStaging {
    let rows: SortedRuns<Int64>
    let points: SortedRuns<Double>
    /// With the phone indexes built aside: the reports' phones and ids by recency, and
    /// their rows of `report_phone`.
    let searches: SortedRuns<Int64>?
    let phones: SortedRuns<PhoneRowKey>?
    private var record = RecordBytes()

    /// Runs of `memory` bytes in all (the rows four sevenths, the others one each: with
    /// the default and SQLite's caches, 128 MiB for the target and 16 MiB for a scratch
    /// database, the import stays well under 1 GiB), whose scratch files go beside `target`
    /// (in the temporary directory for an in-memory target).
    init(beside target: String, phoneIndexes: Bool, memory: Int) {
        self.target = target
        let seventh = memory / 7
        rows = Self.runs("rows", beside: target, budget: 4 * seventh)
        points = Self.runs("points", beside: target, budget: seventh)
        searches = phoneIndexes ? Self.runs("search", beside: target, budget: seventh) : nil
        phones = phoneIndexes ? Self.runs("phones", beside: target, budget: seventh) : nil
    }

    private let target: String

    /// More runs, for what a helper sorts (their scratch file named `name`).
    func runs<Key: Comparable & BitwiseCopyable & Sendable>(_ name: String, budget: Int) -> SortedRuns<Key> { Self.runs(name, beside: target, budget: budget) }

    private static func runs<Key: Comparable & BitwiseCopyable & Sendable>(_ name: String, beside target: String, budget: Int) -> SortedRuns<Key> {
        let path = scratchPath(beside: target, named: name)
        remove(path)
        return SortedRuns(budget: budget, scratch: path)
    }

    var count: Int { rows.count }

    /// Adds a report: its draft, storage key, status and times (defaults applied), and
    /// where its record is in the input. Each payload is in the order its consumer binds it.
    func stage(_ d: ReportDraft, key: Int64, status: String, created: Int64, updated: Int64, location: Int64) throws {
        let id = d.id!, longitude = d.coordinate.longitude, latitude = d.coordinate.latitude
        // The row: RowInserter's parameters after the key, then the location.
        record.reset()
        record.int(id)
        record.double(longitude)
        record.double(latitude)
        record.text(d.address)
        record.text(d.city)
        record.text(d.district)
        record.text(d.objectType)
        record.text(d.balanceHolder)
        record.text(d.violator)
        record.text(joining: d.phones, separator: ReportRow.phoneSeparator.asciiValue!)
        record.text(d.comment)
        record.text(status)
        record.int(created)
        record.int(updated)
        record.int(location)
        try rows.append(key, record)

        record.reset()
        record.int(key)
        record.double(latitude)
        try points.append(longitude, record)

        guard let searches, let phones else { return }
        record.reset()
        record.text(joining: d.phones, separator: ReportRow.phoneSeparator.asciiValue!)
        record.int(id)
        try searches.append(PhoneIndexBuild.recency(createdAt: created, id: id), record)
        for phone in d.phones {
            record.reset()
            record.text(phone)
            record.int(id)
            record.double(longitude)
            record.double(latitude)
            record.text(status)
            try phones.append(PhoneRowKey(phone, id: id), record)
        }
    }

    /// A scratch file's path beside `target`.
    static func scratchPath(beside target: String, named name: String) -> String {
        let base = target.isEmpty || target == ":memory:" || target.hasPrefix("file:")
            ? NSTemporaryDirectory() + "/posterwatch-\(UUID().uuidString)" : target
        return "\(base).import-\(name)"
    }

    /// The settings of a scratch connection: its journal in memory (new pages are not
    /// journaled, and a failed step can still roll back), no syncs, sorts in temporary
    /// files, a page cache of 16 MiB (its pages are written once, in order, and read once).
    static func configuration(readonly: Bool = false) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readonly
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = OFF; PRAGMA temp_store = FILE; PRAGMA cache_size = -16384")
            if !readonly { _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = MEMORY") }
        }
        return configuration
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
    /// database beside `target` (named `name`). The scratch database is deleted if `build` fails.
    func buildAside(_ name: String, beside target: String, thread: String, _ build: @escaping @Sendable (Database) throws -> Void) -> Helper {
        let path = Self.scratchPath(beside: target, named: name)
        let helper = Helper(Background(name: thread) {
            Result {
                Self.remove(path)
                do {
                    let queue = try DatabaseQueue(path: path, configuration: Self.configuration())
                    try queue.inTransaction { db in
                        try build(db)
                        return .commit
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

    /// Deletes what any helper built that was not taken (an import that failed midway),
    /// once it is done.
    func close() {
        for helper in helpers where !helper.taken {
            if let built = try? helper.result() { Self.remove(built.path) }
        }
        helpers = []
    }

    deinit { close() }

    static func remove(_ path: String) {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A row of `report_phone` in its order: the number, then the report's id. The number's
/// first 16 bytes, big-endian, compare as its text does (a normalized number is at most 15
/// digits; were one longer, only the order of its rows would suffer, not what they hold).
struct PhoneRowKey: Comparable, BitwiseCopyable {
    var high: UInt64, low: UInt64, id: Int64

    init(_ phone: String, id: Int64) {
        var high: UInt64 = 0, low: UInt64 = 0, i = 0
        for byte in phone.utf8.prefix(16) {
            if i < 8 { high |= UInt64(byte) << (56 - 8 * i) } else { low |= UInt64(byte) << (56 - 8 * (i - 8)) }
            i += 1
        }
        self.high = high
        self.low = low
        self.id = id
    }

    static func < (a: Self, b: Self) -> Bool { (a.high, a.low, a.id) < (b.high, b.low, b.id) }
}
