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
    /// load: inside its transaction the index triggers and secondary indexes are dropped;
    /// the reports are staged in sorted runs as they are read (``ImportStaging``) and the
    /// rows then go in bare and in key order (appended to the table's B-tree), while a
    /// second core packs the R*Tree from the staged points (``PackedRTree``) and, into a
    /// new database, builds the FTS5 index from the staged phones (``PhoneIndexBuild``);
    /// then the R*Tree is copied in, the secondary indexes built whole, the phone indexes
    /// copied in (or built whole) and the triggers put back, exactly as they were (their
    /// SQL is read from the schema). Its memory does not grow with the input. Foreign keys and CHECK constraints are not evaluated during a bulk
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
            // Only outside a transaction can foreign keys be switched. CHECK constraints are
            // not evaluated either: every record has been validated (coordinates, lengths,
            // phones, times) and its key computed by the store. The index builds sort on a
            // helper thread of SQLite's, in temporary files, in runs of the page cache's size.
            if bulk {
                try db.execute(sql: """
                    PRAGMA foreign_keys = OFF; PRAGMA ignore_check_constraints = ON; PRAGMA cache_size = \(Self.bulkCacheSize);
                    PRAGMA threads = 2; PRAGMA temp_store = FILE; PRAGMA mmap_size = 0
                    """)
                // Leaving WAL mode needs the only connection; should it fail, the load is
                // merely slower.
                if intoNewFile { _ = try? String.fetchOne(db, sql: "PRAGMA journal_mode = MEMORY") }
            }
            defer {
                if bulk {
                    try? db.execute(sql: """
                        PRAGMA foreign_keys = ON; PRAGMA ignore_check_constraints = OFF; PRAGMA cache_size = \(SQLiteReports.cacheSize);
                        PRAGMA threads = 0; PRAGMA temp_store = MEMORY; PRAGMA mmap_size = \(SQLiteReports.mmapSize)
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
                admission = ImportAdmission(options: options, reference: reference, lastID: try RowInserter.lastID(in: db))
                // The R*Tree's entries of the reports already stored (fewer than bulkBelow).
                let storedEntries = bulk ? try PackedRTree.entries(db) : []
                // Into a new database, the phone index is built aside too (`PhoneIndexBuild`).
                let phoneIndexAside = bulk && intoNewFile && existing.isEmpty
                // Made under the write lock: another import into this database waits for it.
                let staging = bulk ? ImportStaging(beside: pool.path, phoneIndexes: phoneIndexAside, memory: options.sortMemory) : nil
                defer { staging?.close() }

                // Each admitted draft goes into the report table, or in a bulk load to the
                // staging runs first (see `ImportStaging`), from which it goes in in key order.
                func read(_ take: (ReportDraft, _ key: Int64, RecordLocation) throws -> Void) throws {
                    var done = 0
                    while let batch = try next() {
                        let start = Date()
                        for record in batch {
                            guard let draft = try admission.admit(record, taken: taken) else { continue }
                            try take(draft, ReportRow.key(draft.coordinate, id: draft.id!), record.location)
                        }
                        summary.tableSeconds += Date().timeIntervalSince(start)
                        done += batch.count
                        progress(done)
                    }
                }
                guard let staging, let deferred else {
                    try read { draft, key, location in
                        switch try inserter.insert(draft, key: key, now: now) {
                        case .success(let id):
                            summary.imported += 1
                            if options.keepsIDs { summary.ids.append(id) }
                        case .failure(let error): admission.refuse(location, error)
                        }
                    }
                    guard admission.keeps else { return .rollback }
                    try inserter.finish(lastID: admission.lastID)
                    summary.skipped = admission.issueCount
                    return try finish(db, summary: summary)
                }
                try read { draft, key, location in
                    let (status, created, updated) = inserter.values(draft, now: now)
                    try staging.stage(draft, key: key, status: status, created: created, updated: updated, location: ImportStaging.number(location))
                }
                guard admission.keeps else { return .rollback }
                let start = Date()
                // The R*Tree is packed, and the phone indexes built, on a second core while
                // the rows go in.
                let nodeSize = try PackedRTree.nodeSize(db)
                let packing = try PackedRTree.start(staging, existing: storedEntries, nodeSize: nodeSize, beside: pool.path)
                let phoneIndex = try PhoneIndexBuild(staging, like: db, beside: pool.path)
                summary.imported = try inserter.insertAll(
                    from: try staging.rows.merged(), inserted: { if options.keepsIDs { summary.ids.append($0) } }, refuse: { admission.refuse($0, $1) })
                guard admission.keeps else { return .rollback }
                let insertedAll = summary.imported == staging.count  // else a row was refused after all
                try inserter.finish(lastID: admission.lastID)
                summary.tableSeconds += Date().timeIntervalSince(start)
                summary.skipped = admission.issueCount
                summary.rebuiltIndexes = true
                let rtreeStart = Date()
                if insertedAll {
                    try packing.copy(into: db)
                } else {
                    try PackedRTree.rebuild(db, nodeSize: nodeSize)  // what was packed is deleted by `staging.close()`
                }
                summary.rtreeSeconds = Date().timeIntervalSince(rtreeStart)
                // A refused row's numbers are in the phone indexes built aside: they are rebuilt from the table then.
                try deferred.rebuild(db, phoneIndex: phoneIndex, usable: insertedAll, summary: &summary)
                return try finish(db, summary: summary)
            }
            if let commitStart { summary.commitSeconds = Date().timeIntervalSince(commitStart) }

            /// The import's last writes before its commit.
            func finish(_ db: Database, summary: ImportSummary) throws -> Database.TransactionCompletion {
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
        }
        try admission.check()
        summary.issues = admission.issues
        return summary
    }

    /// A bulk load's page cache (KiB, as `cache_size` takes it): the rows are appended in
    /// key order and the indexes built from sorted runs, so a modest cache serves; it also
    /// sizes each run the sorter keeps in memory. (The file is not mapped meanwhile: its
    /// pages, read back to build the indexes, would count as the process's memory.)
    static let bulkCacheSize = -131_072
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
    /// The phone indexes built aside, when `usable`, are waited for once the secondary
    /// indexes are built (their builder is the longest of the helpers).
    func rebuild(
        _ db: Database, phoneIndex: PhoneIndexBuild?, usable: Bool = true, summary: inout ImportSummary
    ) throws {
        var start = Date()
        for sql in indexes { try db.execute(sql: sql) }
        try db.execute(sql: "UPDATE report_sequence SET report_count = (SELECT count(*) FROM report)")
        summary.secondaryIndexSeconds = Date().timeIntervalSince(start)

        start = Date()
        if let phoneIndex, usable {
            try phoneIndex.copy(into: db)
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
