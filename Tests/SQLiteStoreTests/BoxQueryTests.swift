import Foundation
import GRDB
import Generator
import Geometry
import ReportModel
@testable import SQLiteStore
import StorePorts
import Testing
import TestSupport

@Suite("Box queries against a brute-force filter")
struct BoxQueryTests {
    /// Boxes of every kind: random, antimeridian-crossing, cutting exactly through stored
    /// positions, degenerate (a point or a line), empty, the world.
    static func boxes(through reports: [Report], using rng: inout SplitMix64) -> [BoundingBox] {
        var boxes: [BoundingBox] = [.world]
        for _ in 0..<60 {
            var lons = [Double.random(in: -180...180, using: &rng), .random(in: -180...180, using: &rng)].sorted()
            let lats = [Double.random(in: -90...90, using: &rng), .random(in: -90...90, using: &rng)].sorted()
            if Bool.random(using: &rng) { lons.reverse() }  // west > east: across the antimeridian
            boxes.append(try! BoundingBox(west: lons[0], south: lats[0], east: lons[1], north: lats[1]))
        }
        for _ in 0..<60 {
            // Edges exactly on stored coordinates.
            let a = reports.randomElement(using: &rng)!.coordinate, b = reports.randomElement(using: &rng)!.coordinate
            boxes.append(try! BoundingBox(west: min(a.longitude, b.longitude), south: min(a.latitude, b.latitude),
                                          east: max(a.longitude, b.longitude), north: max(a.latitude, b.latitude)))
            boxes.append(try! BoundingBox(west: a.longitude, south: a.latitude, east: a.longitude, north: a.latitude))
            // Edges one ulp inside a point: the point must drop out although the float box still covers it.
            if a.longitude < 179 {
                boxes.append(try! BoundingBox(west: a.longitude.nextUp, south: a.latitude, east: a.longitude + 1, north: a.latitude))
            }
        }
        boxes.append(try! BoundingBox(west: 170, south: -10, east: -170, north: 10))
        boxes.append(try! BoundingBox(west: 180, south: -90, east: -180, north: 90))
        boxes.append(try! BoundingBox(west: 0.1, south: -89.9, east: 0.1000001, north: -89.8))  // empty
        return boxes
    }

    @Test("every box returns exactly the reports inside it, edges included", arguments: [false, true])
    func exactBoxes(bulk: Bool) throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: bulk ? 11 : 12)
        let drafts = Drafts.positions(1_500, using: &rng).map { Drafts.make($0, using: &rng) }
        if bulk {
            let summary = try fixture.store.importDrafts(drafts)   // packed R*Tree
            #expect(summary.rebuiltIndexes)
            #expect(summary.ids.isEmpty)  // a bulk load keeps no list of ids
        } else {
            for chunk in stride(from: 0, to: drafts.count, by: 100) {  // row-by-row R*Tree through triggers
                try fixture.store.insert(Array(drafts[chunk..<min(chunk + 100, drafts.count)]))
            }
        }
        #expect(try fixture.store.checkIndexes() == "ok")
        let all = try fixture.store.all()
        #expect(all.count == 1_500)
        for box in Self.boxes(through: all, using: &rng) {
            let expected = all.filter { box.contains($0.coordinate) }
            // Whole reports, in storage order: by key (zoom-16 cell, then id).
            let stored = expected.sorted { ReportRow.key($0.coordinate, id: $0.id) < ReportRow.key($1.coordinate, id: $1.id) }
            #expect(try fixture.store.reports(in: box) == stored, "box \(box)")
            #expect(try fixture.store.count(in: box) == expected.count, "box \(box)")
        }
    }

    @Test("rows made into reports on two threads come out whole and in order, whatever the batch size", arguments: [1, 7, 64, 5_000])
    func pipelinedDecoding(batchSize: Int) throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 13)
        try fixture.store.importDrafts(Drafts.positions(600, using: &rng).map { Drafts.make($0, using: &rng) })
        let all = try fixture.store.all()
        for box in [BoundingBox.world, try BoundingBox(west: 170, south: -60, east: -100, north: 60)] {
            let stored = all.filter { box.contains($0.coordinate) }
                .sorted { ReportRow.key($0.coordinate, id: $0.id) < ReportRow.key($1.coordinate, id: $1.id) }
            #expect(try fixture.store.pool.read { try SQLiteReports.scan($0, in: box, batchSize: batchSize) } == stored)
        }
    }

    @Test("paging through a box returns every report once, in id order, under every plan",
          arguments: [(5, 0.0), (5, 1e9), (3, 1.0), (100_000, 1.0)])
    func paging(sample: Int, rtreeCost: Double) throws {
        let fixture = try TemporaryStore(tuning: QueryTuning(boxSample: sample, rtreeToWalkCost: rtreeCost))
        var rng = SplitMix64(state: 3)
        let drafts = Drafts.positions(800, using: &rng).map { Drafts.make($0, using: &rng) }
        try fixture.store.importDrafts(drafts)
        let all = try fixture.store.all()
        for box in Self.boxes(through: all, using: &rng).prefix(40) {
            let expected = all.filter { box.contains($0.coordinate) }.map(\.id)
            var seen: [Int64] = []
            var cursor: Int64? = nil
            while true {
                let page = try fixture.store.page(in: box, after: cursor, limit: 7)
                seen += page.map(\.id)
                guard page.count == 7 else { break }
                cursor = page.last!.id
            }
            #expect(seen == expected, "box \(box)")
        }
    }

    @Test("a page stays correct when reports are added before the cursor")
    func pagingUnderInserts() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 4)
        let box = try BoundingBox(parsing: "30,50,31,51")
        try fixture.store.importDrafts((0..<30).map { _ in Drafts.make(Coordinate(longitude: 30.5, latitude: 50.5), using: &rng) })
        let first = try fixture.store.page(in: box, limit: 10)
        try fixture.store.insert(Drafts.make(Coordinate(longitude: 30.6, latitude: 50.6), using: &rng))
        let second = try fixture.store.page(in: box, after: first.last!.id, limit: 100)
        #expect(Set(first.map(\.id)).isDisjoint(with: second.map(\.id)))
        #expect(first.count + second.count == 31)
    }
}

@Suite("Cells of storage keys")
struct CellCoverTests {
    @Test("a report's cell never says inside or outside wrongly, poles and antimeridian included")
    func sound() throws {
        var rng = SplitMix64(state: 41)
        let positions = Drafts.positions(3_000, using: &rng)
        var boxes: [BoundingBox] = []
        for _ in 0..<300 {
            let lons = [Double.random(in: -180...180, using: &rng), .random(in: -180...180, using: &rng)]
            let lats = [Double.random(in: -90...90, using: &rng), .random(in: -90...90, using: &rng)].sorted()
            let scale = [1.0, 0.01, 0.0001].randomElement(using: &rng)!
            let west = lons[0], east = min(180, lons[0] + abs(lons[1] - lons[0]) * scale)
            let south = lats[0], north = min(90, lats[0] + (lats[1] - lats[0]) * scale)
            boxes.append(try BoundingBox(west: west, south: south, east: east, north: north))
        }
        boxes.append(try BoundingBox(west: 170, south: 80, east: -170, north: 90))
        for box in boxes {
            let cover = box.parts.map { CellCover($0) }
            for (i, c) in positions.enumerated() {
                let place = cover.map { $0.place(ReportRow.key(c, id: Int64(i + 1))) }.max()!
                if place == .inside { #expect(box.contains(c), "\(c) in \(box)") }
                if place == .outside { #expect(!box.contains(c), "\(c) in \(box)") }
            }
        }
    }

    @Test("a rectangle's code ranges ascend and hold its cells, and beyond them only cells near its rim")
    func codeRanges() {
        var rng = SplitMix64(state: 42)
        let zoom = 8, side = UInt32(1) << zoom
        for _ in 0..<200 {
            let xs = [UInt32.random(in: 0..<side, using: &rng), .random(in: 0..<side, using: &rng)].sorted()
            let ys = [UInt32.random(in: 0..<side, using: &rng), .random(in: 0..<side, using: &rng)].sorted()
            let cover = CellCover(x: xs[0]...xs[1], y: ys[0]...ys[1])
            let ranges = cover.codeRanges(zoom: zoom)
            let codes = ranges.flatMap { Array($0) }
            #expect(zip(codes, codes.dropFirst()).allSatisfy { $0 < $1 })
            let inside = Set((0..<UInt64(side * side)).filter { code in
                let cell = Morton.cell(code)
                return cover.x.contains(cell.x) && cover.y.contains(cell.y)
            })
            #expect(inside.isSubset(of: codes), "\(cover.x) × \(cover.y)")
            // Beyond the rectangle: less than 1/16 of its longer side away (squares of at most 1/32).
            let span = max(cover.x.count, cover.y.count)
            let reach = UInt32(span / 16)
            for code in codes where !inside.contains(code) {
                let cell = Morton.cell(code)
                let dx = cell.x < cover.x.lowerBound ? cover.x.lowerBound - cell.x : cell.x > cover.x.upperBound ? cell.x - cover.x.upperBound : 0
                let dy = cell.y < cover.y.lowerBound ? cover.y.lowerBound - cell.y : cell.y > cover.y.upperBound ? cell.y - cover.y.upperBound : 0
                #expect(max(dx, dy) < max(reach, 1), "\(cell) for \(cover.x) × \(cover.y)")
            }
            if span < 2 * CellCover.rimSquares { #expect(codes.count == inside.count) }
            #expect(ranges.count <= 64 * CellCover.rimSquares)
        }
    }

    @Test("key ranges cover every stored report of a box once, across the antimeridian too")
    func keyRanges() throws {
        var rng = SplitMix64(state: 43)
        let positions = Drafts.positions(1_000, using: &rng)
        let reports = positions.enumerated().map { i, c in
            Report(id: Int64(i + 1), coordinate: c, address: "a", city: "c", district: "d", objectType: "o", balanceHolder: "b",
                   violator: nil, phones: [], comment: nil, status: "new", createdAt: Date(), updatedAt: Date())
        }
        var boxes = BoxQueryTests.boxes(through: reports, using: &rng)
        boxes.append(try BoundingBox(west: 10.000001, south: -90, east: 10, north: 90))  // nearly the world, one shared column
        for box in boxes {
            let ranges = CellCover.keyRanges(box.parts.map { CellCover($0, margin: CellCover.margin) })
            #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound }, "box \(box)")
            for (i, c) in positions.enumerated() where box.contains(c) {
                let key = ReportRow.key(c, id: Int64(i + 1))
                // The first range not wholly below the key (they ascend) must hold it.
                var low = 0, high = ranges.count
                while low < high {
                    let middle = (low + high) / 2
                    if ranges[middle].upperBound < key { low = middle + 1 } else { high = middle }
                }
                #expect(low < ranges.count && ranges[low].contains(key), "\(c) in \(box)")
            }
        }
    }
}

@Suite("The packed R*Tree")
struct PackedRTreeTests {
    /// Every report's leaf, by storage key.
    static func leaves(_ store: SQLiteReports) throws -> [Int64: Int64] {
        try store.pool.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT rowid, nodeno FROM report_rtree_rowid").map { ($0[0], $0[1]) })
        }
    }

    @Test("an import leaves room in its nodes: reports filed after it split none, and none of the imported moves")
    func roomAfterImport() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 21)
        try fixture.store.importDrafts(Drafts.positions(1_500, using: &rng).map { Drafts.make($0, using: &rng) })
        let imported = try Self.leaves(fixture.store)
        let nodes = try fixture.store.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM report_rtree_node") ?? 0 }
        // 51 entries fit a node; 35 are packed into one (70%).
        #expect(nodes >= 1_500 / 35)
        try fixture.store.insert(Drafts.positions(40, using: &rng).map { Drafts.make($0, using: &rng) })
        let after = try Self.leaves(fixture.store)
        #expect(after.count == 1_540)
        #expect(imported.filter { after[$0.key] != $0.value }.count == 0, "imported reports moved to another leaf")
        #expect(try fixture.store.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM report_rtree_node") } == nodes)
        #expect(try fixture.store.checkIndexes() == "ok")
    }
}
