@testable import Clustering
import Foundation
import Generator
import Geometry
import Testing
import TestSupport

@Suite("Nearest reports against a brute-force ranking")
struct NearestTests {
    /// The reports a brute force ranks nearest: by squared fixed-point distance, then id,
    /// within the same radius in fixed-point units the index uses.
    static func bruteForce(_ entries: [ClusterEntry], to c: Coordinate, metres: Double, statuses: Set<Int>?, limit: Int) -> [Int64] {
        let p = FixedPoint(c)
        let cosLat = max(1e-9, cos(c.latitude * .pi / 180))
        let units = metres / (2 * .pi * Coordinate.earthRadius * cosLat) * FixedPoint.scale * 1.01 + 2
        let ranked = entries.compactMap { e -> (Double, Int64)? in
            guard statuses?.contains(e.status) ?? true else { return nil }
            let q = FixedPoint(e.coordinate)
            let dx = Double(q.x) - Double(p.x), dy = Double(q.y) - Double(p.y)
            let d = dx * dx + dy * dy
            return d <= units * units ? (d, e.id) : nil
        }
        return ranked.sorted { $0 < $1 }.prefix(limit).map(\.1)
    }

    @Test("the k nearest matching reports within a radius, on uniform and clustered data, with and without a status filter, after writes and a save and read back")
    func againstBruteForce() throws {
        var rng = SplitMix64(state: 404)
        var entries = clusteredEntries(6_000, &rng, statusCount: 8, maxLevel: 18) + uniformEntries(2_000, &rng, statusCount: 8, firstID: 10_000)
        // A dense spot: 500 reports within a few metres, most of them closed.
        entries += (0..<500).map { i in
            ClusterEntry(
                id: 20_000 + Int64(i), coordinate: Coordinate(longitude: 30.52 + rng.uniform(-3e-5, 3e-5), latitude: 50.45 + rng.uniform(-2e-5, 2e-5)),
                status: i % 25 == 0 ? 1 : 5, createdAt: 0)
        }
        // Saved and read back after the writes, as a restart would.
        let built = try ClusterIndex(statusCount: 8, entries: entries)
        let removed = Set(entries.map(\.id).shuffled(using: &rng).prefix(300))
        try built.apply(removed.map { .remove(id: $0) })
        let loaded = try savedAndLoaded(built)
        entries.removeAll { removed.contains($0.id) }
        var queries = (0..<300).map { _ in entries[rng.below(entries.count)].coordinate }
        queries += (0..<50).map { _ in Coordinate(longitude: 30.52 + rng.uniform(-1e-4, 1e-4), latitude: 50.45 + rng.uniform(-1e-4, 1e-4)) }
        for (n, c) in queries.enumerated() {
            let metres = [5.0, 50, 500, 5_000][n % 4]
            let statuses: Set<Int>? = n % 3 == 0 ? nil : [0, 1, 2]
            let limit = [1, 5, 20][n % 3]
            let filter = statuses.map { ClusterFilter(statusNumbers: Array($0)) } ?? .all
            let expected = Self.bruteForce(entries, to: c, metres: metres, statuses: statuses, limit: limit)
            for (name, index) in [("built", built), ("saved and read back", loaded)] {
                let found = index.nearest(to: c, within: metres, filter: filter, limit: limit).map(\.id)
                #expect(found == expected, "\(name): query \(n) at \(c), \(metres) m")
            }
        }
        #expect(loaded.nearest(to: Coordinate(longitude: 30.52, latitude: 50.45), within: 50, limit: 0).isEmpty)
    }
}
