import Foundation
import GRDB
import Geometry
import ReportModel

/// How an import treats invalid records.
public struct ImportOptions: Sendable {
    /// Import the valid records and report the others, instead of importing nothing.
    public var skipInvalid = false
    /// How many issues are kept in detail; the rest are only counted.
    public var maxReportedIssues = 1_000
    /// An import into a table with fewer reports than this is a bulk load, which rebuilds
    /// the indexes whole; into a larger table, rows are indexed one by one.
    public var bulkBelow = 100_000
    /// Whether ``ImportSummary/ids`` lists the ids stored (for ``ReportStore/insert(_:now:)``,
    /// which returns the reports; a large import has no use for a million ids in memory).
    var keepsIDs = false

    public init(skipInvalid: Bool = false, maxReportedIssues: Int = 1_000, bulkBelow: Int = 100_000) {
        self.skipInvalid = skipInvalid
        self.maxReportedIssues = maxReportedIssues
        self.bulkBelow = bulkBelow
    }
}

/// What an import did, and where its time went.
public struct ImportSummary: Sendable {
    public var imported = 0
    /// Invalid records left out (only with ``ImportOptions/skipInvalid``).
    public var skipped = 0
    /// The first ``ImportOptions/maxReportedIssues`` invalid records.
    public var issues: [RecordIssue] = []
    /// Seconds spent inserting rows into the report table (reading the input excluded).
    public var tableSeconds = 0.0
    /// Seconds spent building the R*Tree.
    public var rtreeSeconds = 0.0
    /// Seconds spent building the phone index.
    public var searchIndexSeconds = 0.0
    /// Seconds spent building the secondary indexes (unique ids, newest first).
    public var secondaryIndexSeconds = 0.0
    /// Seconds spent committing: writing the transaction to the WAL and checkpointing it.
    public var commitSeconds = 0.0
    /// Whether this was a bulk load, which rebuilt the indexes whole.
    public var rebuiltIndexes = false
    /// The ids stored, in input order unless it was a bulk load (then in key order); only
    /// with ``ImportOptions/keepsIDs``.
    var ids: [Int64] = []

    public init() {}
}

extension ReportStore {
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
    /// the rows go in bare and in key order (appended to the table's B-tree), and then
    /// the R*Tree is packed (``PackedRTree``), the secondary indexes and the phone index
    /// are built whole and the triggers put back, exactly as they were (their SQL is read
    /// from the schema). Foreign keys and CHECK constraints are not evaluated during a bulk
    /// load, as every record has been validated (against the reference data too).
    /// Into a larger table, rows go in one by one through the triggers.
    public func importRecords(
        options: ImportOptions = ImportOptions(), now: Date = Date(),
        next: () throws -> [DraftRecord]?, progress: (Int) -> Void = { _ in }
    ) throws -> ImportSummary {
        var summary = ImportSummary()
        var issueCount = 0
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
            }
            defer {
                if bulk {
                    try? db.execute(sql: """
                        PRAGMA foreign_keys = ON; PRAGMA ignore_check_constraints = OFF; PRAGMA cache_size = \(ReportStore.cacheSize); PRAGMA threads = 0
                        """)
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
                var seen: [Int64: RecordLocation] = [:]  // ids given or assigned in this import
                // A bulk load inserts in key order at the end: appending to the table's
                // B-tree, instead of inserting all over it.
                // Drafts stay in their batches (no copying as one big array grows); the
                // order is sorted as (key, batch, index) triples.
                var pending: [[(draft: ReportDraft, location: RecordLocation)]] = []
                var order: [(key: Int64, batch: Int32, index: Int32)] = []
                var done = 0

                func reject(_ location: RecordLocation, _ error: ValidationError) {
                    issueCount += 1
                    if summary.issues.count < options.maxReportedIssues {
                        summary.issues.append(RecordIssue(location: location, error: error))
                    }
                }

                func insert(_ draft: ReportDraft, key: Int64, at location: RecordLocation) throws {
                    switch try inserter.insert(draft, key: key, now: now) {
                    case .success(let id):
                        summary.imported += 1
                        if options.keepsIDs { summary.ids.append(id) }
                    case .failure(let error): reject(location, error)
                    }
                }

                while let batch = try next() {
                    let start = Date()
                    if bulk {
                        pending.append([])
                        pending[pending.count - 1].reserveCapacity(batch.count)
                    }
                    for record in batch {
                        let outcome = record.draft.flatMap { draft in
                            Result { () throws(ValidationError) in try reference.validate(draft) }
                        }
                        guard case .success(var draft) = outcome else {
                            if case .failure(let error) = outcome { reject(record.location, error) }
                            continue
                        }
                        if let id = draft.id {
                            if let first = seen[id] {
                                reject(record.location, ValidationError(field: "id", "\(id) is already used in this input, at \(first)"))
                                continue
                            }
                            seen[id] = record.location
                            if try taken(id) {
                                reject(record.location, ValidationError(field: "id", "report \(id) already exists"))
                                continue
                            }
                        }
                        // Once a record is invalid nothing will be kept: just check the rest.
                        guard issueCount == 0 || options.skipInvalid else { continue }
                        let key: Int64
                        do {
                            let given = draft.id != nil
                            key = try inserter.assignID(&draft)
                            if !given { seen[draft.id!] = record.location }
                        } catch let error as ValidationError {
                            reject(record.location, error)
                            continue
                        }
                        if bulk {
                            order.append((key, Int32(pending.count - 1), Int32(pending[pending.count - 1].count)))
                            pending[pending.count - 1].append((draft, record.location))
                        } else {
                            try insert(draft, key: key, at: record.location)
                        }
                    }
                    summary.tableSeconds += Date().timeIntervalSince(start)
                    done += batch.count
                    progress(done)
                }
                let start = Date()
                if issueCount == 0 || options.skipInvalid {
                    order.sort { $0.key < $1.key }
                    for o in order {
                        let row = pending[Int(o.batch)][Int(o.index)]
                        try insert(row.draft, key: o.key, at: row.location)
                    }
                }
                pending = []
                guard issueCount == 0 || options.skipInvalid else { return .rollback }
                try inserter.finish()
                summary.tableSeconds += Date().timeIntervalSince(start)
                summary.skipped = issueCount
                if let deferred {
                    summary.rebuiltIndexes = true
                    try deferred.rebuild(db, summary: &summary)
                }
                commitStart = Date()
                return .commit
            }
            if let commitStart { summary.commitSeconds = Date().timeIntervalSince(commitStart) }
        }
        if issueCount > 0 && !options.skipInvalid {
            throw RecordsRejected(issues: summary.issues, issueCount: issueCount)
        }
        return summary
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

    /// Builds the R*Tree, the secondary indexes and the phone index over the whole table,
    /// and puts the triggers back.
    func rebuild(_ db: Database, summary: inout ImportSummary) throws {
        var start = Date()
        try PackedRTree.rebuild(db)
        summary.rtreeSeconds = Date().timeIntervalSince(start)

        start = Date()
        for sql in indexes { try db.execute(sql: sql) }
        try db.execute(sql: "UPDATE report_sequence SET report_count = (SELECT count(*) FROM report)")
        summary.secondaryIndexSeconds = Date().timeIntervalSince(start)

        // Read through report_recent, the rowids arrive (nearly) ascending, as FTS5 likes.
        start = Date()
        try db.execute(sql: """
            INSERT INTO report_search(report_search) VALUES ('delete-all');
            INSERT INTO report_search(rowid, phones, id_digits)
                SELECT ((created_at / 1000) << 31) | id, phones, id FROM report ORDER BY created_at, id;
            """)
        for sql in triggers { try db.execute(sql: sql) }
        summary.searchIndexSeconds = Date().timeIntervalSince(start)
    }
}
