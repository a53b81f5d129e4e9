import Foundation
import GRDB
import Geometry
import ReportModel
import StorePorts

extension SQLiteReports {
    /// Imports records in one transaction: all of them, or, when any is invalid and
    /// `skipInvalid` is off, none (``RecordsRejected`` then lists the issues; every
    /// record is still read and checked, so one run reports all of them).
    ///
    /// - Parameters:
    ///   - next: the next batch of records read from the input, nil at its end.
    ///   - progress: called after each batch with the number of records done so far.
    ///
    /// Into a table of fewer than ``ImportOptions/bulkBelow`` reports the import is a bulk
    /// load: inside its transaction the index triggers and secondary indexes are dropped,
    /// the rows go in bare and in key order (appended to the table's B-tree), while a
    /// second core packs the R*Tree (``PackedRTree``) from the records in memory; then
    /// the R*Tree is written, the secondary indexes and the phone index are built whole
    /// (into a new database the phone index too is built on the second core meanwhile:
    /// ``PhoneIndexBuild``) and the triggers put back, exactly as they were (their SQL is
    /// read from the schema). Foreign keys and CHECK constraints are not evaluated during a bulk
    /// load, as every record has been validated (against the reference data too).
    /// Into a larger table, rows go in one by one through the triggers.
    public func importRecords(
        options: ImportOptions = ImportOptions(), now: Date = Date(),
        next: () throws -> [DraftRecord]?, progress: (Int) -> Void = { _ in }
    ) throws -> ImportSummary {
        try importRecords(options: options, intoNewFile: false, now: now, next: next, progress: progress)
    }

    /// The same; `intoNewFile`: the database is a new file that no other connection uses
    /// (``create(path:reference:options:now:next:progress:)``), so a bulk load keeps its
    /// rollback journal in memory and writes each page once, straight to the file, instead
    /// of to the write-ahead log and again at the checkpoint.
    func importRecords(
        options: ImportOptions, intoNewFile: Bool, now: Date, next: () throws -> [DraftRecord]?, progress: (Int) -> Void
    ) throws -> ImportSummary {
        var summary = ImportSummary()
        var admission = ImportAdmission(options: options, reference: reference, lastID: 0)
        var commitStart: Date?
        let reference = self.reference
        try pool.writeWithoutTransaction { db in
            let bulk = try Self.reportCount(db) < options.bulkBelow
            // Only outside a transaction can foreign keys be switched. A page cache large
            // enough for the whole load keeps SQLite from spilling it to the WAL midway.
            // CHECK constraints are not evaluated either: every record has been validated
            // (coordinates, lengths, phones, times) and its key computed by the store. The
            // index builds sort on a helper thread of SQLite's (the input is read by then).
            if bulk {
                try db.execute(sql: """
                    PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON; PRAGMA cache_size = -1048576; PRAGMA threads = 2
                    """)
                // Leaving WAL mode needs the only connection; should it fail, the load is
                // merely slower.
                if intoNewFile { _ = try? String.fetchOne(db, sql: "PRAGMA journal_mode = MEMORY") }
            }
            defer {
                if bulk {
                    try? db.execute(sql: """
                        PRAGMA foreign_keys = ON; PRAGMA ignore_check_constraints = OFF; PRAGMA cache_size = \(SQLiteReports.cacheSize); PRAGMA threads = 0
                        """)
                    if intoNewFile { _ = try? String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
                }
            }

            try db.inTransaction(.immediate) {
                let maxIDBefore = try Int64.fetchOne(db, sql: "SELECT max(id) FROM report") ?? 0
                // A bulk load drops the id index: its (fewer than bulkBelow) ids are kept here.
                let existing = bulk ? Set(try Int64.fetchAll(db, sql: "SELECT id FROM report")) : []
                let exists = bulk ? nil : try db.makeStatement(sql: "SELECT 1 FROM report WHERE id = ?")
                func taken(_ id: Int64) throws -> Bool {
                    guard id <= maxIDBefore else { return false }
                    guard let exists else { return existing.contains(id) }
                    return try Bool.fetchOne(exists, arguments: [id]) == true
                }
                let deferred = bulk ? try DeferredIndexes(db) : nil
                var inserter = try RowInserter(db, initialStatus: reference.initialStatus)
                admission = ImportAdmission(options: options, reference: reference, lastID: inserter.lastID)
                // A bulk load inserts in key order at the end: appending to the table's
                // B-tree, instead of inserting all over it.
                // Drafts stay in their batches (no copying as one big array grows); the
                // order is sorted as (key, batch, index) triples.
                var pending: [[(draft: ReportDraft, location: RecordLocation)]] = []
                var order: [(key: Int64, batch: Int32, index: Int32)] = []
                // The R*Tree's entries: the reports already stored, then each new one.
                var rtreeEntries = bulk ? try PackedRTree.entries(db) : []
                // Into a new database, the phone index is built aside too (`PhoneIndexBuild`).
                let phoneIndexAside = bulk && intoNewFile && existing.isEmpty
                var phoneEntries: [PhoneIndexBuild.Entry] = []
                var done = 0

                func insert(_ draft: ReportDraft, key: Int64, at location: RecordLocation) throws {
                    switch try inserter.insert(draft, key: key, now: now) {
                    case .success(let id):
                        summary.imported += 1
                        if options.keepsIDs { summary.ids.append(id) }
                    case .failure(let error): admission.refuse(location, error)
                    }
                }

                while let batch = try next() {
                    let start = Date()
                    var kept: [(draft: ReportDraft, location: RecordLocation)] = []
                    if bulk { kept.reserveCapacity(batch.count) }
                    for record in batch {
                        guard let draft = try admission.admit(record, taken: taken) else { continue }
                        let key = ReportRow.key(draft.coordinate, id: draft.id!)
                        if bulk {
                            order.append((key, Int32(pending.count), Int32(kept.count)))
                            rtreeEntries.append(PackedRTree.Entry(key: key, longitude: draft.coordinate.longitude, latitude: draft.coordinate.latitude))
                            if phoneIndexAside {
                                phoneEntries.append(PhoneIndexBuild.Entry(
                                    createdAt: ReportRow.milliseconds(draft.createdAt ?? now), id: draft.id!, phones: draft.phones,
                                    longitude: draft.coordinate.longitude, latitude: draft.coordinate.latitude, status: draft.status ?? inserter.initialStatus))
                            }
                            kept.append((draft, record.location))
                        } else {
                            try insert(draft, key: key, at: record.location)
                        }
                    }
                    if bulk { pending.append(kept) }
                    summary.tableSeconds += Date().timeIntervalSince(start)
                    done += batch.count
                    progress(done)
                }
                guard admission.keeps else { return .rollback }
                let start = Date()
                // The R*Tree is packed on a second core while the rows go in.
                let nodeSize = try PackedRTree.nodeSize(db)
                let packing = deferred == nil ? nil : Background(name: "posterwatch.rtree") { [rtreeEntries] in
                    PackedRTree.layout(rtreeEntries, nodeSize: nodeSize)
                }
                rtreeEntries = []
                let phoneIndex = phoneIndexAside ? try PhoneIndexBuild.start(phoneEntries, like: db) : nil
                phoneEntries = []
                order.sort { $0.key < $1.key }
                for o in order {
                    // Borrowed in place: a copy would retain and release each of its strings.
                    try pending[Int(o.batch)].withUnsafeBufferPointer { rows in
                        try insert(rows[Int(o.index)].draft, key: o.key, at: rows[Int(o.index)].location)
                    }
                }
                let packedAll = summary.imported == order.count  // else a row was refused after all
                pending = []
                order = []
                try inserter.finish(lastID: admission.lastID)
                summary.tableSeconds += Date().timeIntervalSince(start)
                summary.skipped = admission.issueCount
                if let deferred, let packing {
                    summary.rebuiltIndexes = true
                    let rtreeStart = Date()
                    let layout = packedAll ? packing.wait() : PackedRTree.layout(try PackedRTree.entries(db), nodeSize: nodeSize)
                    try PackedRTree.write(layout, db)
                    summary.rtreeSeconds = Date().timeIntervalSince(rtreeStart)
                    try deferred.rebuild(db, phoneIndex: packedAll ? phoneIndex : nil, summary: &summary)
                }
                if summary.imported > 0 && options.marksDataSetChanged {
                    // One change says the data set changed: a server on this database
                    // rebuilds its index, and feed readers start again from a snapshot.
                    try db.execute(
                        sql: "INSERT INTO report_change (report_id, action, at) VALUES (0, ?, ?)",
                        arguments: [ReportAction.imported.rawValue, ReportRow.milliseconds(Date())])
                }
                try SearchQueue.drain(db)
                commitStart = Date()
                return .commit
            }
            if let commitStart { summary.commitSeconds = Date().timeIntervalSince(commitStart) }
        }
        try admission.check()
        summary.issues = admission.issues
        return summary
    }
}

extension SQLiteReports {
    /// Creates a new database at `path` holding the records read from `next`, as one bulk
    /// load (see ``importRecords(options:now:next:progress:)`` for the rules and the summary).
    ///
    /// The database is built beside its place, in `path.partial`, which no other connection
    /// can know of: its pages are written once, straight to the file, with the rollback
    /// journal in memory, rather than to the write-ahead log and again when it is
    /// checkpointed. Once complete (and synced), the file is renamed to `path`, so a failed
    /// or interrupted import leaves no database behind, never a partial one: when any record
    /// is invalid (and `skipInvalid` is off) ``RecordsRejected`` is thrown and nothing is
    /// created. Throws ``StoreUnavailable`` when `path` exists.
    public static func create(
        path: String, reference: ReferenceData? = nil, options: ImportOptions = ImportOptions(), now: Date = Date(),
        next: () throws -> [DraftRecord]?, progress: (Int) -> Void = { _ in }
    ) throws -> ImportSummary {
        let files = FileManager.default
        guard !files.fileExists(atPath: path) else { throw StoreUnavailable(path: path, reason: "it already exists") }
        let partial = path + ".partial"
        func removePartial() {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? files.removeItem(atPath: partial + suffix) }
        }
        removePartial()  // left by an import that was killed
        do {
            let store = try SQLiteReports(path: partial, reference: reference)
            store.pool.releaseMemory()  // closes the reader that loaded the reference data
            let summary = try store.importRecords(options: options, intoNewFile: true, now: now, next: next, progress: progress)
            try store.pool.close()
            sync(partial)
            do {
                try files.moveItem(atPath: partial, toPath: path)
            } catch {
                throw StoreUnavailable(path: path, reason: "cannot move \(partial) into place: \(error.localizedDescription)")
            }
            sync(URL(fileURLWithPath: path).deletingLastPathComponent().path)  // the rename
            return summary
        } catch {
            removePartial()
            throw error
        }
    }

    /// Flushes a file or a directory to the disc (SQLite has synced the file at its
    /// commit already; this makes sure before the rename).
    private static func sync(_ path: String) {
        let file = open(path, O_RDONLY)
        guard file >= 0 else { return }
        _ = fsync(file)
        close(file)
    }
}

/// What a bulk load takes away from the report table for its duration, and puts back.
struct DeferredIndexes {
    /// The `CREATE` statements of the triggers and secondary indexes on `report`.
    let triggers: [String]
    let indexes: [String]

    /// Drops the triggers and secondary indexes of `report`, remembering their SQL.
    init(_ db: Database) throws {
        triggers = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'report'")
        indexes = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'report' AND sql IS NOT NULL")
        let dropped = try Row.fetchAll(db, sql: """
            SELECT upper(type), name FROM sqlite_master WHERE type IN ('trigger', 'index') AND tbl_name = 'report' AND sql IS NOT NULL
            """)
        for row in dropped {
            try db.execute(sql: "DROP \(row[0] as String) \((row[1] as String).quotedDatabaseIdentifier)")
        }
    }

    /// Builds the secondary indexes and the phone index over the whole table (or takes
    /// the one built on a second core), and puts the triggers back (the R*Tree is the caller's).
    func rebuild(_ db: Database, phoneIndex: Background<Result<PhoneIndexBuild.Built, any Error>>?, summary: inout ImportSummary) throws {
        var start = Date()
        for sql in indexes { try db.execute(sql: sql) }
        try db.execute(sql: "UPDATE report_sequence SET report_count = (SELECT count(*) FROM report)")
        summary.secondaryIndexSeconds = Date().timeIntervalSince(start)

        start = Date()
        if let phoneIndex {
            try PhoneIndexBuild.copy(phoneIndex.wait().get(), into: db)
        } else {
            try db.execute(sql: "INSERT INTO report_search(report_search) VALUES ('delete-all')")
            try db.execute(sql: PhoneIndexBuild.fillFromTable)
            try db.execute(sql: SearchQueue.optimize)
            try db.execute(sql: "DELETE FROM report_phone")
            try db.execute(sql: ReportPhones.fill)
        }
        for sql in triggers { try db.execute(sql: sql) }
        summary.searchIndexSeconds = Date().timeIntervalSince(start)
    }
}
