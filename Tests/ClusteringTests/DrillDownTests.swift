import Clustering
import Foundation
import Generator
import Geometry
import Testing
import TestSupport

/// Checks cluster(_:), expansionZoom(of:), children(of:) and leaves(of:) for (a sample of)
/// the clusters and lone reports of the world at `zoom`.
func drillDownProblems(
    _ index: ClusterIndex, _ model: Model, zoom: Int, filter: RefFilter, rng: inout SplitMix64, maxChecked: Int
) -> [String] {
    let g = model.grid
    let f = filter.clusterFilter
    let tag = "z\(zoom) \(filter)"
    var p: [String] = []
    let items: [ClusterItem]
    do { items = try index.clusters(in: .world, zoom: zoom, filter: f) } catch { return ["\(tag): \(error)"] }
    let exp = expected(model, zoom: zoom, filter: filter) { _ in true }
    var clusters: [Cluster] = [], lone: [ClusterMember] = []
    for item in items {
        switch item {
        case .cluster(let c): clusters.append(c)
        case .report(let m): lone.append(m)
        }
    }
    // Large clusters first (they exercise paging and deep subtrees), then a random sample.
    clusters.sort { $0.count > $1.count }
    var sample = Array(clusters.prefix(maxChecked / 2))
    for _ in 0..<min(maxChecked / 2, clusters.count) { sample.append(rng.pick(clusters)) }

    for c in sample {
        let ctag = "\(tag) cluster \(c.id) \(c.cell)"
        guard let e = exp.clusters[c.id.rawValue] else {
            p.append("\(ctag): not in the reference")
            continue
        }
        let order = leavesOrder(e.members)
        do {
            let again = try index.cluster(c.id, filter: f)
            if again != c { p.append("\(ctag): cluster(_:) gives \(again), query gave \(c)") }
            let ez = try index.expansionZoom(of: c.id, filter: f)
            if ez != c.expansionZoom { p.append("\(ctag): expansionZoom(of:) \(ez) vs \(c.expansionZoom)") }

            // Children: one zoom deeper, inside the cell; at maxZoom, the reports.
            let children = try index.children(of: c.id, filter: f)
            if reportCount(children) != c.count { p.append("\(ctag): children hold \(reportCount(children)), cluster \(c.count)") }
            if zoom < g.maxZoom {
                let sub = expected(model, zoom: zoom + 1, filter: filter) { $0.x / 2 == c.cell.x && $0.y / 2 == c.cell.y }
                p += compareItems(children, sub, zoom: zoom + 1, model: model, tag: "\(ctag) children")
            } else {
                let ids = children.map { item -> Int64 in
                    if case .report(let m) = item { return m.id }
                    return -1
                }
                if ids != order { p.append("\(ctag): children at maxZoom \(ids.prefix(8)), expected \(order.prefix(8))") }
            }

            // All leaves, in Z-order then id.
            let all = try index.leaves(of: c.id, limit: .max, offset: 0, filter: f)
            if all.total != c.count { p.append("\(ctag): leaves total \(all.total)") }
            if all.members.map(\.id) != order {
                let got = all.members.map(\.id)
                let what = Set(got) == Set(order) ? "order" : "members"
                p.append("\(ctag): leaves \(what) differ: \(got.prefix(8)) vs \(order.prefix(8))")
            }
            let byID = Dictionary(uniqueKeysWithValues: e.members.map { ($0.id, $0) })
            for m in all.members { if let r = byID[m.id] { p += memberProblems(m, r, tag: ctag) } }

            // Pages concatenate to the whole list.
            let k = c.count <= 40 ? rng.pick([1, 2, 3, 5, 8]) : c.count / rng.int(2...12) + 1
            var paged: [Int64] = []
            var offset = 0
            while offset < c.count + k {
                let page = try index.leaves(of: c.id, limit: k, offset: offset, filter: f)
                if page.total != c.count { p.append("\(ctag): page total \(page.total)") }
                let want = max(0, min(k, c.count - offset))
                if page.members.count != want { p.append("\(ctag): page at \(offset) of \(k) has \(page.members.count), expected \(want)") }
                paged += page.members.map(\.id)
                offset += k
            }
            if paged != order { p.append("\(ctag): pages of \(k) give \(paged.count) ids, not the list of \(order.count)") }
            let none = try index.leaves(of: c.id, limit: 0, offset: 0, filter: f)
            if !none.members.isEmpty || none.total != c.count { p.append("\(ctag): limit 0 gives \(none.members.count), total \(none.total)") }
            let past = try index.leaves(of: c.id, limit: 5, offset: c.count + 3, filter: f)
            if !past.members.isEmpty || past.total != c.count { p.append("\(ctag): offset past the end") }
        } catch {
            p.append("\(ctag): threw \(error)")
        }
    }

    // A lone report's cell can still be asked about: a cluster of fewer than minPoints.
    for _ in 0..<min(maxChecked, lone.count) {
        let m = rng.pick(lone)
        guard let r = model.reports[m.id] else { continue }
        let cell = Cell(zoom: zoom, x: r.cx[zoom], y: r.cy[zoom])
        let id = ClusterID(rawValue: g.id(x: cell.x, y: cell.y, zoom: zoom))
        let members = model.reports.values.filter { filter.matches($0.entry) && $0.cx[zoom] == cell.x && $0.cy[zoom] == cell.y }
        do {
            let c = try index.cluster(id, filter: f)
            if c.count != members.count || c.count >= g.minPoints { p.append("\(tag): lone \(m.id): cell count \(c.count) vs \(members.count)") }
            p += clusterProblems(c, zoom: zoom, cell: CellXY(x: cell.x, y: cell.y), members: members, model: model)
            let leaves = try index.leaves(of: id, limit: .max, offset: 0, filter: f)
            if leaves.members.map(\.id) != leavesOrder(members) { p.append("\(tag): lone \(m.id): leaves \(leaves.members.map(\.id))") }
        } catch {
            p.append("\(tag): lone \(m.id) threw \(error)")
        }
    }

    // A cell whose reports all fail the filter: not found.
    if filter.statuses != nil || filter.created != nil,
       let r = model.list.first(where: { r in
           !filter.matches(r.entry)
               && !model.reports.values.contains { $0.cx[zoom] == r.cx[zoom] && $0.cy[zoom] == r.cy[zoom] && filter.matches($0.entry) }
       })
    {
        let id = ClusterID(rawValue: g.id(x: r.cx[zoom], y: r.cy[zoom], zoom: zoom))
        for (name, call) in [
            ("cluster", { _ = try index.cluster(id, filter: f) }),
            ("expansionZoom", { _ = try index.expansionZoom(of: id, filter: f) }),
            ("children", { _ = try index.children(of: id, filter: f) }),
            ("leaves", { _ = try index.leaves(of: id, limit: 10, offset: 0, filter: f) }),
        ] as [(String, () throws -> Void)] {
            do {
                try call()
                p.append("\(tag): \(name) of filtered-out cell \(id) did not throw")
            } catch let error as ClusterNotFound {
                if error.id != id { p.append("\(tag): \(name) ClusterNotFound names \(error.id)") }
            } catch {
                p.append("\(tag): \(name) threw \(error), expected ClusterNotFound")
            }
        }
    }
    return p
}

@Suite("children, leaves, cluster, expansionZoom")
struct DrillDownTests {
    static let scenarios: [Scenario] = [
        Scenario(name: "uniform", n: 1500, seed: 31),
        Scenario(name: "clustered", n: 2000, clustered: true, seed: 32),
        Scenario(name: "clustered, leaves of 2", leafCapacity: 2, n: 1200, clustered: true, seed: 33),
        Scenario(name: "32-px cells", cellSize: 32, maxZoom: 18, minPoints: 3, statusCount: 3, leafCapacity: 8, n: 1200, clustered: true, seed: 34),
        Scenario(name: "256-px cells", cellSize: 256, maxZoom: 10, minPoints: 1, statusCount: 16, leafCapacity: 3, n: 1200, clustered: true, seed: 35),
        Scenario(name: "128-px cells, deepest", cellSize: 128, maxZoom: 25, minPoints: 2, statusCount: 2, leafCapacity: 4, n: 600, clustered: true, seed: 36),
        Scenario(name: "clustered, leaves of 2", leafCapacity: 2, n: 1200, clustered: true, seed: 37, loaded: true),
    ]

    @Test("drill-down equals brute force at several zooms, with and without filters", arguments: scenarios)
    func drillDown(_ scenario: Scenario) throws {
        var (index, model, rng) = try scenario.make()
        var problems: [String] = []
        let zooms = Set([0, 1, 3, 6, 10, 15, scenario.maxZoom - 1, scenario.maxZoom].filter { (0...scenario.maxZoom).contains($0) }).sorted()
        for z in zooms {
            problems += drillDownProblems(index, model, zoom: z, filter: .all, rng: &rng, maxChecked: 12)
            problems += drillDownProblems(index, model, zoom: z, filter: .random(&rng, model: model), rng: &rng, maxChecked: 8)
        }
        expectNoProblems(problems, "\(scenario)")
    }

    @Test("walking children from zoom 0 down reaches every report exactly once")
    func walk() throws {
        var rng = SplitMix64(state: 41)
        let ref = RefGrid(cellSize: 64, maxZoom: 20, minPoints: 2)
        let entries = clusteredEntries(600, &rng, statusCount: 3, maxLevel: 22)
        let index = try ClusterIndex(grid: ref.clusterGrid, statusCount: 3, entries: entries, leafCapacity: 4)
        var seen: [Int64] = []
        var stack = try index.clusters(in: .world, zoom: 0)
        var steps = 0
        while let item = stack.popLast() {
            steps += 1
            switch item {
            case .report(let m): seen.append(m.id)
            case .cluster(let c): stack += try index.children(of: c.id)
            }
        }
        #expect(seen.sorted() == entries.map(\.id).sorted())
        #expect(steps > entries.count)
    }
}

@Suite("errors")
struct ErrorTests {
    static func index() throws -> ClusterIndex {
        var rng = SplitMix64(state: 51)
        return try ClusterIndex(statusCount: 3, entries: uniformEntries(200, &rng, statusCount: 3))
    }

    @Test("a zoom outside 0...maxZoom is a ValidationError on zoom")
    func badZoom() throws {
        let index = try Self.index()
        for z in [-1, 21, 100, Int.min] {
            let error = #expect(throws: ValidationError.self, "zoom \(z)") { try index.clusters(in: .world, zoom: z) }
            #expect(error?.field == "zoom")
        }
        let grid = try ClusterGrid(cellSize: 256, maxZoom: 3)
        let small = try ClusterIndex(grid: grid, statusCount: 1, entries: [])
        #expect(throws: ValidationError.self) { try small.clusters(in: .world, zoom: 4) }
        #expect(try small.clusters(in: .world, zoom: 3).isEmpty)
    }

    @Test("leaves with a negative limit or offset")
    func badPaging() throws {
        let index = try Self.index()
        let id = ClusterGrid.standard.id(of: Cell(zoom: 0, x: 0, y: 0))
        let limit = #expect(throws: ValidationError.self) { try index.leaves(of: id, limit: -1, offset: 0) }
        #expect(limit?.field == "limit")
        let offset = #expect(throws: ValidationError.self) { try index.leaves(of: id, limit: 1, offset: -1) }
        #expect(offset?.field == "offset")
    }

    @Test("ids of no cell throw NoSuchCluster, empty cells ClusterNotFound, from every call")
    func ids() throws {
        // All reports in the eastern hemisphere's north.
        var entries: [ClusterEntry] = []
        var rng = SplitMix64(state: 52)
        for i in 0..<100 {
            entries.append(ClusterEntry(id: Int64(i), coordinate: Coordinate(longitude: rng.uniform(1, 179), latitude: rng.uniform(1, 80)), status: 0, createdAt: 0))
        }
        let index = try ClusterIndex(statusCount: 2, entries: entries)
        let grid = index.grid
        let malformed: [UInt64] = [0, 3, 1, 4, UInt64(1) << 46, .max]
        let empty = [grid.id(of: Cell(zoom: 0, x: 0, y: 3)), grid.id(of: Cell(zoom: 20, x: 5, y: 5)), grid.id(of: Cell(zoom: 5, x: 0, y: 127))]
        let occupied = grid.id(of: grid.cell(of: entries[0].coordinate, zoom: 7))
        func calls(_ id: ClusterID, _ f: ClusterFilter) -> [(String, () throws -> Void)] {
            [
                ("cluster", { _ = try index.cluster(id, filter: f) }),
                ("expansionZoom", { _ = try index.expansionZoom(of: id, filter: f) }),
                ("children", { _ = try index.children(of: id, filter: f) }),
                ("leaves", { _ = try index.leaves(of: id, limit: 3, offset: 0, filter: f) }),
            ]
        }
        for raw in malformed {
            for (name, call) in calls(ClusterID(rawValue: raw), .all) {
                #expect(throws: NoSuchCluster.self, "\(name) \(raw)") { try call() }
            }
        }
        for id in empty {
            for (name, call) in calls(id, .all) {
                #expect(throws: ClusterNotFound.self, "\(name) \(id)") { try call() }
            }
        }
        // Status 1 has no reports: the occupied cell is empty under that filter.
        for (name, call) in calls(occupied, ClusterFilter(statusNumbers: [1])) {
            #expect(throws: ClusterNotFound.self, "\(name)") { try call() }
        }
        for (name, call) in calls(occupied, .all) {
            #expect(throws: Never.self, "\(name)") { try call() }
        }
    }
}
