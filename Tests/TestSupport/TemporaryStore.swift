import ReportModel
import SQLiteStore

/// A fresh store in a temporary directory, removed when the value goes away.
public final class TemporaryStore: Sendable {
    public let directory: TemporaryDirectory
    public let store: SQLiteReports

    /// A store holding `drafts`, inserted as one write.
    public init(tuning: QueryTuning = QueryTuning(), inserting drafts: [ReportDraft] = []) throws {
        directory = try TemporaryDirectory()
        store = try SQLiteReports(path: directory.path("test.sqlite"), tuning: tuning)
        if !drafts.isEmpty { try store.insert(drafts) }
    }
}
