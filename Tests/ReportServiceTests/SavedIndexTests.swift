import Clustering
import Foundation
import Generator
import GRDB
import Geometry
import ReportModel
@testable import ReportService
import SQLiteStore
import StorePorts
import Testing
import TestSupport

/// The index saved on a stop and read at the next start: used only when it is exactly the
/// database's state, and then answering as an index built from the rows does; refused
/// otherwise (older, another database's, cut short, damaged, for another grid), and the
/// index built in the background meanwhile, never a wrong answer.
@Suite("The saved index")
struct SavedIndexTests {
    static let kyiv = try! BoundingBox(west: 30.2, south: 50.2, east: 30.9, north: 50.7)

    /// A store of `count` reports in Kyiv, and a few filed through a service.
    static func seeded(_ count: Int, seed: UInt64) async throws -> TemporaryStore {
        var rng = SplitMix64(state: seed)
        let temporary = try TemporaryStore(
            inserting: (0..<count).map { _ in Drafts.make(Coordinate(longitude: 30.3 + 0.5 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng) })
        let service = try await ReportService(storage: temporary.store)
        try await ChangeFeedTests.randomWrites(service, ids: Array(1...Int64(min(count, 50))), steps: 40, workers: 1, seed: seed)
        return temporary
    }

    /// What the index and the tally answer, in words: clusters at several zooms with and
    /// without filters, counts, searches of every length, rankings and a summary.
    static func answers(_ service: ReportService) async throws -> [String] {
        var lines: [String] = []
        let yearAgo = Int64(Date().addingTimeInterval(-400 * 86_400).timeIntervalSince1970 * 1000)
        let recent = try service.filter(statuses: nil, created: yearAgo...Int64.max)
        for zoom in [0, 4, 9, 12, 15, 18, 20] {
            for filter in [ClusterFilter.all, try service.filter(statuses: ["new", "verifying"], created: nil), recent] {
                let answer = try await service.clusters(in: kyiv, zoom: zoom, filter: filter)
                lines.append("z\(zoom): " + answer.items.map { item in
                    switch item {
                    case .cluster(let c): "c\(c.id)×\(c.count)"
                    case .report(let r): "r\(r.id)"
                    }
                }.joined(separator: " "))
            }
        }
        lines.append("count \(try await service.count(ReportFilter(box: kyiv)))")
        for fragment in ["067", "1234", "50", "44123", "0671234567"] {
            let found = try await service.search(fragment, limit: 10)
            lines.append("search \(fragment): \(found.reports.map(\.id)) of \(found.matched.map(String.init) ?? "many")")
        }
        let top = try await service.topPhones(box: nil, created: nil, statuses: nil, district: nil, limit: 20)
        lines.append("top: " + top.map { "\($0.number)×\($0.count)" }.joined(separator: " "))
        let area = try await service.topPhones(box: kyiv, created: nil, statuses: ["new"], district: nil, limit: 10)
        lines.append("top in area: " + area.map { "\($0.number)×\($0.count)" }.joined(separator: " "))
        let summary = try service.summary(box: nil, created: nil)
        lines.append("summary \(summary.total) \(summary.byStatus.map(\.count)) \(summary.byDistrict.map(\.count))")
        return lines
    }

    /// Waits for a background build to finish.
    static func ready(_ service: ReportService, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await eventually("the background build", every: .milliseconds(10), sourceLocation: sourceLocation) { service.indexReady }
    }

    @Test("saved at the last change and read back: the same answers as an index built from the rows, before and after more writes; old leftovers of saves removed")
    func current() async throws {
        let temporary = try await Self.seeded(3_000, seed: 81)
        let path = temporary.directory.path("test.sqlite.index")
        let first = try await ReportService(storage: temporary.store)
        let savedAt = try await first.saveIndex(to: path)
        #expect(savedAt == (try temporary.store.lastChange()))
        // What saves killed midway left: the old one goes, a recent one (a save under way) stays.
        let old = temporary.directory.path(".test.sqlite.index.partial-old"), recent = temporary.directory.path(".test.sqlite.index.partial-recent")
        for leftover in [old, recent] { FileManager.default.createFile(atPath: leftover, contents: Data([1, 2, 3])) }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-7_200)], ofItemAtPath: old)
        let loaded = try await ReportService(storage: temporary.store, start: .saved(path: path))
        #expect(loaded.indexReady && loaded.indexStartNote == nil)
        #expect(!FileManager.default.fileExists(atPath: old) && FileManager.default.fileExists(atPath: recent))
        let built = try await ReportService(storage: temporary.store)
        #expect(try await Self.answers(loaded) == (try await Self.answers(built)))
        // Writes through the loaded index, then a fresh build from the rows.
        try await ChangeFeedTests.randomWrites(loaded, ids: Array(1...3_000), steps: 200, workers: 2, seed: 82)
        let rebuilt = try await ReportService(storage: temporary.store)
        #expect(try await Self.answers(loaded) == (try await Self.answers(rebuilt)))
    }

    enum Spoiler: String, CaseIterable, CustomTestStringConvertible {
        case older, cutShort, cutInHalf, flippedByte, anotherDatabase, anotherGrid, missing
        var testDescription: String { rawValue }
    }

    @Test("a saved index that is not the database's state is refused with its reason, and the index is built from the rows meanwhile", arguments: Spoiler.allCases)
    func refused(_ spoiler: Spoiler) async throws {
        let temporary = try await Self.seeded(2_000, seed: 83)
        let path = temporary.directory.path("test.sqlite.index")
        let service = try await ReportService(storage: temporary.store)
        let lastChange = try #require(try await service.saveIndex(to: path))
        let file = URL(fileURLWithPath: path)
        var grid = ClusterGrid.standard
        var reason = ""
        switch spoiler {
        case .older:
            var rng = SplitMix64(state: 84)
            _ = try await service.file(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng), by: WorkflowTests.filer)
            reason = "saved at change \(lastChange), the database is at change \(lastChange + 1)"
        case .cutShort, .cutInHalf:
            let bytes = try Data(contentsOf: file)
            try bytes.prefix(spoiler == .cutShort ? bytes.count - 1 : bytes.count / 2).write(to: file)
            reason = "not a whole flat file"
        case .flippedByte:
            var bytes = try Data(contentsOf: file)
            bytes[bytes.count / 3] ^= 0x01
            try bytes.write(to: file)
            reason = "checksum does not match"
        case .anotherDatabase:
            // A second database brought to the same change number: the number alone would match.
            let other = try TemporaryStore()
            var rng = SplitMix64(state: 85)
            let writer = try await ReportService(storage: other.store)
            while try other.store.lastChange() < lastChange {
                try writer.insert([Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng)])
            }
            #expect(try other.store.lastChange() == lastChange)
            let moved = other.directory.path("test.sqlite.index")
            try FileManager.default.copyItem(atPath: path, toPath: moved)
            let refused = try await ReportService(storage: other.store, start: .saved(path: moved))
            #expect(refused.indexStartNote?.contains("another database") == true, "\(refused.indexStartNote ?? "used")")
            try await Self.ready(refused)
            #expect(try await Self.answers(refused) == (try await Self.answers(try await ReportService(storage: other.store))))
            return
        case .anotherGrid:
            grid = try ClusterGrid(cellSize: 128)
            reason = "another grid"
        case .missing:
            try FileManager.default.removeItem(at: file)
            reason = "there is none"
        }
        let restarted = try await ReportService(storage: temporary.store, grid: grid, start: .saved(path: path))
        #expect(restarted.indexStartNote?.contains(reason) == true, "\(restarted.indexStartNote ?? "used"), expected \(reason)")
        try await Self.ready(restarted)
        #expect(restarted.reportCount == (try await temporary.store.count(in: .world)))
        #expect(try await Self.answers(restarted) == (try await Self.answers(try await ReportService(storage: temporary.store, grid: grid))))
    }

    @Test(
        "a saved index some changes behind, where the start allows it: the changes since are read from the log before the service is returned, and it answers as an index built from the rows; refused past the limit, when the change it was saved at is another write under its number (at the last change too), or forgotten; an import since: built in the background",
        arguments: StoreUnderTest.all)
    func caughtUp(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports, directory = try TemporaryDirectory(), path = directory.path("replica.index")
        var rng = SplitMix64(state: 88)
        let first = try await ReportService(storage: storage)
        let ids = try first.insert((0..<2_000).map { _ in Drafts.make(Coordinate(longitude: 30.3 + 0.5 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng) }).map(\.id)
        try await ChangeFeedTests.randomWrites(first, ids: Array(ids.prefix(50)), steps: 40, workers: 1, seed: 88)
        let savedAt = try #require(try await first.saveIndex(to: path))
        // Another replica writes on: filings, moves and new numbers, transitions, hides.
        try await ChangeFeedTests.randomWrites(try await ReportService(storage: storage), ids: ids, steps: 150, workers: 2, seed: 89)
        let behind = try await storage.lastChange() - savedAt
        #expect(behind > 100)

        let caughtUp = try await ReportService(storage: storage, start: .saved(path: path, catchUp: behind))
        #expect(caughtUp.indexReady && caughtUp.indexStartNote == nil, "\(caughtUp.indexStartNote ?? "")")
        #expect(caughtUp.reportCount == (try await storage.count(in: .world)), "caught up before it was returned")
        #expect(try await Self.answers(caughtUp) == (try await Self.answers(try await ReportService(storage: storage))))

        func refusal(_ catchUp: Int64) async throws -> String? {
            let service = try await ReportService(storage: storage, start: .saved(path: path, catchUp: catchUp))
            try await Self.ready(service)
            #expect(service.reportCount == (try await storage.count(in: .world)))
            return service.indexStartNote
        }
        #expect(try await refusal(behind - 1)?.contains("at change \(savedAt), the database is at change \(savedAt + behind): more than the \(behind - 1) changes") == true)
        // The change it was saved at made again, otherwise: as in a database restored from a
        // backup and written on since, under the same numbers.
        let retime = { (seq: Int64, delta: Int) throws in
            try RowCacheTests.execute("UPDATE report_change SET at = at + \(delta) WHERE seq = \(seq)", keep: keep)
        }
        try retime(savedAt, 1)
        #expect(try await refusal(behind)?.contains("no longer holds the change it was saved at") == true)
        try retime(savedAt, -1)
        #expect(try await refusal(behind) == nil, "the same change again: used")
        // Saved at the last change: another write under its number is refused all the same.
        let writer = try await ReportService(storage: storage)
        let savedLast = try #require(try await writer.saveIndex(to: path))
        try retime(savedLast, 1)
        #expect(try await refusal(0)?.contains("change \(savedLast) is another write than the one it was saved at") == true)
        try retime(savedLast, -1)
        #expect(try await refusal(0) == nil)
        // Its change forgotten: used at the last change (nothing to read since), refused behind.
        _ = try await storage.forgetChanges(before: Date().addingTimeInterval(60))
        #expect(try await refusal(0) == nil)
        try await ChangeFeedTests.randomWrites(writer, ids: ids, steps: 5, workers: 1, seed: 90)
        #expect(try await storage.lastChange() > savedLast)
        #expect(try await refusal(10_000)?.contains("no longer holds the change it was saved at") == true)
        // An import among the changes since: only the rows can say what it did, so the start
        // builds from them in the background rather than in its own time.
        #expect(try await writer.saveIndex(to: path) != nil)
        var batch: [DraftRecord]? = Drafts.records((0..<30).map { _ in Drafts.make(Coordinate(longitude: 30.5, latitude: 50.4), using: &rng) })
        _ = try await ReportImport(storage: storage).run(options: ImportOptions(), next: { defer { batch = nil }; return batch })
        #expect(try await refusal(10_000)?.contains("an import") == true)
    }

    @Test("while the index is built in the background: what needs it answers IndexBuilding, never a wrong answer; search and writes work; the writes meanwhile are in the built index")
    func buildingMeanwhile() async throws {
        let temporary = try await Self.seeded(5_000, seed: 86)
        let gate = Gate()
        let service = try await ReportService(storage: temporary.store, start: .saved(path: temporary.directory.path("none.index")), buildWaits: gate.wait)
        // The build held at its start.
        await #expect(throws: IndexBuilding.self) { _ = try await service.clusters(in: Self.kyiv, zoom: 10) }
        #expect(throws: IndexBuilding.self) { _ = try service.summary(box: nil, created: nil) }
        #expect(throws: IndexBuilding.self) { _ = try service.extent() }
        // Search goes to the store meanwhile: its answer, whole.
        let searched = try await service.search("067", limit: 5)
        let stored = try await StoredReports(storage: temporary.store).search("067", limit: 5)
        #expect(searched.reports.map(\.id) == stored.reports.map(\.id))
        #expect(searched.matched == stored.matched || (searched.matched == nil && stored.matched > service.searchCountCap), "past the cap, \"more\"")
        // Writes go on, and every answer given is right or refused: some while the build is
        // held, the rest while it runs.
        var rng = SplitMix64(state: 87)
        var filed: [Int64] = []
        var refusals = 0
        while filed.count < 30 || !service.indexReady {
            if filed.count == 20 { gate.open() }
            filed.append(try await service.file(Drafts.make(Coordinate(longitude: 30.3 + 0.5 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng), by: WorkflowTests.filer).report.id)
            do {
                let count = try await service.count(ReportFilter(box: .world))
                #expect(count == (try await temporary.store.count(in: .world)), "a count from the index is the rows'")
            } catch is IndexBuilding {
                refusals += 1
            }
            if filed.count > 5_000 { break }
        }
        #expect(refusals > 0, "writes came while the index was built (else this test proves little)")
        try await Self.ready(service)
        _ = try await service.catchUp()
        #expect(service.reportCount == (try await temporary.store.count(in: .world)))
        #expect(try await Self.answers(service) == (try await Self.answers(try await ReportService(storage: temporary.store))))
    }
}
