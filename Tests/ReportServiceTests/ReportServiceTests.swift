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

let reference = try! ReferenceData.bundled()

func draft(_ lon: Double, _ lat: Double, status: String = "new", created: Double = 1_750_000_000) -> ReportDraft {
    ReportDraft(
        id: nil, coordinate: Coordinate(longitude: lon, latitude: lat), address: "вул. Хрещатик, 1", city: "Київ",
        district: "pecherskyi", objectType: "lighting_pole", balanceHolder: "kyivmiskvitlo", violator: nil,
        phones: ["0671234567"], comment: nil, status: status, createdAt: Date(timeIntervalSince1970: created))
}

@Suite("The report service: store and cluster index in step")
struct ReportServiceTests {
    @Test("write observers hear of every write after the index holds it: added, old and new versions, deleted; failed writes are silent")
    func observers() async throws {
        let temp = try TemporaryStore(inserting: [draft(30.5, 50.4)])
        let service = try await ReportService(storage: temp.store)
        let heard = Mutex<[[ClusterEntry]]>([])
        let indexed = Mutex<[Int]>([])
        service.onWrite { touched in
            heard.withLock { $0.append(touched) }
            indexed.withLock { $0.append(service.index.count) }  // the index already holds the write
        }
        let added = try service.insert([draft(30.6, 50.5, status: "verifying")])[0]
        #expect(heard.withLock { $0.last?.map(\.id) } == [added.id])
        #expect(indexed.withLock { $0 } == [2])
        let verifying = try #require(service.statusCodes.firstIndex(of: "verifying")), removed = try #require(service.statusCodes.firstIndex(of: "removed"))
        try service.update(id: added.id, with: draft(30.7, 50.5, status: "removed"))
        let update = heard.withLock { $0.last! }
        #expect(update.map(\.status) == [verifying, removed])
        #expect(update.map(\.coordinate.longitude) == [30.6, 30.7])
        try service.delete(id: 1)
        #expect(heard.withLock { $0.last?.map(\.id) } == [1])
        #expect(indexed.withLock { $0 } == [2, 2, 1])
        #expect(heard.withLock { $0.last?.first?.coordinate } == Coordinate(longitude: 30.5, latitude: 50.4))
        let writes = heard.withLock { $0.count }
        #expect(throws: (any Error).self) { try service.delete(id: 12345) }
        #expect(throws: (any Error).self) { try service.insert([draft(30.5, 95)]) }
        #expect(heard.withLock { $0.count } == writes)
    }

    @Test("the index built at start-up counts every stored report exactly once per tile")
    func startUp() async throws {
        var rng = SplitMix64(state: 5)
        let drafts = ReportGenerator(count: 800, seed: 5, distribution: .kyiv, reference: reference).map { r in
            var d = draft(r.coordinate.longitude, r.coordinate.latitude, status: r.status)
            d.createdAt = r.createdAt
            return d
        } + (0..<100).map { _ in draft(360 * rng.unit() - 180, 170 * rng.unit() - 85) }
        let temp = try TemporaryStore(inserting: drafts)
        let service = try await ReportService(storage: temp.store)
        #expect(service.index.count == 900)
        let all = try temp.store.reports(ids: (1...900).map { Int64($0) })
        for zoom in [0, 4, 9, 12, 15] {
            #expect(reportCount(try await service.clusters(in: .world, zoom: zoom).items) == 900)
            let tile = try TileID(z: zoom, x: Int(WebMercator.x(longitude: 30.52) * Double(1 << zoom)), y: Int(WebMercator.y(latitude: 50.45) * Double(1 << zoom)))
            let inTile = all.filter { r in
                let n = Double(1 << zoom)
                return Int(WebMercator.x(longitude: r.coordinate.longitude) * n) == tile.x && Int(WebMercator.y(latitude: r.coordinate.latitude) * n) == tile.y
            }
            let answer = try await service.clusters(in: tile.bounds, zoom: zoom)
            #expect(reportCount(answer.items) == inTile.count, "tile \(tile)")
            for item in answer.items {
                if case .report(let m) = item { #expect(answer.reports[m.id]?.id == m.id, "lone report \(m.id) read from the store") }
            }
        }
    }

    @Test("inserts, moves, status changes and deletes are visible to the next query")
    func writes() async throws {
        let temp = try TemporaryStore(inserting: [draft(30.5, 50.45), draft(30.5001, 50.4501)])
        let service = try await ReportService(storage: temp.store)
        let kyiv = try BoundingBox(west: 30.4, south: 50.4, east: 30.6, north: 50.5)
        let lviv = try BoundingBox(west: 23.9, south: 49.8, east: 24.1, north: 49.9)
        func count(_ box: BoundingBox, _ statuses: [String]? = nil) async throws -> Int {
            await reportCount(try service.clusters(in: box, zoom: 8, filter: service.filter(statuses: statuses, created: nil)).items)
        }
        #expect(try await count(kyiv) == 2)

        let added = try service.insert([draft(30.45, 50.42, status: "confirmed")])[0]
        #expect(try await count(kyiv) == 3)
        #expect(try await count(kyiv, ["confirmed"]) == 1)

        var moved = draft(24.03, 49.84, status: "confirmed")
        try service.update(id: added.id, with: moved)
        #expect(try await count(kyiv) == 2)
        #expect(try await count(lviv) == 1)

        moved.status = "removed"
        try service.update(id: added.id, with: moved)
        #expect(try await count(lviv, ["confirmed"]) == 0)
        #expect(try await count(lviv, ["removed"]) == 1)

        try service.delete(id: added.id)
        #expect(try await count(lviv) == 0)
        #expect(service.index.count == 2)

        // Failed writes change neither the store nor the index.
        #expect(throws: ReportNotFound.self) { try service.delete(id: 999) }
        #expect(throws: ValidationError.self) { try service.update(id: 1, with: draft(200, 50)) }
        #expect(throws: (any Error).self) { try service.insert([draft(30.5, 50.45), draft(30.5, 95)]) }
        #expect(try await count(kyiv) == 2)
        #expect(try temp.store.count() == 2)
        #expect(service.index.count == 2)
    }

    @Test("a time filter counts only reports created in the interval")
    func timeFilter() async throws {
        let temp = try TemporaryStore(inserting: [draft(30.5, 50.45, created: 1_000), draft(30.5, 50.45, created: 2_000), draft(30.5, 50.45, created: 3_000)])
        let service = try await ReportService(storage: temp.store)
        let filter = try service.filter(statuses: nil, created: 1_500_000...3_000_000)
        let items = try await service.clusters(in: .world, zoom: 3, filter: filter).items
        #expect(reportCount(items) == 2)
    }

    @Test("unknown statuses are an error naming the field and the allowed codes")
    func unknownStatus() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        #expect(throws: ValidationError.self) { try service.filter(statuses: ["new", "lost"], created: nil) }
        do {
            _ = try service.filter(statuses: ["lost"], created: nil)
        } catch {
            #expect(error.field == "status")
            #expect(error.message.contains("verifying"))
        }
    }

    @Test("children and leaves of a cluster come with their stored reports")
    func childrenAndLeaves() async throws {
        let temp = try TemporaryStore(inserting: (0..<30).map { i in draft(30.5 + Double(i) * 1e-4, 50.45 + Double(i % 5) * 1e-4) })
        let service = try await ReportService(storage: temp.store)
        let items = try await service.clusters(in: .world, zoom: 5).items
        guard case .cluster(let cluster) = items.first, items.count == 1 else {
            Issue.record("expected one cluster, got \(items)")
            return
        }
        #expect(cluster.count == 30)
        let page = try await service.leaves(of: cluster.id, limit: 10, offset: 25)
        #expect(page.total == 30)
        #expect(page.reports.count == 5)
        let children = try await service.children(of: cluster.id)
        #expect(reportCount(children.items) == 30)
    }

    @Test("readers never see half of a batch of moves")
    func concurrentReaders() async throws {
        let temp = try TemporaryStore(inserting: (0..<200).map { i in draft(30 + Double(i % 20) * 0.05, 50 + Double(i / 20) * 0.05) })
        let service = try await ReportService(storage: temp.store)
        let world = BoundingBox.world
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var rng = SplitMix64(state: 3)
                for _ in 0..<60 {
                    let id = Int64(1 + rng.below(200))
                    try service.update(id: id, with: draft(360 * rng.unit() - 180, 160 * rng.unit() - 80, status: ["new", "removed"][rng.below(2)]))
                }
            }
            for _ in 0..<3 {
                group.addTask {
                    for zoom in (0..<60).map({ $0 % 6 }) {
                        let n = reportCount(service.index.clusters(in: service.index.grid.cells(in: world, zoom: zoom)))
                        #expect(n == 200)
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
