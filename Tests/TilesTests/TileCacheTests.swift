import Clustering
import Foundation
import Generator
import Geometry
import Testing

@testable import Tiles

/// The tile cache: bounded in bytes, least recently used out first, and after any write
/// never stale while every tile the write could not change stays cached.
@Suite("Tile cache")
struct TileCacheTests {
    /// A string tag: the bytes' count and sum, enough to tell the test's tiles apart.
    static let tag: @Sendable ([UInt8]) -> String = { "\"\($0.count)-\($0.reduce(0) { $0 &+ Int($1) })\"" }

    /// Reports scattered over a few zoom-12 tiles around Kyiv, with two statuses and two creation times.
    static func entries(_ count: Int, seed: UInt64) -> [ClusterEntry] {
        var random = SplitMix64(state: seed)
        return (0..<count).map { i in
            // Tiles 2393...2396 × 1384...1387 at zoom 12, with some on tile and cell edges.
            let px = 2393 * 256 + Double(random.next() % (4 * 256)) + (i % 7 == 0 ? 0 : random.unit())
            let py = 1384 * 256 + Double(random.next() % (4 * 256)) + (i % 5 == 0 ? 0 : random.unit())
            return entry(id: Int64(i + 1), px: px, py: py, status: Int(random.next() % 2), createdAt: Int64(random.next() % 2) * 1000)
        }
    }

    static func entry(id: Int64, px: Double, py: Double, status: Int = 0, createdAt: Int64 = 0, zoom: Int = 12) -> ClusterEntry {
        let world = 256 * pow(2, Double(zoom))
        return ClusterEntry(
            id: id, coordinate: Coordinate(longitude: WebMercator.longitude(x: px / world), latitude: WebMercator.latitude(y: py / world)),
            status: status, createdAt: createdAt)
    }

    /// Every tile over the data's area at zooms 10 to 13 (and a ring of neighbours), for
    /// two filters, and at scale 2 up to zoom 11.
    static func keys() throws -> [TileCache.Key] {
        let filters = [ClusterFilter(statusNumbers: [1]), ClusterFilter(created: 500...2000)]
        var keys: [TileCache.Key] = []
        for z in 10...13 {
            let shift = pow(2, Double(z - 12))
            let x0 = Int((2393 * shift).rounded(.down)) - 1, x1 = Int((2397 * shift).rounded(.up))
            let y0 = Int((1384 * shift).rounded(.down)) - 1, y1 = Int((1388 * shift).rounded(.up))
            for x in x0...x1 {
                for y in y0...y1 {
                    for scale in [1, 2] where z <= 11 || scale == 1 {
                        for filter in filters { keys.append(TileCache.Key(tile: try TileID(z: z, x: x, y: y), scale: scale, filter: filter)) }
                    }
                }
            }
        }
        return keys
    }

    /// Whether the tile's drawing (its window with the largest marker's reach, in world
    /// pixels) meets the cell of `entry` at the tile's zoom: computed from the geometry,
    /// not from the renderer's cell block.
    static func reaches(_ key: TileCache.Key, _ entry: ClusterEntry, _ renderer: TileRenderer) -> Bool {
        let grid = renderer.index.grid
        let z = key.tile.z, cellZoom = min(z, grid.maxZoom)
        let cell = grid.cell(of: entry.coordinate, zoom: cellZoom)
        let side = Double(256 * key.scale), world = side * Double(1 << z)
        let cellSide = world / Double(grid.cellsPerSide(zoom: cellZoom))
        let reach = renderer.reach * Double(key.scale)
        let (left, top) = (Double(key.tile.x) * side - reach, Double(key.tile.y) * side - reach)
        let (right, bottom) = (Double(key.tile.x + 1) * side + reach, Double(key.tile.y + 1) * side + reach)
        // The cells a window reads run from the one holding its left edge to the one holding its right.
        func covers(_ lo: Double, _ hi: Double, _ c: Int) -> Bool {
            Int((lo / cellSide).rounded(.down)) <= c && c <= Int((hi / cellSide).rounded(.down))
        }
        return covers(top, bottom, cell.y) && covers(left, right, cell.x) && key.filter.matches(entry)
    }

    @Test("a hit is the tile first drawn; misses and hits are counted; an empty tile is cached as no PNG")
    func hitsAndMisses() throws {
        let index = try ClusterIndex(statusCount: 8, entries: Self.entries(300, seed: 1))
        let cache = TileCache(renderer: TileRenderer(index: index), byteLimit: 1 << 24, tag: Self.tag)
        let key = TileCache.Key(tile: try TileID(z: 12, x: 2394, y: 1385))
        let first = try cache.tile(key)
        let png = try #require(first.png)
        #expect(png == (try TileRenderer(index: index).render(tile: key.tile))?.png)
        #expect(first.tag == Self.tag(png))
        #expect(cache.cached(key) == first)
        #expect(try cache.tile(key) == first)
        let empty = TileCache.Key(tile: try TileID(z: 12, x: 100, y: 100))
        #expect(try cache.tile(empty).png == nil)
        #expect(cache.cached(empty)?.png == nil && cache.cached(empty) != nil)
        let stats = cache.statistics
        #expect(stats.tiles == 2 && stats.misses == 2 && stats.hits == 4)
        #expect(stats.bytes == png.count + 2 * TileCache.entryOverhead)
    }

    @Test("the cache stays within its byte limit by dropping the least recently used tiles")
    func byteLimit() throws {
        let index = try ClusterIndex(statusCount: 8, entries: Self.entries(400, seed: 2))
        let renderer = TileRenderer(index: index)
        let keys = try (2393...2396).flatMap { x in try (1384...1387).map { y in TileCache.Key(tile: try TileID(z: 12, x: x, y: y)) } }
        let sizes = try keys.map { (try renderer.render(tile: $0.tile)?.png.count ?? 0) + TileCache.entryOverhead }
        // Room for the three largest tiles: never more than the limit, and the most recent kept.
        let limit = sizes.sorted().suffix(3).reduce(0, +)
        let cache = TileCache(renderer: renderer, byteLimit: limit, tag: Self.tag)
        for (i, key) in keys.enumerated() {
            _ = try cache.tile(key)
            if i >= 1 { _ = cache.cached(keys[0]) }  // keys[0] stays the most recently used
            #expect(cache.statistics.bytes <= limit)
            #expect(cache.cached(key) != nil)
        }
        #expect(cache.cached(keys[0]) != nil)
        #expect(cache.statistics.evictions > 0)
        #expect(cache.statistics.bytes == keys.filter { cache.cached($0) != nil }.map { sizes[keys.firstIndex(of: $0)!] }.reduce(0, +))
        let none = TileCache(renderer: renderer, byteLimit: 0, tag: Self.tag)
        #expect(try none.tile(keys[5]).png != nil && none.statistics.tiles == 0)
    }

    @Test("after random writes no cached tile is stale, and exactly the tiles that could show a touched report were dropped", arguments: [3] as [UInt64])
    func invalidation(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        var entries = Self.entries(500, seed: seed)
        let index = try ClusterIndex(statusCount: 8, entries: entries)
        let renderer = TileRenderer(index: index)
        let cache = TileCache(renderer: renderer, byteLimit: 1 << 30, tag: Self.tag)
        let keys = try Self.keys()
        for key in keys { _ = try cache.tile(key) }
        var nextID = Int64(entries.count + 1)
        for step in 0..<8 {
            // Insert, move, change status, or delete; near cell and tile edges half the time.
            var touched: [ClusterEntry] = []
            let i = Int(random.next() % UInt64(entries.count))
            let edge = step % 2 == 0
            let px = 2393 * 256 + Double(random.next() % (4 * 256)) + (edge ? 0 : random.unit())
            let py = 1384 * 256 + Double(random.next() % (4 * 256)) + (edge ? 0.001 : random.unit())
            switch step % 4 {
            case 0:
                let new = Self.entry(id: nextID, px: px, py: py, status: Int(random.next() % 2))
                nextID += 1
                try index.apply([.upsert(new)])
                entries.append(new)
                touched = [new]
            case 1:
                var moved = Self.entry(id: entries[i].id, px: px, py: py, status: entries[i].status, createdAt: entries[i].createdAt)
                moved.createdAt = entries[i].createdAt
                try index.apply([.upsert(moved)])
                touched = [entries[i], moved]
                entries[i] = moved
            case 2:
                var changed = entries[i]
                changed.status = 1 - changed.status
                try index.apply([.upsert(changed)])
                touched = [entries[i], changed]
                entries[i] = changed
            default:
                index.remove(id: entries[i].id)
                touched = [entries.remove(at: i)]
            }
            let cachedBefore = Set(keys.filter { cache.cached($0) != nil })
            cache.invalidate(touched)
            let cachedAfter = Set(keys.filter { cache.cached($0) != nil })
            let dropped = cachedBefore.subtracting(cachedAfter)
            let expected = cachedBefore.filter { key in touched.contains { Self.reaches(key, $0, renderer) } }
            #expect(dropped == expected, "step \(step): dropped \(dropped.count), expected \(expected.count)")
            #expect(cachedAfter.count > cachedBefore.count / 2, "the rest of the cache stays warm")
            // Nothing kept is stale: every cached tile near a touched report (within a
            // tile of its own, where a miss would be) is what a fresh drawing gives.
            let near = cachedAfter.filter { key in
                touched.contains { entry in
                    let n = Double(1 << key.tile.z)
                    let x = WebMercator.x(longitude: entry.coordinate.longitude) * n, y = WebMercator.y(latitude: entry.coordinate.latitude) * n
                    return abs(Double(key.tile.x) + 0.5 - x) < 1.6 && abs(Double(key.tile.y) + 0.5 - y) < 1.6
                }
            }
            #expect(near.count > 0)
            for key in near {
                let fresh = try renderer.render(tile: key.tile, scale: key.scale, filter: key.filter)?.png
                #expect(cache.cached(key)?.png == fresh, "stale tile \(key.tile) @\(key.scale)x after step \(step)")
            }
            // Refill what was dropped for the next step.
            for key in dropped { _ = try cache.tile(key) }
        }
    }

    @Test("a change on the antimeridian drops the tiles on both sides of it")
    func antimeridian() throws {
        let world = 256.0 * 8  // zoom 3
        let west = Self.entry(id: 1, px: 0.5, py: 1000, zoom: 3), east = Self.entry(id: 2, px: world - 0.5, py: 1000, zoom: 3)
        let index = try ClusterIndex(statusCount: 8, entries: [west, east])
        let cache = TileCache(renderer: TileRenderer(index: index), byteLimit: 1 << 24, tag: Self.tag)
        let first = TileCache.Key(tile: try TileID(z: 3, x: 0, y: 3)), last = TileCache.Key(tile: try TileID(z: 3, x: 7, y: 3))
        let middle = TileCache.Key(tile: try TileID(z: 3, x: 4, y: 3))
        for key in [first, last, middle] { _ = try cache.tile(key) }
        index.remove(id: 1)
        #expect(cache.invalidate([west]) == 2)
        #expect(cache.cached(first) == nil && cache.cached(last) == nil && cache.cached(middle) != nil)
    }

    @Test("a tile drawn while a write lands is not cached")
    func drawnDuringWrite() throws {
        let index = try ClusterIndex(statusCount: 8, entries: Self.entries(100, seed: 5))
        let cache = TileCache(renderer: TileRenderer(index: index), byteLimit: 1 << 24, tag: Self.tag)
        let key = TileCache.Key(tile: try TileID(z: 12, x: 2394, y: 1385))
        // A miss notes the generation, draws, then stores only if no invalidation came in between.
        let generation = cache.generation
        cache.invalidate([Self.entry(id: 999, px: 0, py: 0)])
        #expect(cache.store(key, TileCache.Tile(png: [1, 2, 3], tag: "\"x\""), ifGeneration: generation) == false)
        #expect(cache.cached(key) == nil)
        #expect(cache.store(key, TileCache.Tile(png: [1, 2, 3], tag: "\"x\""), ifGeneration: cache.generation))
        #expect(cache.cached(key)?.png == [1, 2, 3])
    }

    @Test("tile requests outside the grid or the served zooms are errors naming the part")
    func checks() throws {
        let index = try ClusterIndex(statusCount: 8, entries: [])
        let cache = TileCache(renderer: TileRenderer(index: index), byteLimit: 1 << 20, tag: Self.tag)
        #expect(throws: ValidationError.self) { try cache.check(z: 21, x: 0, y: 0, scale: 1) }
        #expect((try? cache.check(z: 20, x: 0, y: 0, scale: 1)) != nil)
        #expect(throws: ValidationError.self) { try cache.check(z: 2, x: 4, y: 0, scale: 1) }
        #expect(throws: ValidationError.self) { try cache.check(z: 2, x: 0, y: -1, scale: 1) }
        #expect(throws: ValidationError.self) { try cache.check(z: 2, x: 0, y: 0, scale: 5) }
        do {
            _ = try cache.check(z: 2, x: 0, y: 9, scale: 1)
        } catch {
            #expect(error.field == "y")
        }
    }
}
