/// A tree of ``ClusterIndex`` (a class, so that readers walk it without copying its
/// arrays; ``ClusterIndex``'s lock guards every access): a quadtree over 32-bit Mercator positions whose nodes
/// are the grid's cells, with per-status aggregates in its inner nodes.
///
/// Layout (flat arrays, no object per report or per node):
/// - The reports' records are the slots of a ``SlotTable`` the tree shares with the
///   index's other trees. Bulk building gives reports their slots in key order, so leaves
///   read memory in sequence; later inserts reuse freed slots or append.
/// - Inner nodes: `children` (4 per node, in Morton order), `aggregates` (one
///   ``Aggregate`` per status per node) and the range of creation times under the node.
/// - Leaves: a short list of slots in key order (then id). A leaf holds at most
///   `leafCapacity` reports unless it sits at the deepest level, where reports that share
///   the finest cell stay together.
///
/// A node at level `d` is the cell `key >> (64 - 2d)`; the root is level 0 (the world).
/// Leaves carry no aggregates: a query that stops inside a leaf scans it.
final class QuadTree {
    /// A node reference: `>= 0` an inner node, `< 0` the leaf `~ref`, ``none`` nothing.
    typealias Ref = Int32
    static let none: Ref = .min

    struct Slot {
        var key: UInt64
        var createdAt: Int64
        var x: UInt32
        var y: UInt32
        var id: UInt32
        var status: UInt8
    }

    let statusCount: Int
    let maxDepth: Int
    let leafCapacity: Int

    /// The records the tree's leaves list by slot number.
    let table: SlotTable
    /// How many reports the tree holds.
    private(set) var count = 0

    private(set) var children: [Ref] = []
    private(set) var aggregates: [Aggregate] = []
    private(set) var createdMin: [Int64] = []
    private(set) var createdMax: [Int64] = []
    private var freeNodes: [Int32] = []

    private(set) var leaves: [[UInt32]] = []
    private var freeLeaves: [Int32] = []
    /// The tallies of shallow leaves (see ``LeafTallies``).
    private(set) var leafTallies = LeafTallies()

    private(set) var root: Ref = QuadTree.none

    /// Builds the tree over the slots `list` of `table`, which must be in key order (then id).
    init(table: SlotTable, list: [UInt32], statusCount: Int, maxDepth: Int, leafCapacity: Int) {
        self.table = table
        self.statusCount = statusCount
        self.maxDepth = maxDepth
        self.leafCapacity = leafCapacity
        count = list.count
        root = build(list[...], depth: 0)
    }

    /// A tree's arrays as they are, for a snapshot (`IndexSnapshot.swift`).
    struct Storage {
        var count: Int
        var children: [Ref]
        var aggregates: [Aggregate]
        var createdMin: [Int64]
        var createdMax: [Int64]
        var freeNodes: [Int32]
        var leaves: [[UInt32]]
        var freeLeaves: [Int32]
        var root: Ref
        /// Nil when read back from a file: the tree makes them from its leaves.
        var leafTallies: LeafTallies? = nil
    }

    var storage: Storage {
        Storage(
            count: count, children: children, aggregates: aggregates, createdMin: createdMin, createdMax: createdMax, freeNodes: freeNodes,
            leaves: leaves, freeLeaves: freeLeaves, root: root, leafTallies: leafTallies)
    }

    /// A tree over `table` with arrays read back from a snapshot, checked by the caller.
    init(table: SlotTable, storage s: Storage, statusCount: Int, maxDepth: Int, leafCapacity: Int) {
        (self.table, self.statusCount, self.maxDepth, self.leafCapacity) = (table, statusCount, maxDepth, leafCapacity)
        (count, children, aggregates, createdMin, createdMax) = (s.count, s.children, s.aggregates, s.createdMin, s.createdMax)
        (freeNodes, leaves, freeLeaves, root) = (s.freeNodes, s.leaves, s.freeLeaves, s.root)
        if let tallies = s.leafTallies {
            leafTallies = tallies
        } else {
            leafTallies = LeafTallies(leafCount: leaves.count)
            tallyLeaves(root, depth: 0)
        }
    }

    /// Gives the shallow leaves under `ref` (at level `depth`) their tallies.
    private func tallyLeaves(_ ref: Ref, depth: Int) {
        guard depth <= LeafTallies.deepest, ref != Self.none else { return }
        if ref < 0 {
            leafTallies.set(Int(~ref), depth: depth, list: leaves[Int(~ref)], slots: slots)
            return
        }
        for q in 0..<4 { tallyLeaves(children[Int(ref) * 4 + q], depth: depth + 1) }
    }

    /// The order every leaf keeps, and bulk building needs.
    @inline(__always)
    static func precedes(_ a: Slot, _ b: Slot) -> Bool {
        a.key != b.key ? a.key < b.key : a.id < b.id
    }

    struct DuplicateID: Error {
        var id: Int64
    }

    var slots: [Slot] { table.slots }

    // MARK: Navigation

    /// Which of its parent's four cells holds `key` at level `depth` (1...32).
    @inline(__always)
    static func quadrant(_ key: UInt64, depth: Int) -> Int {
        Int(truncatingIfNeeded: key >> UInt64(64 - 2 * depth)) & 3
    }

    /// The total count of an inner node.
    func total(_ node: Int) -> Int {
        var n = 0
        for s in 0..<statusCount { n += Int(aggregates[node * statusCount + s].count) }
        return n
    }

    // MARK: Building

    /// A subtree at `depth` over `list`: slots in key order whose keys share the prefix of
    /// that level.
    private func build(_ list: ArraySlice<UInt32>, depth: Int) -> Ref {
        if list.count <= leafCapacity || depth == maxDepth {
            return makeLeaf(Array(list), depth: depth)
        }
        let node = allocateNode()
        var start = list.startIndex
        for q in 0..<4 {
            var lo = start, hi = list.endIndex
            while lo < hi {
                let mid = (lo + hi) / 2
                if Self.quadrant(slots[Int(list[mid])].key, depth: depth + 1) <= q { lo = mid + 1 } else { hi = mid }
            }
            if lo > start {
                let child = build(list[start..<lo], depth: depth + 1)
                children[node * 4 + q] = child
            }
            start = lo
        }
        recompute(node)
        return Ref(node)
    }

    /// A leaf at level `depth` listing `list`.
    private func makeLeaf(_ list: [UInt32], depth: Int) -> Ref {
        let l: Int32
        if let free = freeLeaves.popLast() {
            l = free
            leaves[Int(l)] = list
        } else {
            leaves.append(list)
            leafTallies.appendLeaf()
            l = Int32(leaves.count - 1)
        }
        leafTallies.set(Int(l), depth: depth, list: list, slots: slots)
        return ~l
    }

    private func freeLeaf(_ l: Int) {
        leaves[l] = []
        leafTallies.drop(l)
        freeLeaves.append(Int32(l))
    }

    private func allocateNode() -> Int {
        if let n = freeNodes.popLast() {
            let node = Int(n)
            for q in 0..<4 { children[node * 4 + q] = Self.none }
            for s in 0..<statusCount { aggregates[node * statusCount + s] = Aggregate() }
            createdMin[node] = .max
            createdMax[node] = .min
            return node
        }
        children.append(contentsOf: repeatElement(Self.none, count: 4))
        aggregates.append(contentsOf: repeatElement(Aggregate(), count: statusCount))
        createdMin.append(.max)
        createdMax.append(.min)
        return createdMin.count - 1
    }

    /// Frees a subtree, appending its slots in key order to `gathered` when given.
    private func free(_ ref: Ref, gathering gathered: inout [UInt32]) {
        if ref >= 0 {
            let node = Int(ref)
            for q in 0..<4 where children[node * 4 + q] != Self.none {
                free(children[node * 4 + q], gathering: &gathered)
                children[node * 4 + q] = Self.none
            }
            freeNodes.append(ref)
        } else {
            gathered.append(contentsOf: leaves[Int(~ref)])
            freeLeaf(Int(~ref))
        }
    }

    /// Recomputes every aggregate of `node` from its children.
    private func recompute(_ node: Int) {
        let base = node * statusCount
        for s in 0..<statusCount { aggregates[base + s] = Aggregate() }
        var low = Int64.max, high = Int64.min
        for q in 0..<4 {
            let child = children[node * 4 + q]
            if child == Self.none { continue }
            if child >= 0 {
                let c = Int(child)
                for s in 0..<statusCount { aggregates[base + s].merge(aggregates[c * statusCount + s]) }
                low = min(low, createdMin[c])
                high = max(high, createdMax[c])
            } else {
                for i in leaves[Int(~child)] {
                    let slot = slots[Int(i)]
                    aggregates[base + Int(slot.status)].add(slot)
                    low = min(low, slot.createdAt)
                    high = max(high, slot.createdAt)
                }
            }
        }
        createdMin[node] = low
        createdMax[node] = high
    }

    /// Recomputes the aggregate of one status of `node` from its children.
    private func recompute(_ node: Int, status: Int) {
        var a = Aggregate()
        for q in 0..<4 {
            let child = children[node * 4 + q]
            if child == Self.none { continue }
            if child >= 0 {
                a.merge(aggregates[Int(child) * statusCount + status])
            } else {
                for i in leaves[Int(~child)] where slots[Int(i)].status == status {
                    a.add(slots[Int(i)])
                }
            }
        }
        aggregates[node * statusCount + status] = a
    }

    /// Recomputes the creation-time range of `node` from its children.
    private func recomputeCreated(_ node: Int) {
        var low = Int64.max, high = Int64.min
        for q in 0..<4 {
            let child = children[node * 4 + q]
            if child == Self.none { continue }
            if child >= 0 {
                low = min(low, createdMin[Int(child)])
                high = max(high, createdMax[Int(child)])
            } else {
                for i in leaves[Int(~child)] {
                    low = min(low, slots[Int(i)].createdAt)
                    high = max(high, slots[Int(i)].createdAt)
                }
            }
        }
        createdMin[node] = low
        createdMax[node] = high
    }

    // MARK: Writes

    /// Adds the report of slot `si`, which the tree does not hold. Visits one node per
    /// level, and splits the leaf it lands in when that leaf grows past its capacity.
    func insert(_ si: UInt32) {
        let slot = slots[Int(si)]
        count += 1
        var ref = root, depth = 0, parent = -1, parentQuadrant = 0
        while ref >= 0 {
            let node = Int(ref)
            aggregates[node * statusCount + Int(slot.status)].add(slot)
            createdMin[node] = min(createdMin[node], slot.createdAt)
            createdMax[node] = max(createdMax[node], slot.createdAt)
            let q = Self.quadrant(slot.key, depth: depth + 1)
            let child = children[node * 4 + q]
            if child == Self.none {
                let leaf = makeLeaf([si], depth: depth + 1)
                children[node * 4 + q] = leaf
                return
            }
            parent = node
            parentQuadrant = q
            ref = child
            depth += 1
        }
        let l = Int(~ref)
        var lo = 0, hi = leaves[l].count
        while lo < hi {
            let mid = (lo + hi) / 2
            if Self.precedes(slots[Int(leaves[l][mid])], slot) { lo = mid + 1 } else { hi = mid }
        }
        leaves[l].insert(si, at: lo)
        leafTallies.add(slot, to: l, count: leaves[l].count)
        if leaves[l].count > leafCapacity && depth < maxDepth {
            let list = leaves[l]
            freeLeaf(l)
            let subtree = build(list[...], depth: depth)
            replace(parent: parent, quadrant: parentQuadrant, with: subtree)
        }
    }

    /// Removes the report of slot `si` (its record `slot`, still in the table), which the
    /// tree holds. Visits one node per level; bounds (box, key range, time range) that the
    /// report defined are recomputed from the node's four children. An inner node left
    /// with at most half a leaf's capacity becomes a leaf again.
    func remove(_ si: UInt32, _ slot: Slot) {
        count -= 1
        var path = InlineArray<40, Int32>(repeating: 0)
        var pathCount = 0
        var ref = root
        while ref >= 0 {
            path[pathCount] = ref
            pathCount += 1
            ref = children[Int(ref) * 4 + Self.quadrant(slot.key, depth: pathCount)]
        }
        let l = Int(~ref)
        leaves[l].remove(at: leaves[l].firstIndex(of: si)!)
        var childGone = false
        if leaves[l].isEmpty && pathCount > 0 {
            freeLeaf(l)
            childGone = true
        } else {
            leafTallies.remove(slot, from: l, list: leaves[l], depth: pathCount, slots: slots)
        }
        var level = pathCount - 1
        while level >= 0 {
            let node = Int(path[level])
            if childGone { children[node * 4 + Self.quadrant(slot.key, depth: level + 1)] = Self.none }
            childGone = false
            subtract(slot, from: node)
            let remaining = total(node)
            if remaining == 0 {
                freeNodes.append(Int32(node))
                childGone = true
                if level == 0 { root = makeLeaf([], depth: 0) }
            } else if remaining <= leafCapacity / 2 {
                var gathered: [UInt32] = []
                gathered.reserveCapacity(remaining)
                free(Ref(node), gathering: &gathered)
                let leaf = makeLeaf(gathered, depth: level)
                let parent = level == 0 ? -1 : Int(path[level - 1])
                replace(parent: parent, quadrant: Self.quadrant(slot.key, depth: level), with: leaf)
            }
            level -= 1
        }
    }

    private func subtract(_ slot: Slot, from node: Int) {
        let s = Int(slot.status)
        let i = node * statusCount + s
        aggregates[i].count -= 1
        aggregates[i].sumX -= UInt64(slot.x)
        aggregates[i].sumY -= UInt64(slot.y)
        if aggregates[i].count == 0 {
            aggregates[i] = Aggregate()
        } else if aggregates[i].touches(slot) {
            recompute(node, status: s)
        }
        if slot.createdAt == createdMin[node] || slot.createdAt == createdMax[node] {
            recomputeCreated(node)
        }
    }

    private func replace(parent: Int, quadrant: Int, with ref: Ref) {
        if parent < 0 { root = ref } else { children[parent * 4 + quadrant] = ref }
    }

    /// Bytes held by the tree's arrays (capacity, not just count), its table's not included.
    var memoryBytes: Int {
        var bytes = children.capacity * 4 + aggregates.capacity * MemoryLayout<Aggregate>.stride
        bytes += (createdMin.capacity + createdMax.capacity) * 8 + freeNodes.capacity * 4 + freeLeaves.capacity * 4
        bytes += leaves.capacity * MemoryLayout<[UInt32]>.stride
        for leaf in leaves where leaf.capacity > 0 { bytes += 32 + leaf.capacity * 4 }
        return bytes + leafTallies.memoryBytes
    }
}

/// Count, coordinate sums and bounds of a set of reports; what an inner node keeps per
/// status, and what a query adds up for a cell. Sums are exact integers.
struct Aggregate {
    var count: UInt32 = 0
    var minX: UInt32 = .max
    var maxX: UInt32 = 0
    var minY: UInt32 = .max
    var maxY: UInt32 = 0
    var sumX: UInt64 = 0
    var sumY: UInt64 = 0
    /// The first and last Morton keys: the cells they share are the cells all share.
    var minKey: UInt64 = .max
    var maxKey: UInt64 = 0

    @inline(__always)
    mutating func add(_ slot: QuadTree.Slot) {
        count += 1
        sumX += UInt64(slot.x)
        sumY += UInt64(slot.y)
        minX = min(minX, slot.x)
        maxX = max(maxX, slot.x)
        minY = min(minY, slot.y)
        maxY = max(maxY, slot.y)
        minKey = min(minKey, slot.key)
        maxKey = max(maxKey, slot.key)
    }

    @inline(__always)
    mutating func merge(_ other: Aggregate) {
        guard other.count > 0 else { return }
        count += other.count
        sumX += other.sumX
        sumY += other.sumY
        minX = min(minX, other.minX)
        maxX = max(maxX, other.maxX)
        minY = min(minY, other.minY)
        maxY = max(maxY, other.maxY)
        minKey = min(minKey, other.minKey)
        maxKey = max(maxKey, other.maxKey)
    }

    /// Whether the report lies on one of the bounds (so removing it may move them).
    func touches(_ slot: QuadTree.Slot) -> Bool {
        slot.x == minX || slot.x == maxX || slot.y == minY || slot.y == maxY || slot.key == minKey || slot.key == maxKey
    }
}
