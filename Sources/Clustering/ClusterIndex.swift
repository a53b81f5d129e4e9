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
/// - A status filter merges the aggregates of the selected statuses.
/// - A creation-time filter reads the period trees (`PeriodTrees.swift`): the same reports
///   again, one quadtree per 64-day, 8-day and one-day period, over the same records. An
///   interval is a few whole periods, read from their aggregates as above, and at most two
///   days cut by its ends, whose trees are looked into; the cells of all of them are added
///   up. On the whole tree alone, a node's aggregates serve only when all of its reports
///   lie on one side of an end, and reports of every date lie side by side, so the filter
///   looked at every report in view (``TimeFilterPath`` keeps that path for comparison).
///   A cluster's page of reports (``leaves(of:limit:offset:filter:)``), counts in a box and
///   nearest reports still filter on the whole tree.
/// - A write walks one path from the root of each tree that holds the report (at most
///   `maxZoom + log2(256/C) + 1` nodes each): counts and sums are added or subtracted
///   exactly; a bound the removed report held is recomputed from the node's four
///   children. A leaf past its capacity splits; a node
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

    /// The three are replaced together by ``replaceContents(with:)``; read and written
    /// under `lock` only. The reports' records, the tree of all of them, and the same
    /// reports split by period of creation (what creation-time filters read).
    private(set) var table: SlotTable
    private(set) var tree: QuadTree
    private(set) var periods: PeriodTrees
    let lock = ReadWriteLock()

    /// How a creation-time filter is answered: from the period trees (the default), or
    /// from the whole tree alone as before them (for the bench's comparison).
    public enum TimeFilterPath: Sendable {
        case periods, wholeTree
    }

    /// See ``TimeFilterPath``.
    public var timeFilterPath: TimeFilterPath {
        get { lock.read { path } }
        set { lock.write { path = newValue } }
    }
    private var path = TimeFilterPath.periods

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
        slots.sort(by: QuadTree.precedes)
        do {
            table = try SlotTable(slots)
        } catch {
            throw ValidationError(field: "id", "report \(error.id) appears twice")
        }
        let all = Array(0..<UInt32(slots.count))
        tree = QuadTree(table: table, list: all, statusCount: statusCount, maxDepth: grid.maxDepth, leafCapacity: leafCapacity)
        // Leaves twice as long in the period trees: at 1M reports 104 bytes a report in all
        // against 127, for a z10 "last 90 days" of 0.15 ms against 0.11 (make bench, while
        // ids were still found through a dictionary).
        periods = PeriodTrees(table: table, list: all, statusCount: statusCount, maxDepth: grid.maxDepth, leafCapacity: leafCapacity * 2)
    }

    /// An index of parts read back from a snapshot (`IndexSnapshot.swift`).
    init(grid: ClusterGrid, statusCount: Int, table: SlotTable, tree: QuadTree, periods: PeriodTrees) {
        (self.grid, self.statusCount, self.table, self.tree, self.periods) = (grid, statusCount, table, tree, periods)
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
    public var memoryBytes: Int { lock.read { table.memoryBytes + tree.memoryBytes + periods.memoryBytes } }

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
        return lock.read { clusters(parts(filter), block) }
    }

    /// The cluster `id` names, as ``clusters(in:zoom:filter:)`` would show it (also for a
    /// cell with fewer than `minPoints` reports). A malformed id is a ``ValidationError``;
    /// a cell without matching reports is ``ClusterNotFound``.
    public func cluster(_ id: ClusterID, filter: ClusterFilter = .all) throws -> Cluster {
        let cell = try grid.cell(of: id)
        return try lock.read { try summary(parts(filter), id, cell) }
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
            if cell.zoom == grid.maxZoom {
                return leaves(tree, try cluster(tree, id, cell, filter), limit: limit, offset: 0, filter).members.map { .report($0) }
            }
            let parts = parts(filter)
            _ = try summary(parts, id, cell)
            let below = CellBlock(zoom: cell.zoom + 1, columns: [(2 * cell.x)...(2 * cell.x + 1)], rows: (2 * cell.y)...(2 * cell.y + 1))
            return clusters(parts, below)
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

    /// A tree a query reads and the filter it reads it with.
    private struct Part {
        var tree: QuadTree
        var filter: ClusterFilter
    }

    /// What a query reads: the whole tree; for a creation-time filter (unless
    /// ``timeFilterPath`` says otherwise), the period trees that cover its interval, those
    /// wholly inside it read without the time filter.
    private func parts(_ filter: ClusterFilter) -> [Part] {
        guard let range = filter.created, path == .periods else { return [Part(tree: tree, filter: filter)] }
        let untimed = ClusterFilter(statuses: filter.statuses)
        return periods.cover(range).map { Part(tree: $0.tree, filter: $0.cut ? filter : untimed) }
    }

    /// The summary of one cell over `parts`.
    private func summary(_ parts: [Part], _ id: ClusterID, _ cell: Cell) throws(ClusterNotFound) -> Cluster {
        if parts.count == 1 { return try cluster(parts[0].tree, id, cell, parts[0].filter).cluster }
        let key = cellKey(UInt64(cell.x), UInt64(cell.y))
        let depth = grid.depth(zoom: cell.zoom)
        var tally = QuadTree.Tally()
        for part in parts {
            guard let ref = part.tree.find(cellKey: key, depth: depth) else { continue }
            part.tree.summarize(ref, filter: part.filter, cellKey: key, depth: depth, into: &tally)
        }
        guard tally.aggregate.count > 0 else { throw ClusterNotFound(id: id, cell: cell) }
        return makeCluster(tally, cell: cell)
    }

    private func clusters(_ parts: [Part], _ block: CellBlock) -> [ClusterItem] {
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
            if parts.count == 1 {
                let part = parts[0]
                part.tree.visit(b, filter: part.filter) { key, tally, ref in
                    append(key, tally, zoom: block.zoom, to: &items) { body in
                        var skip = 0
                        part.tree.forEachSlot(ref, cellKey: key, depth: depth, filter: part.filter, skip: &skip) { body($0); return true }
                    }
                }
            } else {
                merged(parts, b, zoom: block.zoom, into: &items)
            }
        }
        return items
    }

    /// The cells of `block` over several trees: each tree's tallies of a cell added up, the
    /// cells in Z-order.
    private func merged(_ parts: [Part], _ block: QuadTree.Block, zoom: Int, into items: inout [ClusterItem]) {
        var cells = CellTallies(block)
        // Where a cell's reports are while it has fewer than minPoints: all of them, when it ends that way.
        var sources: [(cell: Int, part: Int, ref: QuadTree.Ref)] = []
        for (p, part) in parts.enumerated() {
            part.tree.visit(block, filter: part.filter) { key, tally, ref in
                let c = cells.index(of: key)
                if cells.tallies[c].aggregate.count < grid.minPoints { sources.append((c, p, ref)) }
                cells.tallies[c].merge(tally)
            }
        }
        sources.sort { $0.cell < $1.cell }
        for c in cells.tallies.indices.sorted(by: { cells.keys[$0] < cells.keys[$1] }) {
            let key = cells.keys[c]
            append(key, cells.tallies[c], zoom: zoom, to: &items) { body in
                var slots: [QuadTree.Slot] = []
                var s = 0, high = sources.count
                while s < high {
                    let mid = (s + high) / 2
                    if sources[mid].cell < c { s = mid + 1 } else { high = mid }
                }
                while s < sources.count, sources[s].cell == c {
                    let part = parts[sources[s].part]
                    var skip = 0
                    part.tree.forEachSlot(sources[s].ref, cellKey: key, depth: block.depth, filter: part.filter, skip: &skip) { slots.append($0); return true }
                    s += 1
                }
                slots.sort(by: QuadTree.precedes)
                slots.forEach(body)
            }
        }
    }

    /// A cell's item: its cluster, or with fewer than minPoints reports, the reports
    /// `members` lists (in key order).
    private func append(
        _ key: UInt64, _ tally: QuadTree.Tally, zoom: Int, to items: inout [ClusterItem],
        members: (_ body: (QuadTree.Slot) -> Void) -> Void
    ) {
        let (x, y) = Morton.cell(key)
        let cell = Cell(zoom: zoom, x: Int(x), y: Int(y))
        if tally.aggregate.count >= grid.minPoints {
            items.append(.cluster(makeCluster(tally, cell: cell)))
        } else {
            members { items.append(.report(Self.member($0))) }
        }
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
                removeLocked(id: id)
                if let slot {
                    let si = table.add(slot)
                    tree.insert(si)
                    periods.insert(si)
                }
            }
        }
    }

    @discardableResult
    private func removeLocked(id: UInt32) -> Bool {
        guard let (si, slot) = table.remove(id: id) else { return false }
        tree.remove(si, slot)
        periods.remove(si, slot)
        return true
    }

    /// Adds or replaces one report.
    public func upsert(_ entry: ClusterEntry) throws(ValidationError) {
        try apply([.upsert(entry)])
    }

    /// Report `id` as the index holds it (its position to within a centimetre), or nil.
    public func entry(id: Int64) -> ClusterEntry? {
        guard let id = UInt32(exactly: id), let slot = lock.read({ table.slot(id: id) }) else { return nil }
        let coordinate = Coordinate(
            longitude: WebMercator.longitude(x: FixedPoint.position(slot.x)), latitude: WebMercator.latitude(y: FixedPoint.position(slot.y)))
        return ClusterEntry(id: Int64(slot.id), coordinate: coordinate, status: Int(slot.status), createdAt: slot.createdAt)
    }

    /// Whether the index holds `entry` as it is (same place to the index's precision, same
    /// status and creation time).
    public func holds(_ entry: ClusterEntry) -> Bool {
        guard let wanted = try? Self.slot(entry, statusCount: statusCount), let held = lock.read({ table.slot(id: wanted.id) }) else { return false }
        return held.x == wanted.x && held.y == wanted.y && held.status == wanted.status && held.createdAt == wanted.createdAt
    }

    /// Takes what `other` holds in place of what this index holds, in one step for
    /// readers (a rebuild swapped in). Both must have the same grid and statuses; `other`
    /// is not to be used after.
    public func replaceContents(with other: ClusterIndex) {
        precondition(other.grid == grid && other.statusCount == statusCount, "an index of another grid or statuses")
        let replacement = other.lock.read { (other.table, other.tree, other.periods) }
        lock.write { (table, tree, periods) = replacement }
    }

    /// Removes one report; returns whether it was there.
    @discardableResult
    public func remove(id: Int64) -> Bool {
        guard let id = UInt32(exactly: id) else { return false }
        return lock.write { removeLocked(id: id) }
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

/// The tallies of the cells a merged query has met, each cell found by its key: by its
/// place in the block when the block is a map's worth of cells (no hashing in the loop
/// that adds up every tree's cells), by a dictionary otherwise.
private struct CellTallies {
    let block: QuadTree.Block
    private let width: UInt64
    private var place: [Int32]
    private var byKey: [UInt64: Int] = [:]
    private(set) var keys: [UInt64] = []
    var tallies: [QuadTree.Tally] = []

    init(_ block: QuadTree.Block) {
        self.block = block
        width = block.x1 - block.x0 + 1
        let cellCount = width.multipliedReportingOverflow(by: block.y1 - block.y0 + 1)
        place = !cellCount.overflow && cellCount.partialValue <= 1 << 16 ? Array(repeating: -1, count: Int(cellCount.partialValue)) : []
    }

    /// The number of cell `key`, a new one the first time.
    mutating func index(of key: UInt64) -> Int {
        if !place.isEmpty {
            let (x, y) = Morton.cell(key)
            let at = Int((UInt64(y) - block.y0) * width + (UInt64(x) - block.x0))
            if place[at] >= 0 { return Int(place[at]) }
            place[at] = Int32(keys.count)
        } else if let known = byKey[key] {
            return known
        } else {
            byKey[key] = keys.count
        }
        keys.append(key)
        tallies.append(QuadTree.Tally())
        return keys.count - 1
    }
}
