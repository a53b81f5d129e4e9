import Foundation
import Offloading
import ReportModel
import StorePorts

/// The bulk write path: a file of reports into a store in use, in one transaction, all
/// or (when one is invalid and `skipInvalid` is off) none, without building an index.
///
/// It writes one change, `imported`: every process serving the database rebuilds its
/// index from the rows when it follows it (``ReportService/catchUp()``), and feed readers
/// start again from a snapshot. (A new SQLite database is built from a file by the store
/// itself, aside and moved into place: `posterwatch import` does that when there is none.)
public struct ReportImport: Sendable {
    let storage: any ReportImports

    public init(storage: any ReportImports) { self.storage = storage }

    /// Imports the records `next` hands out batch by batch (nil at the end); `progress`
    /// hears how many are done after each batch.
    public func run(
        options: ImportOptions, now: Date = Date(), next: () throws -> [DraftRecord]?, progress: (Int) -> Void = { _ in }
    ) async throws -> ImportSummary {
        var options = options
        options.marksDataSetChanged = true
        // The store may do the whole import in place: off the cooperative pool.
        return try await Blocking.offPool { try await storage.importRecords(options: options, now: now, next: next, progress: progress) }
    }
}
