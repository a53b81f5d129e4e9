import ArgumentParser
import Foundation
import Interchange
import ReportModel
import ReportService
import StorePorts
import SQLiteStore

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import reports from GeoJSON, GeoJSON text sequences or CSV.",
        discussion: """
            The format is told by the file name or its first bytes. Every record is checked; when any
            is invalid, each one is listed with its line or feature number and the rule it broke,
            and nothing is imported, unless --skip-invalid is given. Given ids are kept (a clash is
            an error); missing ids are assigned; a missing status is "new".
            """)

    @Argument(help: ArgumentHelp("The file to import.", valueName: "file"))
    var file: String

    @Flag(help: "Import the valid records even when some are invalid (those are listed and left out).")
    var skipInvalid = false

    @OptionGroup var store: StoreOptions

    /// How many invalid records are listed; the rest are counted.
    static let listedIssues = 100

    func run() async throws {
        let reader = try ReportReader(url: URL(fileURLWithPath: file))
        // A new database is built aside and moved into place once complete (faster, and
        // never half-made); an existing one takes the import in one transaction.
        let sqliteFile: String? = if case .sqlite(let path) = try store.location { path } else { nil }
        let existing = sqliteFile.map { FileManager.default.fileExists(atPath: $0) } ?? true
        var progress = ProgressBar("import", total: reader.totalBytes)
        let batches = reader.readingAhead()  // parse on one core while SQLite writes on the other
        let start = Date()
        var records = 0
        do {
            let options = ImportOptions(skipInvalid: skipInvalid, maxReportedIssues: Self.listedIssues)
            let next = { () throws -> [DraftRecord]? in
                guard let batch = try batches.next() else { return nil }
                records += batch.records.count
                progress.update(batch.bytesRead, reports: records)
                return batch.records
            }
            let summary = existing
                ? try await ReportImport(storage: store.stores().reports).run(options: options, next: next)
                : try Stores.createSQLite(path: sqliteFile!, options: options, next: next)
            progress.finish()
            let seconds = Date().timeIntervalSince(start)
            for issue in summary.issues { Console.error("skipped \(issue)") }
            // The phases the store went through (another store's stay 0, and are left out).
            let phases = [
                ("table", summary.tableSeconds), ("R*Tree", summary.rtreeSeconds), ("phone index", summary.searchIndexSeconds),
                ("other indexes", summary.secondaryIndexSeconds), ("commit", summary.commitSeconds),
            ].filter { $0.0 == "table" || $0.1 > 0 }.map { "\($0.0) \(Format.seconds($0.1))" }
            Console.error("""
                imported \(Format.count(summary.imported)) reports into \(store.name) in \(Format.seconds(seconds)) \
                (\(Format.count(Int(Double(summary.imported) / max(seconds, 1e-9))))/s; \(phases.joined(separator: ", ")))\
                \(summary.skipped > 0 ? "; skipped \(Format.count(summary.skipped)) invalid" : "")
                """)
        } catch let rejected as RecordsRejected {
            progress.finish()
            for issue in rejected.issues { Console.error(issue.description) }
            if rejected.issueCount > rejected.issues.count {
                Console.error("… and \(Format.count(rejected.issueCount - rejected.issues.count)) more")
            }
            throw CleanError("\(file): \(Format.count(rejected.issueCount)) invalid record(s), nothing was imported; fix them or pass --skip-invalid")
        }
    }
}
