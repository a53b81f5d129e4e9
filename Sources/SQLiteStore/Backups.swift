import Foundation
import GRDB

extension SQLiteReports {
    /// What a database file holds, as a backup records it and a restore checks it.
    public struct FileSummary: Codable, Sendable, Equatable {
        public var reports: Int
        /// The last change's sequence number: a client of the feed resumes after it.
        public var lastChange: Int64
        /// The stored pictures its photos name (SHA-256, hex).
        public var photos: Set<String>
        /// The migrations applied to it, in order.
        public var schema: [String]
    }

    /// Copies the database as of one moment into a new file at `path`, with SQLite's
    /// online backup API from one read transaction: writers go on meanwhile and are not
    /// in the copy, whatever is committed before it began is. `progress` hears the pages
    /// copied and the pages in all, after each step of `pagesPerStep`.
    public func backup(to path: String, pagesPerStep: Int32 = 4_096, progress: (_ copied: Int, _ total: Int) -> Void = { _, _ in }) throws {
        let copy = try DatabaseQueue(path: path)
        try withoutActuallyEscaping(progress) { progress in
            try pool.backup(to: copy, pagesPerStep: pagesPerStep) { step in
                progress(step.completedPageCount, step.totalPageCount)
            }
        }
        try copy.close()
    }

    /// Reads what a database file holds without writing to it, after checking it whole
    /// (`PRAGMA integrity_check`); throws ``StoreUnavailable`` naming what is wrong.
    public static func summary(ofFileAt path: String) throws -> FileSummary {
        guard FileManager.default.fileExists(atPath: path) else { throw StoreUnavailable(path: path, reason: "there is no such file") }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                let problems = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard problems == ["ok"] else {
                    throw StoreUnavailable(path: path, reason: "it fails SQLite's integrity check: " + problems.prefix(5).joined(separator: "; "))
                }
                return FileSummary(
                    reports: try reportCount(db), lastChange: try lastChange(db),
                    photos: try photoNames(db),
                    schema: try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid"))
            }
        } catch let error as DatabaseError {
            throw StoreUnavailable(path: path, reason: error.message ?? "\(error.resultCode)")
        }
    }
}

extension SQLiteReports {
    /// The last call before the process ends: stops the background checkpoints, copies
    /// every committed page from the write-ahead log into the database file and empties
    /// the log, so that the file alone holds everything. False if a reader still in a
    /// transaction kept the log for two seconds: what it holds is safe there all the same.
    @discardableResult
    public func shutDown() throws -> Bool {
        checkpointer.withLock { $0?.stop() }
        for _ in 0..<100 {
            // Its first column: whether a reader kept it from emptying the log.
            let busy = try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") ?? 1 }
            if busy == 0 { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
    }
}
