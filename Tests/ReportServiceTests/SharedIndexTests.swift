import Foundation
import Generator
import Geometry
@testable import ReportService
import StorePorts
import Testing
import TestSupport

/// A saved index shared through a store several replicas share (PostgreSQL): a replica
/// with no file of its own starts from the database's copy under the same checks as from
/// its own file, and the copy is replaced only when it has fallen behind.
@Suite("A saved index shared through the database", .enabled(if: TestPostgres.url != nil))
struct SharedIndexTests {
    static let postgres = StoreUnderTest.all.first { $0.name == "PostgreSQL" }!

    @Test(
        "a new replica starts from the database's copy and the changes since, answering as an index built from the rows; its own usable file is preferred; the copy is replaced only once more than the slack behind; a copy too far behind, cut short, or of another database is refused and the index built from the rows")
    func newReplica() async throws {
        let (stores, keep) = try await Self.postgres.open()
        let storage = stores.reports, directory = try TemporaryDirectory()
        let shared = try #require(storage as? any SharedIndexStorage)
        var rng = SplitMix64(state: 91)
        let first = try await ReportService(storage: storage)
        #expect(first.sharesIndex)
        let ids = try first.insert((0..<2_000).map { _ in Drafts.make(Coordinate(longitude: 30.3 + 0.5 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng) }).map(\.id)
        try await ChangeFeedTests.randomWrites(first, ids: Array(ids.prefix(50)), steps: 40, workers: 1, seed: 91)
        let own = directory.path("first.index")
        let sharedAt = try #require(try await first.shareIndex(from: own, unlessWithin: 100))
        #expect(sharedAt == (try await storage.lastChange()))
        #expect(try await shared.sharedIndexChange() == sharedAt)
        #expect(try await first.shareIndex(from: own, unlessWithin: 100) == nil, "the copy is current: not shared again")

        // Another replica writes on.
        let other = try await ReportService(storage: storage)
        try await ChangeFeedTests.randomWrites(other, ids: ids, steps: 150, workers: 2, seed: 92)
        let behind = try await storage.lastChange() - sharedAt
        #expect(behind > 100)
        let fresh = try await ReportService(storage: storage, start: .saved(path: directory.path("fresh.index"), catchUp: behind))
        #expect(fresh.indexReady && fresh.startedFromSharedIndex && fresh.indexStartNote == nil, "\(fresh.indexStartNote ?? "")")
        #expect(try await SavedIndexTests.answers(fresh) == (try await SavedIndexTests.answers(try await ReportService(storage: storage))))
        let restarted = try await ReportService(storage: storage, start: .saved(path: own, catchUp: behind))
        #expect(restarted.indexReady && !restarted.startedFromSharedIndex, "its own file, as good as the copy, is read")

        /// A start with no file of its own, built in the background: why the copy was not used.
        var lastStarted: ReportService?
        func refusal(_ catchUp: Int64) async throws -> String? {
            let path = directory.path("new-\(UUID().uuidString).index")
            let service = try await ReportService(storage: storage, start: .saved(path: path, catchUp: catchUp))
            try await SavedIndexTests.ready(service)
            #expect(try await SavedIndexTests.answers(service) == (try await SavedIndexTests.answers(try await ReportService(storage: storage))))
            lastStarted = service
            return service.indexStartNote
        }
        #expect(
            try await refusal(behind - 1)?.contains("there is none; nor the database's copy: saved at change \(sharedAt), the database is at change \(sharedAt + behind)")
                == true)

        // Once more than the slack behind, the copy is replaced with the replica's index.
        let replaced = try #require(try await first.shareIndex(from: own, unlessWithin: 100))
        #expect(replaced == (try await storage.lastChange()))
        #expect(try await shared.sharedIndexChange() == replaced)
        #expect(try await refusal(0) == nil, "the new copy is current")

        // A copy cut short (as by a crash of a hand-made copy), shared at a later change.
        try await ChangeFeedTests.randomWrites(other, ids: ids, steps: 5, workers: 1, seed: 93)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: own))
        let cut = directory.path("cut.index")
        try bytes.prefix(bytes.count - 1).write(to: URL(fileURLWithPath: cut))
        #expect(try await shared.share(file: cut, change: try await storage.lastChange(), unlessWithin: 0))
        let cutNote = try await refusal(10)
        #expect(cutNote?.contains("nor the database's copy: ") == true && cutNote?.contains("is not a whole flat file") == true, "\(cutNote ?? "used")")
        // The replica that refused it replaces it once built, although it is within the slack.
        let mended = try #require(lastStarted)
        #expect(try await mended.shareIndex(from: directory.path("mended.index"), unlessWithin: 10) != nil)
        #expect(try await refusal(10) == nil)
        #expect(try await lastStarted?.shareIndex(from: directory.path("again.index"), unlessWithin: 10) == nil, "a copy it read is replaced only past the slack")

        // Another database's index, shared in this one under its number.
        let (otherStores, otherKeep) = try await Self.postgres.open()
        let elsewhere = try await ReportService(storage: otherStores.reports)
        _ = try elsewhere.insert((0..<20).map { _ in Drafts.make(Coordinate(longitude: 30.5, latitude: 50.4), using: &rng) })
        let foreign = directory.path("foreign.index")
        let foreignAt = try #require(try await elsewhere.saveIndex(to: foreign))
        try await ChangeFeedTests.randomWrites(other, ids: ids, steps: 5, workers: 1, seed: 94)
        let last = try await storage.lastChange()
        #expect(foreignAt < last)
        #expect(try await shared.share(file: foreign, change: last, unlessWithin: 0))
        let foreignNote = try await refusal(10)
        #expect(foreignNote?.contains("nor the database's copy: it was saved from another database") == true, "\(foreignNote ?? "used")")
        withExtendedLifetime((keep, otherKeep)) {}
    }
}
