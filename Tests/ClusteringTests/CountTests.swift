import Clustering
import Generator
import Geometry
import Testing

@Suite("count(in:) against a brute-force filter of exact positions")
struct CountTests {
    @Test("exact for random, antimeridian, degenerate and edge-hugging boxes, with filters; only edge reports are handed over; also on an index saved and read back")
    func exactCounts() throws {
        var rng = SplitMix64(state: 77)
        var entries = clusteredEntries(1_500, &rng, statusCount: 8, maxLevel: 22)
        entries += uniformEntries(500, &rng, statusCount: 8, firstID: 10_000)
        // Reports exactly on edges the boxes below use.
        entries += (0..<40).map { i in
            ClusterEntry(id: 20_000 + Int64(i), coordinate: Coordinate(longitude: [30.5, 180, -180, 10][i % 4], latitude: [50.45, 0, -85.05112878, 85.05112878][i % 4]),
                         status: i % 8, createdAt: randomCreated(&rng))
        }
        let byID = Dictionary(uniqueKeysWithValues: entries.map { ($0.id, $0) })
        let model = Model(grid: RefGrid(cellSize: 64, maxZoom: 20, minPoints: 2), statusCount: 8, entries: entries)
        for (leaf, loaded) in [(3, false), (64, false), (3, true)] {
            let built = try ClusterIndex(statusCount: 8, entries: entries, leafCapacity: leaf)
            let index = loaded ? try savedAndLoaded(built) : built
            var boxes: [BoundingBox] = [.world,
                try BoundingBox(west: 30.5, south: 50.45, east: 30.6, north: 50.5),   // edges through reports
                try BoundingBox(west: 170, south: -90, east: -170, north: 90),        // across the antimeridian
                try BoundingBox(west: 180, south: -10, east: 180, north: 10),         // a line on 180
                try BoundingBox(west: -180, south: -85.05112878, east: 180, north: -85.05112878),
                try BoundingBox(west: 30.5, south: 50.45, east: 30.5, north: 50.45)]  // a point
            for _ in 0..<60 {
                let w = Double(rng.next() % 36_000) / 100 - 180, e = Double(rng.next() % 36_000) / 100 - 180
                let s = Double(rng.next() % 18_000) / 100 - 90, n = s + Double(rng.next() % 3_000) / 100
                boxes.append(try BoundingBox(west: w, south: s, east: e, north: min(n, 90)))
                let c = entries[Int(rng.next() % UInt64(entries.count))].coordinate
                boxes.append(try BoundingBox(west: c.longitude, south: max(c.latitude - 0.01, -90), east: min(c.longitude + 0.01, 180), north: c.latitude))
            }
            for (k, box) in boxes.enumerated() {
                let filter = k % 3 == 0 ? RefFilter.all : RefFilter.random(&rng, model: model)
                let expected = entries.filter { box.contains($0.coordinate) && filter.matches($0) }.count
                let (certain, handedOver) = index.count(in: box, filter: filter.clusterFilter)
                let confirmed = handedOver.count
                let counted = certain + handedOver.filter { box.contains(byID[$0]!.coordinate) }.count
                #expect(counted == expected, "box \(box), \(filter), leaf capacity \(leaf)")
                // Only reports within a centimetre (two fixed-point units) of an edge are handed over.
                let unit = 2 / 4_294_967_296.0
                let nearEdge = entries.filter { e in
                    let x = mercX(e.coordinate.longitude), y = mercY(e.coordinate.latitude)
                    let xs = box.parts.flatMap { [mercX($0.west), mercX($0.east)] }, ys = [mercY(box.north), mercY(box.south)]
                    return xs.contains { abs($0 - x) < unit } || ys.contains { abs($0 - y) < unit }
                }.count
                #expect(confirmed <= nearEdge, "box \(box): \(confirmed) reports handed over to confirm, \(nearEdge) near an edge")
            }
        }
    }
}
