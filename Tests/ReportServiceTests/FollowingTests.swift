import Clustering
import Foundation
import Generator
import Geometry
import ReportModel
@testable import ReportService
import SQLiteStore
import Synchronization
import Testing
import TestSupport
import StorePorts

/// Two services on one database file, as two processes would be: each one's index,
/// after it catches up, equals the rows (a brute-force comparison), whatever the other
/// wrote meanwhile; a bulk import by a third connection makes it rebuild.
@Suite("Following other processes' writes")
struct FollowingTests {
    /// Whether `service`'s index holds exactly the reports on the map in the database.
    static func indexEqualsRows(_ service: ReportService, _ store: SQLiteReports) throws -> Bool {
        let rows = try store.markers(ClusterEntry.init)
        return service.index.count == rows.count && rows.allSatisfy(service.index.holds)
    }

    @Test("random concurrent writes through two services on one file: after catching up, each index equals the rows")
    func twoWriters() async throws {
        let temporary = try TemporaryStore()
        var rng = SplitMix64(state: 41)
        let seeded = (0..<200).map { _ in Drafts.make(Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng) }
        try temporary.store.insert(seeded)
        let a = try await ReportService(storage: temporary.store)
        let other = try SQLiteReports(path: temporary.directory.path("test.sqlite"))
        let b = try await ReportService(storage: other)
        let ids = Array(1...Int64(seeded.count))
        try await ChangeFeedTests.randomWrites(b, ids: ids, steps: 20, workers: 1, seed: 3)
        let behind = try !Self.indexEqualsRows(a, temporary.store)
        #expect(behind, "the other's writes are missing before catching up (else this test proves nothing)")
        let following = Task.detached {
            while !Task.isCancelled {
                _ = try? await a.catchUp()
                _ = try? await b.catchUp()
                try? await Task.sleep(for: .milliseconds(3))
            }
        }
        async let first: Void = ChangeFeedTests.randomWrites(a, ids: ids, steps: 150, workers: 3, seed: 1)
        async let second: Void = ChangeFeedTests.randomWrites(b, ids: ids, steps: 150, workers: 3, seed: 2)
        _ = try await (first, second)
        following.cancel()
        _ = await following.result
        let caughtUp = try await a.catchUp()
        let last = try temporary.store.lastChange()
        #expect(caughtUp.followed == last && !caughtUp.rebuilt)
        _ = try await b.catchUp()
        #expect(try Self.indexEqualsRows(a, temporary.store))
        #expect(try Self.indexEqualsRows(b, temporary.store))
        #expect(try await a.catchUp().applied == 0, "caught up: nothing more to apply")
    }

    /// Three filings through a new service, followed; then what a restore of the backup
    /// taken after the first leaves under it: one report, one change.
    static func restoredUnderService(using rng: inout SplitMix64) async throws -> (TemporaryStore, ReportService) {
        let temporary = try TemporaryStore()
        let service = try await ReportService(storage: temporary.store)
        for _ in 0..<3 { _ = try await service.file(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng), by: WorkflowTests.filer) }
        #expect(try await service.catchUp().followed == 3)
        try await temporary.store.pool.write { db in
            try db.execute(sql: "DELETE FROM report WHERE id > 1")
            try db.execute(sql: "DELETE FROM report_change WHERE seq > 1")
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = 1 WHERE name = 'report_change'")
        }
        return (temporary, service)
    }

    @Test("a database restored from an older backup under the server (its change log went back): the index is rebuilt from the rows, and later writes followed")
    func logWentBack() async throws {
        var rng = SplitMix64(state: 8)
        let (temporary, service) = try await Self.restoredUnderService(using: &rng)
        let caughtUp = try await service.catchUp()
        #expect(caughtUp.rebuilt && caughtUp.followed == 1 && service.reportCount == 1)
        #expect(try Self.indexEqualsRows(service, temporary.store))
        // Another process files after the restore: change 2 again, followed.
        let other = try await ReportService(storage: try SQLiteReports(path: temporary.directory.path("test.sqlite")))
        _ = try await other.file(Drafts.make(Coordinate(longitude: 30.6, latitude: 50.4), using: &rng), by: WorkflowTests.filer)
        #expect(try await service.catchUp().followed == 2)
        #expect(try Self.indexEqualsRows(service, temporary.store) && service.reportCount == 2)
    }

    @Test("a restore under the server, then filings of its own before it catches up (their numbers start below what it followed): it still rebuilds from the rows")
    func logWentBackUnderOwnWrites() async throws {
        var rng = SplitMix64(state: 9)
        let (temporary, service) = try await Self.restoredUnderService(using: &rng)
        // Changes 2, 3 and 4 again: the log's last number is past what was followed by then.
        for _ in 0..<3 { _ = try await service.file(Drafts.make(Coordinate(longitude: 30.6, latitude: 50.4), using: &rng), by: WorkflowTests.filer) }
        let caughtUp = try await service.catchUp()
        #expect(caughtUp.rebuilt && caughtUp.followed == 4)
        #expect(try Self.indexEqualsRows(service, temporary.store) && service.reportCount == 4)
    }

    @Test("a bulk import by another connection: the index is rebuilt from the rows and swapped in, its observers told")
    func importRebuilds() async throws {
        let temporary = try TemporaryStore()
        let service = try await ReportService(storage: temporary.store)
        let replaced = Atomic(0)
        service.onReplace { replaced.add(1, ordering: .relaxed) }
        var rng = SplitMix64(state: 7)
        _ = try await service.file(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng), by: WorkflowTests.filer)
        let records = Drafts.records((0..<500).map { _ in Drafts.make(Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng) })
        let importer = try SQLiteReports(path: temporary.directory.path("test.sqlite"))
        var batches = [records]
        var options = ImportOptions()
        options.marksDataSetChanged = true
        let summary = try importer.importRecords(options: options, next: { batches.popLast() })
        #expect(summary.imported == 500 && service.reportCount == 1)
        let caughtUp = try await service.catchUp()
        #expect(caughtUp.rebuilt && replaced.load(ordering: .relaxed) == 1)
        let equal = try Self.indexEqualsRows(service, temporary.store)
        #expect(service.reportCount == 501 && equal)
        let feed = try temporary.store.changes(after: 0, limit: 10).rows
        #expect(feed.map(\.action) == [.filed, .imported], "one change for the whole import")
    }

    @Test("a service's own writes are not read back: alone, catching up runs no pass; after another replica's write it runs one, which brings that write in", arguments: StoreUnderTest.all)
    func ownWritesSkipped(_ store: StoreUnderTest) async throws {
        let (replicas, keep) = try await store.replicas(2)
        let (a, b) = (try await ReportService(storage: replicas[0]), try await ReportService(storage: replicas[1]))
        var rng = SplitMix64(state: 12)
        let seeded = try a.insert((0..<20).map { _ in Drafts.make(Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng) })
        try await ChangeFeedTests.randomWrites(a, ids: seeded.map(\.id), steps: 40, workers: 3, seed: 5)
        let transactions = a.commits.transactions.load(ordering: .relaxed)
        let alone = try await a.catchUp()
        let last = try await replicas[0].lastChange()
        #expect(alone.followed == last && alone.applied == 0)
        #expect(a.commits.transactions.load(ordering: .relaxed) == transactions, "no pass: nothing to read back")

        let count = a.reportCount
        let theirs = try b.insert([Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng)])[0]
        let followed = try await a.catchUp()
        #expect(a.commits.transactions.load(ordering: .relaxed) == transactions + 1, "one pass")
        #expect(followed.applied == 1 && followed.followed == last + 1)
        #expect(a.index.entry(id: theirs.id) != nil && a.reportCount == count + 1)

        // Another replica's write, then one of this one's: its numbers do not follow on from
        // what was followed, so the other's write is still read.
        let other = try b.insert([Drafts.make(Coordinate(longitude: 30.55, latitude: 50.45), using: &rng)])[0]
        let own = try a.insert([Drafts.make(Coordinate(longitude: 30.45, latitude: 50.45), using: &rng)])[0]
        let both = try await a.catchUp()
        #expect(both.applied == 1 && both.followed == last + 3)
        #expect(a.index.entry(id: other.id) != nil && a.index.entry(id: own.id) != nil && a.reportCount == count + 3)
        _ = keep
    }
}
