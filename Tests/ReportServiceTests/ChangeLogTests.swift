import Foundation
import Generator
import Geometry
import GRDB
import ReportModel
@testable import ReportService
import SQLiteStore
import Synchronization
import Testing
import TestSupport

/// The change log's contract, on which the feed's cursors, the following of other
/// processes, the change stream and the webhook outbox all rest: a reader that has seen
/// change N never later finds a change numbered below N (`SQLiteReports.changes(after:limit:)`).
@Suite("The change log's contract")
struct ChangeLogTests {
    /// Whether the writers still write (an Atomic cannot be captured by an escaping closure).
    final class Writing: Sendable { let on = Atomic<Bool>(true) }

    /// Every report's version (`updated_at`, which every write moves on), hidden ones too,
    /// and the last change number, read together.
    static func versions(_ store: SQLiteReports) throws -> (versions: [Int64: Int64], lastChange: Int64) {
        try store.pool.read { db in
            var versions: [Int64: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, updated_at FROM report UNION ALL SELECT id, updated_at FROM report_hidden") {
                versions[row[0]] = row[1]
            }
            return (versions, try Int64.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) FROM report_change") ?? 0)
        }
    }

    @Test("three services on one file write at once while three followers read the log in small pages: each sees every change exactly once and in order; a snapshot plus the changes after its number equals the database")
    func contract() async throws {
        let temporary = try TemporaryStore()
        var rng = SplitMix64(state: 29)
        try temporary.store.insert((0..<150).map { _ in
            Drafts.make(Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng)
        })
        let path = temporary.directory.path("test.sqlite")
        let start = try temporary.store.lastChange()
        // Each with its own connections and locks, as separate processes have.
        var writers: [ReportService] = []
        for _ in 0..<3 { writers.append(try await ReportService(storage: SQLiteReports(path: path))) }
        let readers = try (0..<4).map { _ in try SQLiteReports(path: path) }
        let writing = Writing()

        let followers = (0..<3).map { n in
            Task.detached { () throws -> [Int64] in
                var seen: [Int64] = [], last = start
                while true {
                    let stillWriting = writing.on.load(ordering: .acquiring)
                    let page = try readers[n].changes(after: last, limit: 1 + 4 * n)
                    for row in page.rows {
                        #expect(row.seq > last, "follower \(n) met change \(row.seq) after \(last)")
                        seen.append(row.seq)
                        last = row.seq
                    }
                    if !stillWriting && page.rows.isEmpty { return seen }
                    if page.rows.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
                }
            }
        }
        let snapshot = Task.detached { () throws -> (versions: [Int64: Int64], lastChange: Int64) in
            // Taken once some writes are in, while the rest go on.
            while try readers[3].lastChange() < start + 60 { try await Task.sleep(for: .milliseconds(1)) }
            return try Self.versions(readers[3])
        }
        func write(steps: Int, seed: UInt64) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (n, writer) in writers.enumerated() {
                    group.addTask { try await ChangeFeedTests.randomWrites(writer, ids: Array(1...150), steps: steps, workers: 2, seed: seed + UInt64(n)) }
                }
                try await group.waitForAll()
            }
        }
        try await write(steps: 120, seed: 100)
        // More writes once the snapshot is in: on a loaded machine its task may have
        // started only after the first ones ended, and it must still precede some.
        _ = try await snapshot.value
        try await write(steps: 10, seed: 200)
        writing.on.store(false, ordering: .releasing)

        let all = try await temporary.store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT seq FROM report_change WHERE seq > ? ORDER BY seq", arguments: [start]) }
        #expect(all.count > 300, "the writers wrote (else this test proves nothing)")
        for (n, follower) in followers.enumerated() {
            #expect(try await follower.value == all, "follower \(n) saw every change exactly once, in order")
        }

        // The snapshot, brought forward by the changes after its number, is the database:
        // every report no later change names is exactly as the snapshot has it.
        let (then, number) = try await snapshot.value
        #expect(number > start && number < all.last!, "the snapshot was taken while writes went on")
        let touched = Set(try temporary.store.changes(after: number, limit: 100_000).rows.map(\.reportID))
        let now = try Self.versions(temporary.store).versions
        for id in Set(then.keys).union(now.keys) where !touched.contains(id) {
            #expect(then[id] == now[id], "report \(id) changed with no change after the snapshot's number, or the snapshot missed one before it")
        }
        for id in touched where id > 0 { #expect(now[id] != nil && then[id] != now[id], "report \(id) is named by a later change, so it changed") }
    }
}
