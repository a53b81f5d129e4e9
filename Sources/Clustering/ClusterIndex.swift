import Foundation
import Geometry

/// Grid clusters of reports at every zoom, exact, answered in microseconds and kept up to
/// date write by write.
///
/// ## Design
/// Every report is placed by its normalized Web Mercator position in 32-bit fixed point
/// (``ClusterGrid``): the cell of any level is the top bits of those numbers, and the
/// Morton (Z-order) code of the two numbers orders reports so that every cell at every
/// zoom is a contiguous run. The index is a quadtree over those codes
/// (`QuadTree.swift`): each inner node *is* a grid cell (level `zoom + log2(256/C)`) and
/// keeps, per status, the count, the exact integer sums of x and y, the bounding box and
/// the first and last Morton code of its reports, plus the range of their creation times.
/// Small subtrees are leaves: up to 64 reports in Z-order, scanned when a query reaches
/// them.
///
/// - A viewport at zoom `z` visits the nodes on the way down to level `z + shift` that
///   meet the viewport, and reads one aggregate per cell (per status selected); cells
///   inside leaves come from one scan of the leaf.
/// - A cluster's position is its sums over its count; its expansion zoom is the first
///   level where its first and last Morton codes differ (all its reports lie between
///   them on the curve); its bounds are the aggregate box.
/// - A status filter merges the aggregates of the selected statuses. A creation-time
///   filter uses a node's aggregates when all of its reports are inside the range, skips
///   it when none are, and looks into its children otherwise, so its cost grows with the
///   reports whose node straddles the range, at worst the reports in view.
/// - A write walks one path from the root (at most `maxZoom + log2(256/C) + 1` nodes):
///   counts and sums are added or subtracted exactly; a bound the removed report held is
///   recomputed from the node's four children. A leaf past its capacity splits; a node
///   left with half a leaf's worth becomes a leaf again.
/// - Readers share a read-write lock and writers take it alone, so no reader sees half
///   of a write, and a batch of writes (``apply(_:)``) is seen whole or not at all.
///
/// ```swift
/// let index = try ClusterIndex(statusCount: 8, entries: entries)
/// for item in try index.clusters(in: viewport, zoom: 12, filter: ClusterFilter(statusNumbers: [0, 1])) {
///     if case .cluster(let c) = item { print(c.id, c.count, c.coordinate) }
/// }
/// try index.apply([.upsert(moved), .remove(id: 42)])
/// ```
public final class ClusterIndex: @unchecked Sendable {
    /// The grid that defines the cells.
    public let grid: ClusterGrid
    /// How many statuses there are (status numbers are 0..<statusCount, at most 16).
    public let statusCount: Int

    /// Replaced whole by ``replaceContents(with:)``; read and written under `lock` only.
    private(set) var tree: QuadTree
    let lock = ReadWriteLock()

    /// Builds the index over `entries`. Entries are checked first: a position outside
    /// WGS84, a status number out of range, an id outside 0...2^32 - 1 or a repeated id is
    /// a ``ValidationError``. `leafCapacity` (default 64) trades memory for scan length.
    public init(grid: ClusterGrid = .standard, statusCount: Int, entries: some Sequence<ClusterEntry>, leafCapacity: Int = 64) throws(ValidationError) {
        guard (1...16).contains(statusCount) else {
            throw ValidationError(field: "statuses", "the index takes 1 to 16 statuses, got \(statusCount)")
        }
        guard (2...4096).contains(leafCapacity) else {
            throw ValidationError(field: "leaf_capacity", "must be from 2 to 4096, got \(leafCapacity)")
        }
        self.grid = grid
        self.statusCount = statusCount
        var slots: [QuadTree.Slot] = []
        slots.reserveCapacity(entries.underestimatedCount)
        for entry in entries {
            slots.append(try Self.slot(entry, statusCount: statusCount))
        }
        do {
            tree = try QuadTree(slots: slots, statusCount: statusCount, maxDepth: grid.maxDepth, leafCapacity: leafCapacity)
        } catch {
            throw ValidationError(field: "id", "report \(error.id) appears twice")
        }
    }

    static func slot(_ e: ClusterEntry, statusCount: Int) throws(ValidationError) -> QuadTree.Slot {
        guard (0...Int64(UInt32.max)).contains(e.id) else {
            throw ValidationError(field: "id", "must be from 0 to \(UInt32.max), got \(e.id)")
        }
        guard (0..<statusCount).contains(e.status) else {
            throw ValidationError(field: "status", "report \(e.id): status number must be from 0 to \(statusCount - 1), got \(e.status)")
        }
        let c = try e.coordinate.validated()
        let p = FixedPoint(c)
        return QuadTree.Slot(key: p.key, createdAt: e.createdAt, x: p.x, y: p.y, id: UInt32(e.id), status: UInt8(e.status))
    }

    /// How many reports the index holds.
    public var count: Int { lock.read { tree.count } }

    /// Bytes held by the index's arrays (allocated capacity).
    public var memoryBytes: Int { lock.read { tree.memoryBytes } }

    // MARK: Queries

    /// Every cluster, and every report of a cell with fewer than `minPoints` matching
    /// reports, whose cell at `zoom` shares area with the box (see
    /// ``ClusterGrid/cells(in:zoom:)``), in Z-order of the cells. The box may cross the
    /// antimeridian; a zoom outside 0...maxZoom is an error.
    public func clusters(in box: BoundingBox, zoom: Int, filter: ClusterFilter = .all) throws(ValidationError) -> [ClusterItem] {
        try grid.checkZoom(zoom)
        return clusters(in: grid.cells(in: box, zoom: zoom), filter: filter)
    }

    /// The clusters and lone reports of a block of cells (the tile renderer's query); none
    /// for a zoom outside 0...maxZoom.
    public func clusters(in block: CellBlock, filter: ClusterFilter = .all) -> [ClusterItem] {
        guard (0...grid.maxZoom).contains(block.zoom) else { return [] }
        return lock.read { clusters(tree, block, filter) }
    }

    /// The cluster `id` names, as ``clusters(in:zoom:filter:)`` would show it (also for a
    /// cell with fewer than `minPoints` reports). A malformed id is a ``ValidationError``;
    /// a cell without matching reports is ``ClusterNotFound``.
    public func cluster(_ id: ClusterID, filter: ClusterFilter = .all) throws -> Cluster {
        let cell = try grid.cell(of: id)
        return try lock.read { try cluster(tree, id, cell, filter).cluster }
    }

    /// The lowest zoom at which the cluster's matching reports fall into more than one cell.
    public func expansionZoom(of id: ClusterID, filter: ClusterFilter = .all) throws -> Int {
        try cluster(id, filter: filter).expansionZoom
    }

    /// What the cluster becomes one zoom deeper: up to four clusters or lone reports; at
    /// `maxZoom`, its first `limit` reports. One consistent read: no write falls between
    /// the two steps.
    public func children(of id: ClusterID, filter: ClusterFilter = .all, limit: Int = .max) throws -> [ClusterItem] {
        let cell = try grid.cell(of: id)
        return try lock.read {
            let found = try cluster(tree, id, cell, filter)
            if cell.zoom == grid.maxZoom {
                return leaves(tree, found, limit: limit, offset: 0, filter).members.map { .report($0) }
            }
            let below = CellBlock(zoom: cell.zoom + 1, columns: [(2 * cell.x)...(2 * cell.x + 1)], rows: (2 * cell.y)...(2 * cell.y + 1))
            return clusters(tree, below, filter)
        }
    }

    /// The cluster's matching reports in Z-order (then id), `limit` of them after skipping
    /// `offset`, with their total.
    public func leaves(of id: ClusterID, limit: Int, offset: Int, filter: ClusterFilter = .all) throws -> LeavesPage {
        guard limit >= 0 else { throw ValidationError(field: "limit", "must not be negative, got \(limit)") }
        guard offset >= 0 else { throw ValidationError(field: "offset", "must not be negative, got \(offset)") }
        let cell = try grid.cell(of: id)
        return try lock.read { leaves(tree, try cluster(tree, id, cell, filter), limit: limit, offset: offset, filter) }
    }

    /// How many matching reports lie in the box (edges included), in two parts: `certain`
    /// comes from the aggregates of cells wholly inside the box; `nearEdge` lists the
    /// reports within a fixed-point unit (under 1 cm) of an edge, where the index's rounded
    /// positions cannot decide. The exact count is `certain` plus how many of those lie
    /// inside by their exact positions (which the store knows).
    public func count(in box: BoundingBox, filter: ClusterFilter = .all) -> (certain: Int, nearEdge: [Int64]) {
        var uncertain: [UInt32] = []
        let certain = lock.read {
            box.parts.reduce(0) { n, part in
                let nw = FixedPoint(Coordinate(longitude: part.west, latitude: part.north))
                let se = FixedPoint(Coordinate(longitude: part.east, latitude: part.south))
                let fixed = QuadTree.FixedBox(west: nw.x, east: se.x, north: nw.y, south: se.y)
                return n + tree.count(in: fixed, filter: filter, uncertain: &uncertain)
            }
        }
        return (certain, uncertain.map(Int64.init))
    }

    /// Calls `body` with the id and status number of every matching report in the box
    /// (one that crosses the antimeridian included), to the fixed-point unit (under 1 cm):
    /// the reports of an area, read from memory.
    public func forEachReport(in box: BoundingBox, filter: ClusterFilter = .all, _ body: (_ id: UInt32, _ status: Int) -> Void) {
        lock.read {
            for part in box.parts {
                let nw = FixedPoint(Coordinate(longitude: part.west, latitude: part.north))
                let se = FixedPoint(Coordinate(longitude: part.east, latitude: part.south))
                let fixed = QuadTree.FixedBox(west: nw.x, east: se.x, north: nw.y, south: se.y)
                tree.forEachSlot(in: fixed, filter: filter) { body($0.id, Int($0.status)) }
            }
        }
    }

    // The read paths proper, on a tree the caller holds the read lock for.

    /// A cell found: its node, and its summary as a cluster.
    private struct Found {
        var ref: QuadTree.Ref
        var key: UInt64
        var depth: Int
        var cluster: Cluster
    }

    private func cluster(_ tree: QuadTree, _ id: ClusterID, _ cell: Cell, _ filter: ClusterFilter) throws(ClusterNotFound) -> Found {
        let key = cellKey(UInt64(cell.x), UInt64(cell.y))
        let depth = grid.depth(zoom: cell.zoom)
        var tally = QuadTree.Tally()
        guard let ref = tree.find(cellKey: key, depth: depth) else { throw ClusterNotFound(id: id, cell: cell) }
        tree.summarize(ref, filter: filter, cellKey: key, depth: depth, into: &tally)
        guard tally.aggregate.count > 0 else { throw ClusterNotFound(id: id, cell: cell) }
        return Found(ref: ref, key: key, depth: depth, cluster: makeCluster(tally, cell: cell))
    }

    private func leaves(_ tree: QuadTree, _ found: Found, limit: Int, offset: Int, _ filter: ClusterFilter) -> LeavesPage {
        var members: [ClusterMember] = []
        if limit > 0 {
            var skip = offset
            tree.forEachSlot(found.ref, cellKey: found.key, depth: found.depth, filter: filter, skip: &skip) { slot in
                members.append(Self.member(slot))
                return members.count < limit
            }
        }
        return LeavesPage(total: found.cluster.count, members: members)
    }

    private func clusters(_ tree: QuadTree, _ block: CellBlock, _ filter: ClusterFilter) -> [ClusterItem] {
        let depth = grid.depth(zoom: block.zoom)
        let last = UInt64(grid.cellsPerSide(zoom: block.zoom) - 1)
        var items: [ClusterItem] = []
        // Mostly one item per cell in view, a map's worth at most, so that the array
        // is not copied as it grows.
        items.reserveCapacity(min(block.cellCount, 4_096))
        for columns in block.columns {
            let b = QuadTree.Block(
                depth: depth, x0: UInt64(clamping: columns.lowerBound), x1: min(UInt64(clamping: columns.upperBound), last),
                y0: UInt64(clamping: block.rows.lowerBound), y1: min(UInt64(clamping: block.rows.upperBound), last))
            guard b.x0 <= b.x1, b.y0 <= b.y1 else { continue }
            tree.visit(b, filter: filter) { key, tally, ref in
                let (x, y) = Morton.cell(key)
                let cell = Cell(zoom: block.zoom, x: Int(x), y: Int(y))
                if tally.aggregate.count >= grid.minPoints {
                    items.append(.cluster(makeCluster(tally, cell: cell)))
                } else {
                    var skip = 0
                    tree.forEachSlot(ref, cellKey: key, depth: depth, filter: filter, skip: &skip) { slot in
                        items.append(.report(Self.member(slot)))
                        return true
                    }
                }
            }
        }
        return items
    }

    private func makeCluster(_ tally: QuadTree.Tally, cell: Cell) -> Cluster {
        let a = tally.aggregate
        let n = Double(a.count)
        let shared = (a.minKey ^ a.maxKey).leadingZeroBitCount / 2
        return Cluster(
            id: grid.id(of: cell), cell: cell, count: Int(a.count),
            x: (Double(a.sumX) / n + 0.5) / FixedPoint.scale, y: (Double(a.sumY) / n + 0.5) / FixedPoint.scale,
            expansionZoom: min(shared + 1 - grid.cellShift, grid.maxZoom + 1),
            statusCounts: StatusCounts(tally.statusCounts, count: statusCount),
            box: (a.minX, a.minY, a.maxX, a.maxY))
    }

    static func member(_ slot: QuadTree.Slot) -> ClusterMember {
        ClusterMember(
            id: Int64(slot.id), x: FixedPoint.position(slot.x), y: FixedPoint.position(slot.y),
            status: Int(slot.status), createdAt: slot.createdAt)
    }

    // MARK: Writes

    /// A change to the index.
    public enum Change: Sendable, Hashable {
        /// Adds the report, or replaces the one with its id (a move, a status change).
        case upsert(ClusterEntry)
        /// Removes the report with this id, if there is one.
        case remove(id: Int64)
    }

    /// Applies changes in order, all of them or (when one is invalid) none, as one step
    /// for readers. Each costs time proportional to the number of levels.
    public func apply(_ changes: [Change]) throws(ValidationError) {
        var prepared: [(id: UInt32, slot: QuadTree.Slot?)] = []
        prepared.reserveCapacity(changes.count)
        for change in changes {
            switch change {
            case .upsert(let entry):
                let slot = try Self.slot(entry, statusCount: statusCount)
                prepared.append((slot.id, slot))
            case .remove(let id):
                guard let id = UInt32(exactly: id) else { continue }
                prepared.append((id, nil))
            }
        }
        lock.write {
            for (id, slot) in prepared {
                _ = tree.remove(id: id)
                if let slot { tree.insert(slot) }
            }
        }
    }

    /// Adds or replaces one report.
    public func upsert(_ entry: ClusterEntry) throws(ValidationError) {
        try apply([.upsert(entry)])
    }

    /// Report `id` as the index holds it (its position to within a centimetre), or nil.
    public func entry(id: Int64) -> ClusterEntry? {
        guard let id = UInt32(exactly: id), let slot = lock.read({ tree.slot(id: id) }) else { return nil }
        let coordinate = Coordinate(
            longitude: WebMercator.longitude(x: FixedPoint.position(slot.x)), latitude: WebMercator.latitude(y: FixedPoint.position(slot.y)))
        return ClusterEntry(id: Int64(slot.id), coordinate: coordinate, status: Int(slot.status), createdAt: slot.createdAt)
    }

    /// Whether the index holds `entry` as it is (same place to the index's precision, same
    /// status and creation time).
    public func holds(_ entry: ClusterEntry) -> Bool {
        guard let wanted = try? Self.slot(entry, statusCount: statusCount), let held = lock.read({ tree.slot(id: wanted.id) }) else { return false }
        return held.x == wanted.x && held.y == wanted.y && held.status == wanted.status && held.createdAt == wanted.createdAt
    }

    /// Takes what `other` holds in place of what this index holds, in one step for
    /// readers (a rebuild swapped in). Both must have the same grid and statuses; `other`
    /// is not to be used after.
    public func replaceContents(with other: ClusterIndex) {
        precondition(other.grid == grid && other.statusCount == statusCount, "an index of another grid or statuses")
        let replacement = other.lock.read { other.tree }
        lock.write { tree = replacement }
    }

    /// Removes one report; returns whether it was there.
    @discardableResult
    public func remove(id: Int64) -> Bool {
        guard let id = UInt32(exactly: id) else { return false }
        return lock.write { tree.remove(id: id) != nil }
    }
}

/// A POSIX read-write lock that prefers writers, so a stream of readers cannot starve a write.
package final class ReadWriteLock: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    package init() {
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if os(Linux)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    package func read<T, E>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    package func write<T, E>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
