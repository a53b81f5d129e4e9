import Clustering
import Foundation
import Generator
import Geometry
import Testing
import TestSupport

/// One grid configuration and data set for the brute-force comparisons.
struct Scenario: CustomStringConvertible, Sendable {
    var name: String
    var cellSize = 64
    var maxZoom = 20
    var minPoints = 2
    var statusCount = 5
    var leafCapacity = 64
    var n = 2000
    var clustered = false
    var seed: UInt64 = 1
    /// The index saved and read back before it is asked (a server's restart).
    var loaded = false

    var description: String { "\(name) C\(cellSize) z\(maxZoom) min\(minPoints) leaf\(leafCapacity) n\(n)\(loaded ? ", saved and loaded" : "")" }

    var ref: RefGrid { RefGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: minPoints) }

    func make() throws -> (ClusterIndex, Model, SplitMix64) {
        var rng = SplitMix64(state: seed)
        let entries = clustered
            ? clusteredEntries(n, &rng, statusCount: statusCount, maxLevel: maxZoom + ref.shift)
            : uniformEntries(n, &rng, statusCount: statusCount)
        let built = try ClusterIndex(grid: ref.clusterGrid, statusCount: statusCount, entries: entries, leafCapacity: leafCapacity)
        return (loaded ? try savedAndLoaded(built) : built, Model(grid: ref, statusCount: statusCount, entries: entries), rng)
    }
}

@Suite("clusters(in:zoom:filter:) against brute force")
struct QueryTests {
    static let scenarios: [Scenario] = [
        Scenario(name: "uniform world", n: 2000, seed: 11),
        Scenario(name: "clustered", n: 3000, clustered: true, seed: 12),
        Scenario(name: "clustered, small leaves", leafCapacity: 4, n: 1500, clustered: true, seed: 13),
        Scenario(name: "32-px cells", cellSize: 32, maxZoom: 18, minPoints: 3, statusCount: 3, leafCapacity: 8, n: 1500, clustered: true, seed: 14),
        Scenario(name: "256-px cells", cellSize: 256, maxZoom: 10, minPoints: 1, statusCount: 16, n: 1500, clustered: true, seed: 15),
        Scenario(name: "128-px cells, deepest", cellSize: 128, maxZoom: 25, minPoints: 2, statusCount: 2, leafCapacity: 3, n: 800, clustered: true, seed: 16),
        Scenario(name: "one zoom", cellSize: 64, maxZoom: 0, minPoints: 5, statusCount: 4, n: 300, seed: 17),
        Scenario(name: "one level", cellSize: 256, maxZoom: 0, minPoints: 2, statusCount: 2, leafCapacity: 2, n: 300, clustered: true, seed: 18),
        Scenario(name: "uniform world", n: 2000, seed: 19, loaded: true),
        Scenario(name: "clustered, small leaves", leafCapacity: 4, n: 1500, clustered: true, seed: 20, loaded: true),
        Scenario(name: "128-px cells, deepest", cellSize: 128, maxZoom: 25, minPoints: 2, statusCount: 2, leafCapacity: 3, n: 800, clustered: true, seed: 21, loaded: true),
    ]

    @Test("every zoom, random boxes and filters", arguments: scenarios)
    func everyZoom(_ scenario: Scenario) throws {
        var (index, model, rng) = try scenario.make()
        #expect(index.count == model.reports.count)
        var problems: [String] = []
        for z in 0...scenario.maxZoom {
            for box in boxes(&rng, zoom: z, model: model, random: 7) {
                problems += checkQuery(index, model, box: box, zoom: z, filter: .all)
                problems += checkQuery(index, model, box: box, zoom: z, filter: .random(&rng, model: model))
            }
        }
        expectNoProblems(problems, "\(scenario)")
    }

    @Test("whole world, every zoom: every report is counted once", arguments: scenarios)
    func worldTotals(_ scenario: Scenario) throws {
        let (index, model, _) = try scenario.make()
        for z in 0...scenario.maxZoom {
            let items = try index.clusters(in: .world, zoom: z)
            #expect(reportCount(items) == model.reports.count, "z\(z)")
            let filter = ClusterFilter(statusNumbers: [0])
            let matching = model.reports.values.filter { $0.entry.status == 0 }.count
            #expect(reportCount(try index.clusters(in: .world, zoom: z, filter: filter)) == matching, "z\(z)")
        }
    }

    @Test("tile-aligned boxes hold exactly the matching reports of the tile", arguments: scenarios)
    func tileSums(_ scenario: Scenario) throws {
        var (index, model, rng) = try scenario.make()
        let reports = model.list
        var problems: [String] = []
        for z in 0...min(scenario.maxZoom, TileID.maxZoom) {
            let n = 1 << z
            var tiles = Set<TileID>()
            for _ in 0..<6 { tiles.insert(tileOf(rng.pick(reports).entry.coordinate, z: z)) }
            for (x, y) in [(0, 0), (n - 1, n - 1), (0, n - 1), (n - 1, 0), (n / 2, n / 2)] { tiles.insert(try TileID(z: z, x: x, y: y)) }
            for tile in tiles {
                let filter: RefFilter = rng.chance(0.5) ? .all : .random(&rng, model: model)
                let items = try index.clusters(in: tile.bounds, zoom: z, filter: filter.clusterFilter)
                let want = reports.filter { filter.matches($0.entry) && tileOf($0.entry.coordinate, z: z) == tile }.count
                if reportCount(items) != want { problems.append("tile \(tile) \(filter): \(reportCount(items)), expected \(want)") }
                // Every cluster lies in the tile.
                let shift = scenario.ref.shift
                for case .cluster(let c) in items where c.cell.x >> shift != tile.x || c.cell.y >> shift != tile.y {
                    problems.append("tile \(tile): cluster \(c.cell) outside")
                }
            }
        }
        expectNoProblems(problems, "tile sums")
    }

    @Test("filters: status subsets, inclusive creation ranges, both, none; also on an index saved and read back")
    func filters() throws {
        var rng = SplitMix64(state: 21)
        let ref = RefGrid(cellSize: 64, maxZoom: 12, minPoints: 2)
        let entries = clusteredEntries(1500, &rng, statusCount: 6, maxLevel: 14)
        let model = Model(grid: ref, statusCount: 6, entries: entries)
        var problems: [String] = []
        let times = entries.map(\.createdAt).sorted()
        let t = times[times.count / 2]
        // Whole days in the index's periods: 64 days from a period's start, and runs across its ends.
        let day: Int64 = 86_400_000, period = 64 * day
        let periodStart = (times[times.count / 3] / period + 1) * period
        let runs: [(Int, ClusterIndex.TimeFilterPath, loaded: Bool)] = [(2, .periods, false), (64, .periods, false), (64, .wholeTree, false), (2, .periods, true)]
        for (leafCapacity, path, loaded) in runs {
            let built = try ClusterIndex(grid: ref.clusterGrid, statusCount: 6, entries: entries, leafCapacity: leafCapacity)
            let index = loaded ? try savedAndLoaded(built) : built
            index.timeFilterPath = path
            let filters: [RefFilter] = [
                RefFilter(statuses: [], created: nil),
                RefFilter(statuses: [5], created: nil),
                RefFilter(statuses: [0, 2, 4], created: nil),
                RefFilter(statuses: nil, created: t...t),
                RefFilter(statuses: nil, created: Int64.min...Int64.max),
                RefFilter(statuses: nil, created: Int64.min...t),
                RefFilter(statuses: nil, created: t...Int64.max),
                RefFilter(statuses: nil, created: 1...1),  // matches nothing
                RefFilter(statuses: [1, 3], created: times[times.count / 4]...times[3 * times.count / 4]),
                RefFilter(statuses: nil, created: periodStart...(periodStart + period - 1)),
                RefFilter(statuses: nil, created: (periodStart - 9 * day)...(periodStart + 2 * period + 17 * day - 1)),
                RefFilter(statuses: [0, 1, 2], created: (periodStart - 9 * day + 1)...(periodStart + 70 * day - 2)),
                RefFilter(statuses: nil, created: (periodStart + 3 * day)...(periodStart + 4 * day - 1)),
                RefFilter(statuses: nil, created: (periodStart + 3 * day + 5)...(periodStart + 3 * day + 50_000_000)),
            ]
            for f in filters {
                for z in [0, 1, 4, 8, 12] {
                    problems += checkQuery(index, model, box: .world, zoom: z, filter: f)
                    problems += checkQuery(index, model, box: try BoundingBox(west: 170, south: -40, east: 40, north: 86), zoom: z, filter: f)
                }
            }
        }
        expectNoProblems(problems, "filters")
        // Statuses outside the index's range select nothing, and do not crash.
        let index = try ClusterIndex(grid: ref.clusterGrid, statusCount: 6, entries: entries)
        #expect(try index.clusters(in: .world, zoom: 3, filter: ClusterFilter(statusNumbers: [7, 9])).isEmpty)
    }

    @Test("an empty index answers nothing")
    func empty() throws {
        let index = try ClusterIndex(statusCount: 3, entries: [])
        #expect(index.count == 0)
        for z in [0, 10, 20] { #expect(try index.clusters(in: .world, zoom: z).isEmpty) }
        let error = #expect(throws: ClusterNotFound.self) { try index.cluster(ClusterGrid.standard.id(of: Cell(zoom: 3, x: 1, y: 1))) }
        #expect(error?.cell == Cell(zoom: 3, x: 1, y: 1))
    }

    @Test("one report, exact duplicates, and minPoints")
    func duplicates() throws {
        let c = Coordinate(longitude: 30.52, latitude: 50.45)
        let grid = try ClusterGrid(cellSize: 64, maxZoom: 20, minPoints: 3)
        let entries = (0..<5).map { ClusterEntry(id: Int64(10 - $0), coordinate: c, status: $0 % 2, createdAt: Int64($0)) }
        let index = try ClusterIndex(grid: grid, statusCount: 2, entries: entries, leafCapacity: 2)
        for z in 0...20 {
            let items = try index.clusters(in: .world, zoom: z)
            guard items.count == 1, case .cluster(let cl) = items[0] else {
                Issue.record("z\(z): \(items)")
                continue
            }
            #expect(cl.count == 5 && cl.statusCounts == [3, 2] && cl.expansionZoom == 21 && cl.cell == grid.cell(of: c, zoom: z))
            // Two statuses only: below minPoints, the reports alone, in id order.
            let lone = try index.clusters(in: .world, zoom: z, filter: ClusterFilter(statusNumbers: [1]))
            #expect(lone.map { item -> Int64 in if case .report(let m) = item { m.id } else { -1 } } == [7, 9])
        }
        let leaves = try index.leaves(of: grid.id(of: grid.cell(of: c, zoom: 20)), limit: .max, offset: 0)
        #expect(leaves.members.map(\.id) == [6, 7, 8, 9, 10] && leaves.total == 5)
    }

    @Test("known clusters: positions, bounds and expansion zoom by hand")
    func byHand() throws {
        let grid = try ClusterGrid(cellSize: 256, maxZoom: 5, minPoints: 2)
        // Two reports in the same zoom-0 cell, split at zoom 1 (one each side of Greenwich).
        let a = ClusterEntry(id: 1, coordinate: Coordinate(longitude: -90, latitude: 10), status: 0, createdAt: 5)
        let b = ClusterEntry(id: 2, coordinate: Coordinate(longitude: 90, latitude: -10), status: 1, createdAt: 6)
        let index = try ClusterIndex(grid: grid, statusCount: 2, entries: [a, b])
        let items = try index.clusters(in: .world, zoom: 0)
        guard items.count == 1, case .cluster(let c) = items[0] else {
            Issue.record("\(items)")
            return
        }
        #expect(c.id.rawValue == 1 && c.count == 2 && c.expansionZoom == 1 && c.statusCounts == [1, 1])
        #expect(abs(c.x - 0.5) < 1e-9 && abs(c.y - 0.5) < 1e-9)
        #expect(abs(c.bounds.west + 90) < 1e-6 && abs(c.bounds.east - 90) < 1e-6)
        #expect(abs(c.bounds.south + 10) < 1e-6 && abs(c.bounds.north - 10) < 1e-6)
        #expect(c.bounds.west <= -90 && c.bounds.east >= 90 && c.bounds.south <= -10 && c.bounds.north >= 10)
        // At zoom 1 they are apart: two lone reports.
        #expect(try index.clusters(in: .world, zoom: 1).count == 2)
        #expect(try index.expansionZoom(of: c.id) == 1)
    }

    @Test("bounds of reports at the poles and the Mercator edge contain them")
    func polarBounds() throws {
        let grid = try ClusterGrid(cellSize: 64, maxZoom: 20, minPoints: 2)
        for (lat1, lat2) in [(90.0, 89.0), (-90, -88), (85.05112878, 85.05112878), (-85.05112878, -90), (90, 90)] {
            let entries = [
                ClusterEntry(id: 1, coordinate: Coordinate(longitude: 10, latitude: lat1), status: 0, createdAt: 0),
                ClusterEntry(id: 2, coordinate: Coordinate(longitude: 10.5, latitude: lat2), status: 0, createdAt: 0),
            ]
            let index = try ClusterIndex(grid: grid, statusCount: 1, entries: entries)
            let items = try index.clusters(in: .world, zoom: 0)
            guard case .cluster(let c)? = items.first else {
                Issue.record("\(lat1), \(lat2): \(items)")
                continue
            }
            let b = c.bounds
            #expect(b.north >= max(lat1, lat2) && b.south <= min(lat1, lat2), "\(lat1), \(lat2): \(b)")
            #expect(b.west <= 10 && b.east >= 10.5)
        }
    }
}
