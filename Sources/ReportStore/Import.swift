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

    public init(skipInvalid: Bool = false, maxReportedIssues: Int = 1_000) {
        self.skipInvalid = skipInvalid
        self.maxReportedIssues = maxReportedIssues
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
    /// Whether the indexes were rebuilt whole (a large import) or extended.
    public var rebuiltIndexes = false

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
    /// Index maintenance is deferred to the end of the transaction: when the import is
    /// at least a quarter of the resulting table, both indexes are rebuilt whole (the
    /// R*Tree packed, see ``PackedRTree``); otherwise the new rows are added to them.
    public func importRecords(
        options: ImportOptions = ImportOptions(), now: Date = Date(),
        next: () throws -> [DraftRecord]?, progress: (Int) -> Void = { _ in }
    ) throws -> ImportSummary {
        var summary = ImportSummary()
        var issueCount = 0
        var ids: [Int64] = []
        let reference = self.reference
        try pool.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                let before = try Int.fetchOne(db, sql: "SELECT count(*) FROM report") ?? 0
                let maxIDBefore = try Int64.fetchOne(db, sql: "SELECT max(id) FROM report") ?? 0
                let exists = try db.makeStatement(sql: "SELECT 1 FROM report WHERE id = ?")
                var seen: [Int64: RecordLocation] = [:]  // ids given or assigned in this import
                try db.execute(sql: "UPDATE store_state SET index_triggers = 0")
                let inserter = try RowInserter(db, initialStatus: reference.initialStatus)
                var done = 0

                func reject(_ location: RecordLocation, _ error: ValidationError) {
                    issueCount += 1
                    if summary.issues.count < options.maxReportedIssues {
                        summary.issues.append(RecordIssue(location: location, error: error))
                    }
                }

                while let batch = try next() {
                    let start = Date()
                    for record in batch {
                        let outcome = record.draft.flatMap { draft in
                            Result { () throws(ValidationError) in try reference.validate(draft) }
                        }
                        switch outcome {
                        case .failure(let error): reject(record.location, error)
                        case .success(let draft):
                            if let id = draft.id {
                                if let first = seen[id] {
                                    reject(record.location, ValidationError(field: "id", "\(id) is given twice in the input, first at \(first)"))
                                    continue
                                }
                                seen[id] = record.location
                                if id <= maxIDBefore, try Bool.fetchOne(exists, arguments: [id]) == true {
                                    reject(record.location, ValidationError(field: "id", "report \(id) already exists"))
                                    continue
                                }
                            }
                            // Once a record is invalid nothing will be kept: just check the rest.
                            guard issueCount == 0 || options.skipInvalid else { continue }
                            switch try inserter.insert(draft, now: now) {
                            case .success(let id):
                                ids.append(id)
                                if draft.id == nil { seen[id] = record.location }
                            case .failure(let error): reject(record.location, error)
                            }
                        }
                    }
                    summary.tableSeconds += Date().timeIntervalSince(start)
                    done += batch.count
                    progress(done)
                }
                guard issueCount == 0 || options.skipInvalid else { return .rollback }

                summary.imported = ids.count
                summary.skipped = issueCount
                summary.rebuiltIndexes = ids.count * 4 >= before + ids.count
                try Self.indexNewRows(db, ids: ids, rebuild: summary.rebuiltIndexes, summary: &summary)
                try db.execute(sql: "UPDATE store_state SET index_triggers = 1")
                return .commit
            }
        }
        if issueCount > 0 && !options.skipInvalid {
            throw RecordsRejected(issues: summary.issues, issueCount: issueCount)
        }
        return summary
    }

    /// Brings the R*Tree and the phone index up to date with rows inserted while the
    /// index triggers were off.
    static func indexNewRows(_ db: Database, ids: [Int64], rebuild: Bool, summary: inout ImportSummary) throws {
        var start = Date()
        if rebuild {
            try PackedRTree.rebuild(db)
        } else {
            let add = try db.makeStatement(sql: """
                INSERT INTO report_rtree SELECT id, longitude, longitude, latitude, latitude FROM report WHERE id = ?
                """)
            for id in ids { try add.execute(arguments: [id]) }
        }
        summary.rtreeSeconds = Date().timeIntervalSince(start)

        start = Date()
        if rebuild {
            try db.execute(sql: """
                INSERT INTO report_search(report_search) VALUES ('delete-all');
                INSERT INTO report_search(rowid, phones, id_digits) SELECT id, phones, id FROM report;
                """)
        } else {
            let add = try db.makeStatement(sql: """
                INSERT INTO report_search(rowid, phones, id_digits) SELECT id, phones, id FROM report WHERE id = ?
                """)
            for id in ids { try add.execute(arguments: [id]) }
        }
        summary.searchIndexSeconds = Date().timeIntervalSince(start)
    }
}
