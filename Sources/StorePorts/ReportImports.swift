import Foundation
import Geometry
import ReportModel

/// How a store takes a file of reports at once: the bulk write path, which the report
/// service's import (`ReportImport`) calls.
///
/// Requirements every store meets:
/// - **All or nothing**: the records go in one transaction; when any is invalid and
///   ``ImportOptions/skipInvalid`` is off, none does (``RecordsRejected`` lists the
///   issues, every record read and checked so that one run reports all of them).
/// - **Seen by every process**: with ``ImportOptions/marksDataSetChanged``, the import
///   writes one change, `imported`, on which every serving process rebuilds its index
///   from the rows and feed readers start again from a snapshot.
public protocol ReportImports: Sendable {
    /// Imports the records `next` hands out batch by batch (nil at the end), calling
    /// `progress` with the number done after each batch. The work may be done in place,
    /// for the whole length of the import: a caller that serves requests calls it off the
    /// cooperative pool.
    func importRecords(
        options: ImportOptions, now: Date, next: () throws -> [DraftRecord]?, progress: (Int) -> Void
    ) async throws -> ImportSummary
}

/// How an import treats invalid records.
public struct ImportOptions: Sendable {
    /// Import the valid records and report the others, instead of importing nothing.
    public var skipInvalid = false
    /// How many issues are kept in detail; the rest are only counted.
    public var maxReportedIssues = 1_000
    /// An import into a table with fewer reports than this is a bulk load, which rebuilds
    /// the indexes whole; into a larger table, rows are indexed one by one.
    public var bulkBelow = 100_000
    /// Whether ``ImportSummary/ids`` lists the ids stored (a large import has no use for a
    /// million ids in memory).
    public var keepsIDs = false
    /// Whether the import writes one change saying the data set changed (`imported`), so
    /// that a server on the database rebuilds its index and feed readers start again: an
    /// import into a database in use.
    public var marksDataSetChanged = false
    /// The memory a bulk load sorts its reports in, in bytes (a store that sorts them
    /// itself): beyond it, sorted runs go to scratch files and are merged.
    public var sortMemory = 224 << 20

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
    // Where the time went, as the SQLite store splits it (a phase another store lacks
    // stays 0).

    /// Seconds spent inserting rows into the report table (reading the input excluded).
    public var tableSeconds = 0.0
    /// Seconds spent on the R*Tree after the rows went in: it is packed on a second core
    /// meanwhile, then written.
    public var rtreeSeconds = 0.0
    /// Seconds spent on the phone index after the other indexes: into a new database it
    /// is built on a second core while the rows go in, then copied.
    public var searchIndexSeconds = 0.0
    /// Seconds spent building the secondary indexes (unique ids, newest first).
    public var secondaryIndexSeconds = 0.0
    /// Seconds spent committing: into a new database, writing its pages (once) and syncing
    /// them; into an existing one, writing the WAL and checkpointing it.
    public var commitSeconds = 0.0
    /// Whether this was a bulk load, which rebuilt the indexes whole.
    public var rebuiltIndexes = false
    /// The ids stored, in input order unless it was a bulk load (then in key order); only
    /// with ``ImportOptions/keepsIDs``.
    public var ids: [Int64] = []

    public init() {}
}

/// The rules by which an import admits records, the same in every store: each record
/// valid against the reference data, an id used once in the input and not taken in the
/// store, the next numbers handed to records without one; issues counted and the first
/// ``ImportOptions/maxReportedIssues`` kept; once one record is refused (without
/// ``ImportOptions/skipInvalid``), nothing more is admitted, every record still checked.
public struct ImportAdmission {
    public let options: ImportOptions
    public let reference: ReferenceData
    /// The highest id stored or handed out so far.
    public private(set) var lastID: Int64
    public private(set) var issues: [RecordIssue] = []
    public private(set) var issueCount = 0
    /// Ids given or handed out in this import, and where.
    private var seen = SeenIDs()

    public init(options: ImportOptions, reference: ReferenceData, lastID: Int64) {
        self.options = options
        self.reference = reference
        self.lastID = lastID
    }

    /// Whether what is admitted will be kept (no refusal, or refusals skipped).
    public var keeps: Bool { issueCount == 0 || options.skipInvalid }

    /// The record as it will be stored, with its id; nil when it is refused (its issue
    /// recorded) or when nothing will be kept. `taken` says whether the store holds an id.
    public mutating func admit(_ record: DraftRecord, taken: (Int64) throws -> Bool) rethrows -> ReportDraft? {
        var draft: ReportDraft
        do throws(ValidationError) {
            draft = try reference.validate(record.draft.get())
        } catch {
            refuse(record.location, error)
            return nil
        }
        if let id = draft.id {
            if let first = seen.location(of: id) {
                refuse(record.location, ValidationError(field: "id", "\(id) is already used in this input, at \(first)"))
                return nil
            }
            seen.insert(id, at: record.location)
            if try taken(id) {
                refuse(record.location, ValidationError(field: "id", "report \(id) already exists"))
                return nil
            }
        }
        guard keeps else { return nil }
        if let id = draft.id {
            lastID = max(lastID, id)
        } else {
            guard lastID < ReportLimits.maxID else {
                refuse(record.location, ValidationError(field: "id", "every report number up to \(ReportLimits.maxID) is taken"))
                return nil
            }
            lastID += 1
            draft.id = lastID
            seen.insert(lastID, at: record.location)
        }
        return draft
    }

    /// Records a refused record.
    public mutating func refuse(_ location: RecordLocation, _ error: ValidationError) {
        issueCount += 1
        if issues.count < options.maxReportedIssues { issues.append(RecordIssue(location: location, error: error)) }
    }

    /// ``RecordsRejected`` when a refusal means nothing is kept.
    public func check() throws(RecordsRejected) {
        if !keeps { throw RecordsRejected(issues: issues, issueCount: issueCount) }
    }
}

/// The ids an import has met and where each was first, in memory that does not grow with
/// the input when its ids rise one by one, record after record (a file numbered 1, 2, 3…
/// or numbered by the store): such a stretch is one run. Ids out of that order are kept
/// one by one.
struct SeenIDs {
    /// Runs of consecutive ids at consecutive records, in rising order of id.
    private var runs: [(id: Int64, location: RecordLocation, count: Int64)] = []
    private var others: [Int64: RecordLocation] = [:]

    func location(of id: Int64) -> RecordLocation? {
        var low = 0, high = runs.count
        while low < high {
            let mid = (low + high) / 2
            if runs[mid].id + runs[mid].count <= id { low = mid + 1 } else { high = mid }
        }
        if low < runs.count, runs[low].id <= id {
            return runs[low].location.advanced(by: Int(id - runs[low].id))
        }
        return others[id]
    }

    /// Records `id` (not met before) at `location`.
    mutating func insert(_ id: Int64, at location: RecordLocation) {
        guard let last = runs.last else {
            runs.append((id, location, 1))
            return
        }
        if id == last.id + last.count, location == last.location.advanced(by: Int(last.count)) {
            runs[runs.count - 1].count += 1
        } else if id >= last.id + last.count {
            runs.append((id, location, 1))
        } else {
            others[id] = location
        }
    }
}

extension RecordLocation {
    /// The location `n` records further on.
    func advanced(by n: Int) -> RecordLocation {
        switch self {
        case .line(let line): .line(line + n)
        case .feature(let feature): .feature(feature + n)
        }
    }
}
