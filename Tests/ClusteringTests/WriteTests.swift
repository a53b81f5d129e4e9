import Clustering
import Foundation
import Generator
import Geometry
import Testing
import TestSupport

/// Random writes, mirrored in the model.
struct WriteDriver {
    var rng: SplitMix64
    var model: Model
    var index: ClusterIndex
    var deleted: [Int64] = []
    var nextID: Int64 = 1_000_000
    var problems: [String] = []

    mutating func newCoordinate(near: Coordinate?) -> Coordinate {
        let roll = rng.unit()
        if let near, roll < 0.35 {
            // The same spot, or a tiny step away (same cell, same leaf, maybe the next cell).
            if roll < 0.15 { return near }
            let eps = rng.pick([1e-9, 1e-7, 1e-5, 1e-3])
            return Coordinate(
                longitude: min(max(near.longitude + rng.uniform(-eps, eps), -180), 180),
                latitude: min(max(near.latitude + rng.uniform(-eps, eps), -90), 90))
        }
        if roll < 0.45 { return specialCoordinate(&rng) }
        if roll < 0.55 { return boundaryCoordinate(&rng, maxLevel: model.grid.maxZoom + model.grid.shift) }
        if roll < 0.75 {
            let centre = rng.pick(clusterCentres)
            let spread = rng.pick([1.0, 1e-3, 1e-6])
            let (dx, dy) = rng.normalPair()
            return Coordinate(
                longitude: min(max(centre.longitude + dx * spread, -180), 180),
                latitude: min(max(centre.latitude + dy * spread, -90), 90))
        }
        return Coordinate(longitude: rng.uniform(-180, 180), latitude: rng.uniform(-90, 90))
    }

    mutating func randomExisting() -> RefReport? { model.randomReport(&rng) }

    mutating func entry(id: Int64, at c: Coordinate) -> ClusterEntry {
        ClusterEntry(id: id, coordinate: c, status: rng.int(0..<model.statusCount), createdAt: randomCreated(&rng))
    }

    /// One random change (not yet applied).
    mutating func randomChange() -> ClusterIndex.Change {
        let roll = rng.unit()
        if roll < 0.3 || model.reports.isEmpty {  // insert a new id
            nextID += Int64(rng.int(1...3))
            let id = rng.chance(0.05) ? Int64(UInt32.max) - Int64(rng.int(0..<5)) : nextID
            return .upsert(entry(id: id, at: newCoordinate(near: randomExisting()?.entry.coordinate)))
        } else if roll < 0.5 {  // move
            let r = randomExisting()!
            var e = r.entry
            e.coordinate = newCoordinate(near: rng.chance(0.5) ? r.entry.coordinate : randomExisting()?.entry.coordinate)
            return .upsert(e)
        } else if roll < 0.62 {  // status or time change in place
            var e = randomExisting()!.entry
            if rng.chance(0.7) { e.status = rng.int(0..<model.statusCount) } else { e.createdAt = randomCreated(&rng) }
            return .upsert(e)
        } else if roll < 0.9 {  // delete
            let id = randomExisting()!.id
            deleted.append(id)
            return .remove(id: id)
        } else if roll < 0.96, !deleted.isEmpty {  // re-insert a deleted id
            let id = deleted.remove(at: rng.int(0..<deleted.count))
            return .upsert(entry(id: id, at: newCoordinate(near: randomExisting()?.entry.coordinate)))
        } else {  // remove an id that is not there
            return .remove(id: rng.chance(0.5) ? -7 : 999_999_999)
        }
    }

    /// One step: a single call, or a batch through apply.
    mutating func step() throws {
        switch rng.int(0..<5) {
        case 0:
            var changes: [ClusterIndex.Change] = []
            for _ in 0..<rng.int(1...8) {
                let c = randomChange()
                changes.append(c)
                // Sometimes the same id twice in one batch, or removed and put back.
                if rng.chance(0.15), case .upsert(var e) = c {
                    changes.append(.remove(id: e.id))
                    e.coordinate = newCoordinate(near: e.coordinate)
                    changes.append(.upsert(e))
                }
            }
            try index.apply(changes)
            model.apply(changes)
        default:
            switch randomChange() {
            case .upsert(let e):
                try index.upsert(e)
                model.upsert(e)
            case .remove(let id):
                let was = model.remove(id)
                let got = index.remove(id: id)
                if got != was { problems.append("remove(id: \(id)) returned \(got), expected \(was)") }
            }
        }
    }

    mutating func check(zooms: [Int], boxesPerZoom: Int) {
        if index.count != model.reports.count { problems.append("count \(index.count), expected \(model.reports.count)") }
        for z in zooms {
            problems += checkQuery(index, model, box: .world, zoom: z, filter: .all)
            for box in boxes(&rng, zoom: z, model: model, random: boxesPerZoom).suffix(boxesPerZoom) {
                problems += checkQuery(index, model, box: box, zoom: z, filter: .random(&rng, model: model))
            }
        }
    }
}

@Suite("writes against brute force")
struct WriteTests {
    /// (leafCapacity, cellSize, maxZoom): small leaves split and merge all the time; the
    /// last grid is one level deep, so its root leaf never splits.
    static let writeConfigs: [(Int, Int, Int)] = [(2, 64, 20), (3, 64, 20), (4, 32, 18), (8, 128, 25), (64, 64, 20), (2, 256, 0)]

    @Test("random inserts, moves, status changes and deletes, the index saved and read back halfway", arguments: writeConfigs)
    func randomWrites(leafCapacity: Int, cellSize: Int, maxZoom: Int) throws {
        var rng = SplitMix64(state: 61 &+ UInt64(leafCapacity) &* 1000 &+ UInt64(cellSize))
        let ref = RefGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: 2)
        let initial = clusteredEntries(300, &rng, statusCount: 4, maxLevel: maxZoom + ref.shift)
        let index = try ClusterIndex(grid: ref.clusterGrid, statusCount: 4, entries: initial, leafCapacity: leafCapacity)
        var d = WriteDriver(rng: rng, model: Model(grid: ref, statusCount: 4, entries: initial), index: index)
        for step in 1...450 {
            // Halfway, a restart: the index saved and read back takes the rest of the writes.
            if step == 225 { d.index = try savedAndLoaded(d.index) }
            try d.step()
            if step % 8 == 0 {
                let zooms = [0, d.rng.int(0...maxZoom), d.rng.int(0...maxZoom), d.rng.int(maxZoom / 2...maxZoom), maxZoom]
                d.check(zooms: Set(zooms).sorted(), boxesPerZoom: 1)
            }
            if !d.problems.isEmpty { break }
        }
        expectNoProblems(d.problems, "after random writes")
        d.problems = []
        // Everything, at every zoom, and the drill-down paths.
        d.check(zooms: Array(0...maxZoom), boxesPerZoom: 2)
        for z in Set([0, maxZoom / 3, 2 * maxZoom / 3, maxZoom]).sorted() {
            d.problems += drillDownProblems(d.index, d.model, zoom: z, filter: .all, rng: &d.rng, maxChecked: 6)
            d.problems += drillDownProblems(d.index, d.model, zoom: z, filter: .random(&d.rng, model: d.model), rng: &d.rng, maxChecked: 4)
        }
        expectNoProblems(d.problems, "final state")
    }

    @Test("shrinking to nothing and growing back", arguments: [2, 5, 64])
    func emptyAndRefill(leafCapacity: Int) throws {
        var rng = SplitMix64(state: 71 &+ UInt64(leafCapacity))
        let ref = RefGrid(cellSize: 128, maxZoom: 16, minPoints: 2)
        let initial = clusteredEntries(400, &rng, statusCount: 3, maxLevel: 17)
        let index = try ClusterIndex(grid: ref.clusterGrid, statusCount: 3, entries: initial, leafCapacity: leafCapacity)
        var model = Model(grid: ref, statusCount: 3, entries: initial)
        var problems: [String] = []
        var order = initial.map(\.id)
        for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, rng.int(0...i)) }
        for (k, id) in order.enumerated() {
            #expect(index.remove(id: id))
            model.remove(id)
            if k % 40 == 0 || order.count - k < 5 {
                for z in [0, 5, 16] { problems += checkQuery(index, model, box: .world, zoom: z, filter: .all) }
            }
        }
        #expect(index.count == 0)
        #expect(try index.clusters(in: .world, zoom: 0).isEmpty)
        #expect(!index.remove(id: order[0]))
        // Grow back by single upserts in a new order, at the old places and new ones.
        for e in initial.shuffled(using: &rng) {
            var e = e
            if rng.chance(0.3) { e.coordinate = specialCoordinate(&rng) }
            try index.upsert(e)
            model.upsert(e)
        }
        for z in 0...16 {
            problems += checkQuery(index, model, box: .world, zoom: z, filter: .all)
            problems += checkQuery(index, model, box: .world, zoom: z, filter: .random(&rng, model: model))
        }
        expectNoProblems(problems, "shrink and refill")
    }

    @Test("an index built by inserts answers exactly like one built in bulk", arguments: [3, 64])
    func incrementalEqualsBulk(leafCapacity: Int) throws {
        var rng = SplitMix64(state: 81)
        let grid = try ClusterGrid(cellSize: 64, maxZoom: 20, minPoints: 2)
        let entries = clusteredEntries(1000, &rng, statusCount: 4, maxLevel: 22)
        let bulk = try ClusterIndex(grid: grid, statusCount: 4, entries: entries, leafCapacity: leafCapacity)
        let incremental = try ClusterIndex(grid: grid, statusCount: 4, entries: [], leafCapacity: leafCapacity)
        for e in entries.shuffled(using: &rng) { try incremental.upsert(e) }
        // Extra reports that come and go again, moving bounds and splitting leaves on the way.
        let extra = clusteredEntries(300, &rng, statusCount: 4, maxLevel: 22, firstID: 50_000)
        try incremental.apply(extra.map { .upsert($0) })
        for e in extra.shuffled(using: &rng) { incremental.remove(id: e.id) }
        #expect(incremental.count == bulk.count)
        for z in 0...20 {
            for f in [ClusterFilter.all, ClusterFilter(statusNumbers: [1, 2]), ClusterFilter(created: 1_600_000_000_000...1_610_000_000_000)] {
                let a = try bulk.clusters(in: .world, zoom: z, filter: f)
                let b = try incremental.clusters(in: .world, zoom: z, filter: f)
                #expect(a == b, "z\(z) \(f)")
            }
        }
    }

    @Test("invalid entries throw ValidationError and change nothing")
    func invalidWrites() throws {
        var rng = SplitMix64(state: 91)
        let entries = uniformEntries(300, &rng, statusCount: 4)
        let index = try ClusterIndex(statusCount: 4, entries: entries, leafCapacity: 4)
        func snapshot() throws -> [[ClusterItem]] { try [0, 6, 20].map { try index.clusters(in: .world, zoom: $0) } }
        let before = try snapshot()
        let good = ClusterEntry(id: 5, coordinate: Coordinate(longitude: 1, latitude: 2), status: 1, createdAt: 0)
        let bad: [(ClusterEntry, String)] = [
            (ClusterEntry(id: -1, coordinate: good.coordinate, status: 0, createdAt: 0), "id"),
            (ClusterEntry(id: Int64(UInt32.max) + 1, coordinate: good.coordinate, status: 0, createdAt: 0), "id"),
            (ClusterEntry(id: 7, coordinate: good.coordinate, status: 4, createdAt: 0), "status"),
            (ClusterEntry(id: 7, coordinate: good.coordinate, status: -1, createdAt: 0), "status"),
            (ClusterEntry(id: 7, coordinate: Coordinate(longitude: .nan, latitude: 0), status: 0, createdAt: 0), "longitude"),
            (ClusterEntry(id: 7, coordinate: Coordinate(longitude: 0, latitude: .nan), status: 0, createdAt: 0), "latitude"),
            (ClusterEntry(id: 7, coordinate: Coordinate(longitude: 180.0001, latitude: 0), status: 0, createdAt: 0), "longitude"),
            (ClusterEntry(id: 7, coordinate: Coordinate(longitude: 0, latitude: -90.5), status: 0, createdAt: 0), "latitude"),
            (ClusterEntry(id: 7, coordinate: Coordinate(longitude: .infinity, latitude: 0), status: 0, createdAt: 0), "longitude"),
        ]
        for (entry, field) in bad {
            let e1 = #expect(throws: ValidationError.self) { try index.upsert(entry) }
            #expect(e1?.field == field, "\(entry)")
            // A valid change before the invalid one is not applied either.
            let e2 = #expect(throws: ValidationError.self) { try index.apply([.upsert(good), .remove(id: 3), .upsert(entry)]) }
            #expect(e2?.field == field)
            #expect(index.count == entries.count)
            #expect(try snapshot() == before)
            let e3 = #expect(throws: ValidationError.self) { try ClusterIndex(statusCount: 4, entries: [good, entry]) }
            #expect(e3?.field == field)
        }
        #expect(!index.remove(id: -1) && !index.remove(id: Int64(UInt32.max) + 1) && !index.remove(id: 1_000_000))
        try index.apply([.remove(id: -1)])
        #expect(try snapshot() == before)

        // Init: repeated ids, status counts and leaf capacities.
        let dup = #expect(throws: ValidationError.self) { try ClusterIndex(statusCount: 4, entries: [good, entries[0], good]) }
        #expect(dup?.field == "id")
        for count in [0, 17] { #expect(throws: ValidationError.self) { try ClusterIndex(statusCount: count, entries: []) } }
        for capacity in [0, 1, 4097] { #expect(throws: ValidationError.self) { try ClusterIndex(statusCount: 2, entries: [], leafCapacity: capacity) } }
        // The largest id and 16 statuses are fine.
        let top = try ClusterIndex(statusCount: 16, entries: [ClusterEntry(id: Int64(UInt32.max), coordinate: good.coordinate, status: 15, createdAt: .max)])
        #expect(top.count == 1)
        let items = try top.clusters(in: .world, zoom: 20)
        #expect(items.count == 1)
        if case .report(let m)? = items.first { #expect(m.id == Int64(UInt32.max) && m.status == 15 && m.createdAt == .max) }
    }
}

/// A flag the writer raises when done (readers poll it).
final class DoneFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

@Suite("concurrency")
struct ConcurrencyTests {
    @Test("readers never see half of a batch")
    func noTornReads() async throws {
        var rng = SplitMix64(state: 101)
        let entries = clusteredEntries(2000, &rng, statusCount: 4, maxLevel: 22)
        let index = try ClusterIndex(statusCount: 4, entries: entries, leafCapacity: 8)
        let total = entries.count
        let done = DoneFlag()
        // Batches prepared up front: remove k reports, then put them back somewhere else,
        // so every state inside a batch has fewer than `total` reports.
        var batches: [[ClusterIndex.Change]] = []
        for _ in 0..<200 {
            let moved = (0..<rng.int(5...25)).map { _ in entries[rng.int(0..<entries.count)] }
            let ids = Array(Set(moved.map(\.id)))
            var changes = ids.map { ClusterIndex.Change.remove(id: $0) }
            for id in ids {
                let coordinate = rng.chance(0.5)
                    ? Coordinate(longitude: rng.uniform(-180, 180), latitude: rng.uniform(-90, 90))
                    : specialCoordinate(&rng)
                changes.append(.upsert(ClusterEntry(id: id, coordinate: coordinate, status: rng.int(0..<4), createdAt: randomCreated(&rng))))
            }
            batches.append(changes)
        }
        let plan = batches
        let results = try await withThrowingTaskGroup(of: (bad: Int, reads: Int).self) { group in
            group.addTask {
                for batch in plan {
                    try index.apply(batch)
                    await Task.yield()
                }
                done.set()
                return (0, 0)
            }
            for _ in 0..<3 {
                group.addTask {
                    var bad = 0, reads = 0
                    while !done.isSet || reads < 10 {
                        for z in [0, 3] {
                            let items = try index.clusters(in: .world, zoom: z)
                            let statusSum = items.reduce(0) {
                                if case .cluster(let c) = $1 { return $0 + c.statusCounts.reduce(0, +) }
                                return $0 + 1
                            }
                            if reportCount(items) != total || statusSum != total { bad += 1 }
                            reads += 1
                        }
                        if index.count != total { bad += 1 }
                        await Task.yield()
                    }
                    return (bad, reads)
                }
            }
            var all: [(bad: Int, reads: Int)] = []
            for try await r in group { all.append(r) }
            return all
        }
        #expect(results.reduce(0) { $0 + $1.bad } == 0)
        #expect(results.reduce(0) { $0 + $1.reads } >= 60)
        #expect(index.count == total)
        #expect(reportCount(try index.clusters(in: .world, zoom: 0)) == total)
    }
}

@Suite("frozen copies")
struct FrozenCopyTests {
    @Test("a frozen copy answers as the index did when it was taken, while the index takes writes; saved, it reads back the same")
    func copyKeepsItsState() throws {
        var rng = SplitMix64(state: 95)
        let ref = RefGrid(cellSize: 64, maxZoom: 20, minPoints: 2)
        let entries = clusteredEntries(800, &rng, statusCount: 4, maxLevel: 22)
        let index = try ClusterIndex(grid: ref.clusterGrid, statusCount: 4, entries: entries, leafCapacity: 4)
        let copy = index.frozenCopy()
        // The index moves on: half its reports removed, as many new ones added.
        try index.apply(entries.prefix(400).map { .remove(id: $0.id) })
        try index.apply(clusteredEntries(400, &rng, statusCount: 4, maxLevel: 22, firstID: 50_000).map { .upsert($0) })
        let model = Model(grid: ref, statusCount: 4, entries: entries)
        var problems: [String] = []
        for candidate in [copy, try savedAndLoaded(copy)] {
            for z in [0, 5, 10, 15, 20] {
                problems += checkQuery(candidate, model, box: .world, zoom: z, filter: .all)
                problems += checkQuery(candidate, model, box: .world, zoom: z, filter: .random(&rng, model: model))
            }
        }
        expectNoProblems(problems, "the copy")
        #expect(copy.count == 800 && index.count == 800)
    }
}
