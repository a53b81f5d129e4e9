import Foundation
import Generator
import GRDB
import Geometry
import Photos
import ReportModel
@testable import ReportService
import StorePorts
import Testing
import TestSupport

/// The rows a service keeps in memory (``RowCache``) against the store's own rows: after
/// every write of its own, at once; after another replica's writes, once they are followed.
@Suite("The row cache")
struct RowCacheTests {
    /// Whether `service` answers every one of `ids` as the store's rows are now.
    static func current(_ service: ReportService, _ ids: [Int64], _ storage: any ReportStorage) async throws -> Bool {
        try await service.reports(ids: ids) == (try await storage.reports(ids: ids))
    }

    /// Every report number up to the highest public one: hidden and deleted ones among them.
    static func numbers(_ storage: any ReportStorage) async throws -> [Int64] {
        Array(1...(try await storage.page(in: .world, after: nil, limit: 100_000).map(\.id).max() ?? 1))
    }

    @Test(
        "rows kept in memory are the store's after each of the service's own writes (filings, edits, transitions, hides, photos, a blocked number's moves), and after another replica's writes once followed; rebuilt with the index",
        arguments: StoreUnderTest.all)
    func bruteForce(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        defer { _ = keep }
        let storage = stores.reports, directory = try TemporaryDirectory()
        // Room for every row: a row not dropped when written stays, and the check fails.
        let cached = try await ReportService(storage: storage, rowCacheSize: 64 * 64)
        let other = try await ReportService(storage: storage)
        var rng = SplitMix64(state: 91)
        var ids = try cached.insert((0..<600).map { _ in Drafts.make(Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng) }).map(\.id)
        #expect(try await Self.current(cached, ids, storage))
        for round in 0..<4 {
            // Its own writes: answered as the store has them the moment each returns.
            for step in 0..<15 {
                try await ChangeFeedTests.randomWrites(cached, ids: ids, steps: 1, workers: 1, seed: UInt64(1_000 * round + step))
                ids = try await Self.numbers(storage)
                #expect(try await Self.current(cached, ids, storage), "round \(round), step \(step)")
            }
            let photos = try PhotoFiles(root: URL(fileURLWithPath: directory.path("photos")))
            let added = try await cached.addPhotos([TestImages.jpeg(width: 40, height: 30)], to: ids[round], by: WorkflowTests.supervisor, files: photos)
            #expect(try await Self.current(cached, ids, storage), "a photo moves the report's version")
            try await cached.removePhoto(added[0].photo.id, of: ids[round], by: WorkflowTests.supervisor)
            #expect(try await Self.current(cached, ids, storage))
            // Another replica's writes: seen once followed.
            try await ChangeFeedTests.randomWrites(other, ids: ids, steps: 40, workers: 2, seed: UInt64(77 + round))
            _ = try await cached.catchUp()
            ids = try await Self.numbers(storage)
            #expect(try await Self.current(cached, ids, storage), "round \(round), after following")
        }
        // A number blocked: the reports carrying it move in the blocking transaction.
        let carrier = try #require(try await storage.reports(ids: ids).first { !$0.phones.isEmpty })
        let number = carrier.phones[0]
        _ = try await cached.verify(number, outcome: .violator, note: nil, by: PhoneTests.supervisor)
        _ = try await cached.block(number, note: nil, by: PhoneTests.supervisor)
        #expect(try await Self.current(cached, ids, storage))
        // Rebuilt from the rows (as after an import by another process) with another
        // replica's writes not followed: they are in the rows read, and nothing old is kept.
        _ = try await cached.reports(ids: ids)
        try await ChangeFeedTests.randomWrites(other, ids: ids, steps: 40, workers: 1, seed: 95)
        #expect(try await !Self.current(cached, ids, storage), "kept rows are behind another replica's writes until followed")
        try await cached.rebuild()
        #expect(try await Self.current(cached, ids, storage))
        let (hits, misses) = cached.rowCacheCounts
        #expect(hits > misses && misses > 0, "the cache answered (\(hits) hits, \(misses) misses)")
        #expect(other.rowCacheCounts == (0, 0))
    }

    /// Runs `sql` on the test's database, as another client would.
    static func execute(_ sql: String, keep: AnyObject) throws {
        if let postgres = keep as? TestPostgres {
            try TestPostgres.psql(sql, database: postgres.name)
        } else {
            try DatabaseQueue(path: try #require(keep as? TemporaryDirectory).path("test.sqlite")).write { try $0.execute(sql: sql) }
        }
    }

    @Test(
        "while following other processes' changes fails, the rows kept are not used (a report hidden by another replica is not shown from memory); once a pass succeeds they are again",
        arguments: StoreUnderTest.all)
    func followingFails(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        let cached = try await ReportService(storage: storage, rowCacheSize: 10_000)
        let other = try await ReportService(storage: storage)
        var rng = SplitMix64(state: 96)
        let ids = try cached.insert((0..<50).map { _ in Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng) }).map(\.id)
        #expect(try await cached.reports(ids: ids).count == 50)
        _ = try await other.hide(ids[0], note: "спам", by: WorkflowTests.supervisor)
        // A table the follow pass reads, away (SQLite reads its last number elsewhere).
        let table = keep is TestPostgres ? "report_change" : "report_change_pruned"
        try Self.execute("ALTER TABLE \(table) RENAME TO \(table)_away", keep: keep)
        await #expect(throws: (any Error).self) { try await cached.catchUp() }
        let hits = cached.rowCacheCounts.hits
        #expect(try await cached.reports(ids: ids).map(\.id) == Array(ids.dropFirst()), "read from the store: the hidden one left out")
        #expect(cached.rowCacheCounts.hits == hits)
        try Self.execute("ALTER TABLE \(table)_away RENAME TO \(table)", keep: keep)
        _ = try await cached.catchUp()
        for _ in 0..<2 { #expect(try await cached.reports(ids: ids).map(\.id) == Array(ids.dropFirst())) }
        #expect(cached.rowCacheCounts.hits > hits, "kept rows used again")
    }

    @Test("a search whose digits are no report's id does not read that id: such a read finds nothing to keep, so each search was a read of the store", arguments: StoreUnderTest.all)
    func noSuchID(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        defer { _ = keep }
        let cached = try await ReportService(storage: stores.reports, rowCacheSize: 10_000)
        var rng = SplitMix64(state: 97)
        let ids = try cached.insert((0..<150).map { _ in Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng) }).map(\.id)
        let misses = cached.rowCacheCounts.misses
        for digits in ["9999999", "99999999999"] { _ = try await cached.search(digits, limit: 50) }
        #expect(cached.rowCacheCounts.misses == misses, "nothing read")
        let exact = try #require(ids.last { $0 >= 100 })
        #expect(try await cached.search(String(exact), limit: 50).reports.first?.id == exact, "a report's own id still comes first")
    }
}

@Suite("The row cache's stripes")
struct RowCacheStripeTests {
    static func row(_ id: Int64, _ comment: String) -> Report {
        Report(
            id: id, coordinate: Coordinate(longitude: 30.5, latitude: 50.45), address: "вул. Хрещатик, 1", city: "Київ", district: "pecherskyi",
            objectType: "pole", balanceHolder: "kyivenergo", violator: nil, phones: ["380671234567"], comment: comment, status: "new",
            createdAt: Date(milliseconds: 1_000), updatedAt: Date(milliseconds: 2_000))
    }

    @Test("a row read before a write to its stripe and kept after it is not kept; one read after is; a full stripe is emptied, never grown")
    func readAcrossWrite() {
        let cache = RowCache(capacity: 64 * 4)
        let before = cache.lookup([7])
        #expect(before.missing == [7])
        cache.drop([7 + 64])  // another report of the same stripe written meanwhile
        cache.keep([Self.row(7, "old")], stamps: before.stamps)
        #expect(cache.lookup([7]).missing == [7], "read across a write: not kept")
        let after = cache.lookup([7])
        cache.keep([Self.row(7, "new")], stamps: after.stamps)
        #expect(cache.lookup([7]).found[7]?.comment == "new")
        cache.drop([7])
        #expect(cache.lookup([7]).missing == [7])
        // Five rows into a stripe of four: the fifth empties it first.
        for n in 0..<5 {
            let id = Int64(3 + 64 * n), look = cache.lookup([id])
            cache.keep([Self.row(id, "\(n)")], stamps: look.stamps)
        }
        #expect(cache.lookup((0..<5).map { Int64(3 + 64 * $0) }).found.keys.sorted() == [3 + 64 * 4])
        cache.dropAll()
        #expect(cache.lookup([3 + 64 * 4]).found.isEmpty)
    }
}
