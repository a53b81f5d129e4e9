import Clustering
import Geometry
import Synchronization

/// Encoded tiles kept in memory, bounded in bytes, least recently used out first; a write
/// to the index removes exactly the tiles that could show what it changed.
///
/// ## Never stale
/// A tile is drawn from the cells ``TileRenderer/cells(around:)`` names: those within the
/// largest marker's reach of the tile. So a report can change a tile only through its
/// cell at the tile's zoom (at the grid's deepest zoom for deeper tiles), and only if the
/// tile's filter counts it. ``invalidate(_:)`` takes the reports a write touched (their
/// old and new versions) and, for every zoom and scale held, removes the tiles whose cells
/// hold one of them under a filter that counts it: the neighbours a marker's disc or label
/// reaches into included, every other tile kept.
///
/// A tile drawn while a write lands must not be cached after that write's invalidation.
/// Each invalidation advances a generation; a miss notes the generation before it reads
/// the index and stores its tile only if no invalidation came in between. The service
/// applies a write to the index before it invalidates, so a tile drawn after the
/// invalidation began sees the write.
///
/// ```swift
/// let cache = TileCache(renderer: TileRenderer(clusters: service.clusterView), byteLimit: 64 << 20, tag: ETag.of)
/// service.onWrite { touched in cache.invalidate(touched) }
/// let tile = try cache.tile(TileCache.Key(tile: TileID(z: 12, x: 2394, y: 1385), scale: 2))
/// ```
public final class TileCache: Sendable {
    /// A tile as asked for: where, how large, and which reports it shows.
    public struct Key: Sendable, Hashable {
        public var tile: TileID
        /// 1, or 2 for `@2x` (up to ``MapWindow/maxScale``).
        public var scale: Int
        public var filter: ClusterFilter

        public init(tile: TileID, scale: Int = 1, filter: ClusterFilter = .all) {
            self.tile = tile
            self.scale = scale
            self.filter = filter
        }
    }

    /// A tile as served.
    public struct Tile: Sendable, Hashable {
        /// The PNG; nil when nothing shows on the tile (HTTP 204).
        public var png: [UInt8]?
        /// The entity tag of the PNG (of an empty body for an empty tile).
        public var tag: String
    }

    /// What the cache has done since it was made.
    public struct Statistics: Sendable, Hashable {
        public var tiles = 0
        public var bytes = 0
        public var hits = 0
        public var misses = 0
        /// Tiles removed to stay within the byte limit.
        public var evictions = 0
        /// Tiles removed because a write could have changed them.
        public var invalidations = 0
    }

    public let renderer: TileRenderer
    /// The most bytes the cached tiles may take, counting each tile's PNG and
    /// ``entryOverhead``.
    public let byteLimit: Int
    /// What each tile costs besides its PNG: key, tag and bookkeeping.
    public static let entryOverhead = 160

    private let tag: @Sendable ([UInt8]) -> String
    private let state: Mutex<LRU>

    /// - Parameters:
    ///   - byteLimit: at most this many bytes are held (0: nothing is cached).
    ///   - tag: the strong entity tag of a PNG's bytes.
    public init(renderer: TileRenderer, byteLimit: Int, tag: @escaping @Sendable ([UInt8]) -> String) {
        self.renderer = renderer
        self.byteLimit = max(byteLimit, 0)
        self.tag = tag
        state = Mutex(LRU())
    }

    /// Checks a tile request: the zoom within ``TileRenderer/zooms``, the column and row
    /// within the grid of that zoom, the scale 1 to ``MapWindow/maxScale``.
    public func check(z: Int, x: Int, y: Int, scale: Int) throws(ValidationError) -> TileID {
        let zooms = renderer.zooms
        guard zooms.contains(z) else {
            throw ValidationError(field: "z", "must be a zoom from \(zooms.lowerBound) to \(zooms.upperBound), got \(z)")
        }
        guard (1...MapWindow.maxScale).contains(scale) else {
            throw ValidationError(field: "scale", "must be from 1 to \(MapWindow.maxScale), got \(scale)")
        }
        return try TileID(z: z, x: x, y: y)
    }

    /// The cached tile, if there is one (and marks it as just used).
    public func cached(_ key: Key) -> Tile? {
        state.withLock { $0.lookup(key) }
    }

    /// The tile: from the cache, or drawn, encoded and cached.
    public func tile(_ key: Key) throws -> Tile {
        let (found, generation) = state.withLock { lru -> (Tile?, UInt64) in
            let found = lru.lookup(key)
            if found == nil { lru.misses += 1 }
            return (found, lru.generation)
        }
        if let found { return found }
        let png = try renderer.render(tile: key.tile, scale: key.scale, filter: key.filter)?.png
        let tile = Tile(png: png, tag: tag(png ?? []))
        store(key, tile, ifGeneration: generation)
        return tile
    }

    /// The number of invalidations so far.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Caches a tile drawn from the index as it was at `generation`, unless an
    /// invalidation has come since (the tile may miss that write); returns whether it did.
    @discardableResult
    func store(_ key: Key, _ tile: Tile, ifGeneration generation: UInt64) -> Bool {
        let limit = byteLimit
        return state.withLock { lru in
            guard lru.generation == generation else { return false }
            lru.insert(key, tile, cost: (tile.png?.count ?? 0) + Self.entryOverhead, limit: limit)
            return true
        }
    }

    /// Removes every cached tile that could show one of `touched` (the reports a write
    /// added, the old and new versions of those it changed, those it deleted); returns
    /// how many were removed. Call it after the write is applied to the index.
    @discardableResult
    public func invalidate(_ touched: some Sequence<ClusterEntry>) -> Int {
        let grid = renderer.index.grid
        return state.withLock { lru in
            lru.generation &+= 1
            var removed = 0
            for layer in Array(lru.layers.keys) {
                let z = layer / 8, scale = layer % 8
                let cellZoom = min(z, grid.maxZoom)
                for entry in touched {
                    let cell = grid.cell(of: entry.coordinate, zoom: cellZoom)
                    for tile in tiles(showing: cell, zoom: z, scale: scale) {
                        removed += lru.remove(at: Address(tile: tile, scale: scale)) { $0.matches(entry) }
                    }
                }
            }
            lru.invalidations += removed
            return removed
        }
    }

    /// Removes every cached tile (the index was rebuilt); returns how many were removed.
    @discardableResult
    public func invalidateAll() -> Int {
        state.withLock { lru in
            let removed = lru.entries.count
            let (generation, counters) = (lru.generation, (lru.hits, lru.misses, lru.evictions, lru.invalidations + removed))
            lru = LRU()
            lru.generation = generation &+ 1  // a tile drawn from the old index is not stored
            (lru.hits, lru.misses, lru.evictions, lru.invalidations) = counters
            return removed
        }
    }

    /// The tiles of zoom `z` at `scale` whose drawing reads `cell`.
    func tiles(showing cell: Cell, zoom z: Int, scale: Int) -> Set<TileID> {
        let grid = renderer.index.grid
        let side = Double(256 * scale), n = 1 << z
        let cellSide = Double((256 * scale) << z) / Double(grid.cellsPerSide(zoom: cell.zoom))
        let reach = renderer.reach * Double(scale)
        // Tiles within reach of the cell's pixels, one more each way; then the exact test.
        func span(_ c: Int) -> ClosedRange<Int> {
            Int(((Double(c) * cellSide - reach) / side).rounded(.down)) - 1...Int(((Double(c + 1) * cellSide + reach) / side).rounded(.down)) + 1
        }
        var found = Set<TileID>()
        for row in span(cell.y) where (0..<n).contains(row) {
            for column in span(cell.x) {
                guard let tile = try? TileID(z: z, x: (column % n + n) % n, y: row), !found.contains(tile),
                      let window = try? MapWindow(tile: tile, scale: scale),
                      renderer.cells(around: window)?.contains(cell) == true else { continue }
                found.insert(tile)
            }
        }
        return found
    }

    public var statistics: Statistics {
        state.withLock { lru in
            Statistics(
                tiles: lru.entries.count, bytes: lru.bytes, hits: lru.hits, misses: lru.misses, evictions: lru.evictions,
                invalidations: lru.invalidations)
        }
    }

    // MARK: Storage

    /// A tile's place in the grid, whatever the filter.
    struct Address: Hashable {
        var tile: TileID
        var scale: Int
    }

    /// The entries in a doubly linked list, most recently used at `head`, indexed by key
    /// and by address (the keys of every filter held for a tile, for invalidation).
    struct LRU {
        struct Node {
            var key: Key
            var tile: Tile
            var cost: Int
            var newer: Int
            var older: Int
        }

        var nodes: [Node] = []
        var free: [Int] = []
        var entries: [Key: Int] = [:]
        var byAddress: [Address: [Key]] = [:]
        /// How many tiles each zoom · 8 + scale holds, so invalidation visits only those.
        var layers: [Int: Int] = [:]
        var head = -1
        var tail = -1
        var bytes = 0
        var generation: UInt64 = 0
        var hits = 0, misses = 0, evictions = 0, invalidations = 0

        mutating func lookup(_ key: Key) -> Tile? {
            guard let i = entries[key] else { return nil }
            hits += 1
            unlink(i)
            pushFront(i)
            return nodes[i].tile
        }

        mutating func insert(_ key: Key, _ tile: Tile, cost: Int, limit: Int) {
            if let old = entries[key] { remove(old) }
            guard cost <= limit else { return }
            while bytes + cost > limit, tail >= 0 {
                remove(tail)
                evictions += 1
            }
            let node = Node(key: key, tile: tile, cost: cost, newer: -1, older: -1)
            let i: Int
            if let slot = free.popLast() {
                nodes[slot] = node
                i = slot
            } else {
                nodes.append(node)
                i = nodes.count - 1
            }
            pushFront(i)
            entries[key] = i
            byAddress[Address(tile: key.tile, scale: key.scale), default: []].append(key)
            layers[Self.layer(key), default: 0] += 1
            bytes += cost
        }

        /// Removes the tiles at `address` whose filter passes `test`; returns how many.
        mutating func remove(at address: Address, where test: (ClusterFilter) -> Bool) -> Int {
            guard let keys = byAddress[address] else { return 0 }
            var removed = 0
            for key in keys where test(key.filter) {
                if let i = entries[key] {
                    remove(i)
                    removed += 1
                }
            }
            return removed
        }

        private mutating func remove(_ i: Int) {
            let key = nodes[i].key
            unlink(i)
            entries[key] = nil
            let address = Address(tile: key.tile, scale: key.scale)
            byAddress[address]?.removeAll { $0 == key }
            if byAddress[address]?.isEmpty == true { byAddress[address] = nil }
            let layer = Self.layer(key)
            layers[layer]! -= 1
            if layers[layer] == 0 { layers[layer] = nil }
            bytes -= nodes[i].cost
            nodes[i].tile = Tile(png: nil, tag: "")
            free.append(i)
        }

        private static func layer(_ key: Key) -> Int { key.tile.z * 8 + key.scale }

        private mutating func unlink(_ i: Int) {
            let (newer, older) = (nodes[i].newer, nodes[i].older)
            if newer >= 0 { nodes[newer].older = older } else { head = older }
            if older >= 0 { nodes[older].newer = newer } else { tail = newer }
            nodes[i].newer = -1
            nodes[i].older = -1
        }

        private mutating func pushFront(_ i: Int) {
            nodes[i].older = head
            nodes[i].newer = -1
            if head >= 0 { nodes[head].newer = i }
            head = i
            if tail < 0 { tail = i }
        }
    }
}
