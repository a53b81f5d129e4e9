import Foundation
import ReportModel
import SQLiteStore
import StorePorts

/// Reports as raw rows, for tests that need a database of them: an import of its own,
/// row by row, with no history and no change (the service's writes are the way in
/// everywhere else).
extension SQLiteReports {
    /// Validates and stores new reports in one transaction, all or none; returns them as
    /// stored (with their ids, status and times). An invalid draft throws
    /// ``RecordsRejected`` locating it as `feature N` (1-based) of `drafts`.
    @discardableResult
    public func insert(_ drafts: [ReportDraft], now: Date = Date()) throws -> [Report] {
        // An import of its own, row by row (never a bulk load for a few reports).
        var batch: [DraftRecord]? = drafts.enumerated().map { DraftRecord(location: .feature($0.offset + 1), draft: .success($0.element)) }
        var options = ImportOptions(bulkBelow: 0)
        options.keepsIDs = true
        let summary = try importRecords(options: options, now: now, next: {
            defer { batch = nil }
            return batch
        })
        return try reports(ids: summary.ids)
    }

    /// Validates and stores one new report; an invalid draft throws its ``ValidationError``.
    @discardableResult
    public func insert(_ draft: ReportDraft, now: Date = Date()) throws -> Report {
        do {
            return try insert([draft], now: now)[0]
        } catch let rejected as RecordsRejected {
            throw rejected.issues[0].error
        }
    }
}
