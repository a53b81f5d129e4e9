import Geometry

/// The read paths of the quadtree: clusters of a block of cells, one cell's summary, and
/// the reports of a cell in order.
extension QuadTree {
    /// What a query adds up for one cell: the aggregate of its matching reports and their
    /// counts by status.
    struct Tally {
        var aggregate = Aggregate()
        var statusCounts = SIMD16<UInt32>()

        /// Counts one report. Its status is counted by adding a vector with 1 in that
        /// status's lane, in registers: writing one lane by a variable index goes through
        /// memory and stalls the next read of the whole vector, report after report.
        @inline(__always)
        mutating func add(_ slot: Slot) {
            aggregate.add(slot)
            statusCounts &+= Self.one.replacing(with: 0, where: Self.lanes .!= SIMD16(repeating: UInt32(slot.status)))
        }

        mutating func merge(_ other: Tally) {
            aggregate.merge(other.aggregate)
            statusCounts &+= other.statusCounts
        }

        private static var lanes: SIMD16<UInt32> { SIMD16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15) }
        private static var one: SIMD16<UInt32> { SIMD16(repeating: 1) }
    }

    /// A block of cells at one level, in cell numbers of that level.
    struct Block {
        var depth: Int
        var x0: UInt64, x1: UInt64, y0: UInt64, y1: UInt64
    }

    /// Calls `emit` for each cell of `block` with matching reports, in Z-order: with the
    /// tally, and a way to list the cell's matching slots (needed for small cells).
    func visit(_ block: Block, filter: ClusterFilter, emit: (_ cellKey: UInt64, _ tally: Tally, _ ref: Ref) -> Void) {
        withReader { $0.visit(root, block: block, filter: filter, emit: emit) }
    }

    /// Adds up the matching reports under `ref`; in a leaf, only those of `cellKey` at
    /// level `depth` when given (see ``Reader/summarize(_:filter:cellKey:depth:into:)``).
    func summarize(_ ref: Ref, filter: ClusterFilter, cellKey: UInt64?, depth: Int, into tally: inout Tally) {
        withReader { $0.summarize(ref, filter: filter, cellKey: cellKey, depth: depth, into: &tally) }
    }

    /// The tree's arrays as buffers, taken once for a whole walk. Each read of an array
    /// property of this class retains and releases its storage, and queries running on
    /// two cores at once then contend for the same counts: a tenth of the server's CPU
    /// under z14 load went there.
    func withReader<R>(_ body: (Reader) throws -> R) rethrows -> R {
        try children.withUnsafeBufferPointer { children in
            try slots.withUnsafeBufferPointer { slots in
                try aggregates.withUnsafeBufferPointer { aggregates in
                    try leaves.withUnsafeBufferPointer { leaves in
                        try createdMin.withUnsafeBufferPointer { createdMin in
                            try createdMax.withUnsafeBufferPointer { createdMax in
                                try leafTallies.place.withUnsafeBufferPointer { tallyPlace in
                                    try leafTallies.tallies.withUnsafeBufferPointer { tallies in
                                        try body(Reader(
                                            children: children, slots: slots, aggregates: aggregates, leaves: leaves,
                                            createdMin: createdMin, createdMax: createdMax, tallyPlace: tallyPlace, tallies: tallies,
                                            statusCount: statusCount))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// See ``withReader(_:)``; valid only inside its closure.
    struct Reader {
        let children: UnsafeBufferPointer<Ref>
        let slots: UnsafeBufferPointer<Slot>
        let aggregates: UnsafeBufferPointer<Aggregate>
        let leaves: UnsafeBufferPointer<[UInt32]>
        let createdMin: UnsafeBufferPointer<Int64>
        let createdMax: UnsafeBufferPointer<Int64>
        /// The tallies of shallow leaves, by leaf (see ``LeafTallies``).
        let tallyPlace: UnsafeBufferPointer<Int32>
        let tallies: UnsafeBufferPointer<LeafTallies.Kept>
        let statusCount: Int

        /// The slot numbers of a leaf, read in place.
        @inline(__always)
        func withLeaf<R>(_ leaf: Int, _ body: (UnsafeBufferPointer<UInt32>) -> R) -> R {
            (leaves.baseAddress.unsafelyUnwrapped + leaf).pointee.withUnsafeBufferPointer(body)
        }

        /// The walk of ``QuadTree/visit(_:filter:emit:)``, depth first with a stack of its
        /// own rather than by recursion: a recursive call passed `emit`'s captures on,
        /// retaining and releasing them at every node.
        func visit(_ root: Ref, block: Block, filter: ClusterFilter, emit: (UInt64, Tally, Ref) -> Void) {
            // Each step takes one node off and puts at most four on: 3 per level plus 4.
            withUnsafeTemporaryAllocation(of: Pending.self, capacity: 3 * (block.depth + 1) + 4) { stack in
                stack[0] = Pending(ref: root, depth: 0, cx: 0, cy: 0)
                var count = 1
                while count > 0 {
                    count -= 1
                    let next = stack[count]
                    if next.ref < 0 {
                        scan(leaf: Int(~next.ref), depth: next.depth, block: block, filter: filter, emit: emit)
                        continue
                    }
                    if next.depth == block.depth {
                        var tally = Tally()
                        summarize(next.ref, filter: filter, cellKey: nil, depth: next.depth, into: &tally)
                        if tally.aggregate.count > 0 { emit(cellKey(next.cx, next.cy), tally, next.ref) }
                        continue
                    }
                    // Children go on in reverse, so that they come off in Z-order.
                    let node = Int(next.ref)
                    let shift = UInt64(block.depth - next.depth - 1)
                    for q in (0..<4).reversed() {
                        let child = children[node * 4 + q]
                        if child == QuadTree.none { continue }
                        let x = next.cx << 1 | UInt64(q & 1), y = next.cy << 1 | UInt64(q >> 1)
                        guard x << shift <= block.x1, (x + 1) << shift > block.x0, y << shift <= block.y1, (y + 1) << shift > block.y0 else { continue }
                        stack[count] = Pending(ref: child, depth: next.depth + 1, cx: x, cy: y)
                        count += 1
                    }
                }
            }
        }

        /// Calls `body` with the matching slots of cell `cellKey` (level `depth`) under `ref`,
        /// in key order, after skipping `skip` of them; `body` returns false to stop. Whole
        /// subtrees are skipped by their counts when the filter allows it.
        @discardableResult
        func forEachSlot(
            _ ref: Ref, cellKey: UInt64, depth: Int, filter: ClusterFilter, skip: inout Int, _ body: (Slot) -> Bool
        ) -> Bool {
            if ref < 0 {
                let shift = UInt64(64 - 2 * depth)
                return withLeaf(Int(~ref)) { list in
                    for i in list {
                        let slot = slots[Int(i)]
                        if depth > 0, slot.key >> shift != cellKey { continue }
                        guard filter.matches(status: slot.status, createdAt: slot.createdAt) else { continue }
                        if skip > 0 {
                            skip -= 1
                        } else if !body(slot) {
                            return false
                        }
                    }
                    return true
                }
            }
            let node = Int(ref)
            if skip > 0 {
                var tally = Tally()
                summarize(ref, filter: filter, cellKey: nil, depth: depth, into: &tally)
                let n = Int(tally.aggregate.count)
                if skip >= n {
                    skip -= n
                    return true
                }
            }
            for q in 0..<4 where children[node * 4 + q] != QuadTree.none {
                if !forEachSlot(children[node * 4 + q], cellKey: cellKey, depth: depth, filter: filter, skip: &skip, body) { return false }
            }
            return true
        }

        func count(_ ref: Ref, depth: Int, cx: UInt64, cy: UInt64, box: FixedBox, filter: ClusterFilter, uncertain: inout [UInt32]) -> Int {
            if ref < 0 {
                return withLeaf(Int(~ref)) { list in
                    var n = 0
                    for i in list {
                        let slot = slots[Int(i)]
                        guard filter.matches(status: slot.status, createdAt: slot.createdAt),
                              slot.x >= box.west, slot.x <= box.east, slot.y >= box.north, slot.y <= box.south else { continue }
                        if slot.x > box.west, slot.x < box.east, slot.y > box.north, slot.y < box.south {
                            n += 1
                        } else {
                            uncertain.append(slot.id)
                        }
                    }
                    return n
                }
            }
            // The node's cell in fixed-point units.
            let shift = UInt64(32 - depth)
            let x0 = cx << shift, x1 = ((cx + 1) << shift) - 1, y0 = cy << shift, y1 = ((cy + 1) << shift) - 1
            if x0 > UInt64(box.west), x1 < UInt64(box.east), y0 > UInt64(box.north), y1 < UInt64(box.south) {
                var tally = Tally()
                summarize(ref, filter: filter, cellKey: nil, depth: depth, into: &tally)
                return Int(tally.aggregate.count)
            }
            var n = 0
            forEachChild(of: Int(ref), depth: depth, cx: cx, cy: cy, meeting: box) { child, x, y in
                n += count(child, depth: depth + 1, cx: x, cy: y, box: box, filter: filter, uncertain: &uncertain)
            }
            return n
        }

        /// Calls `body` with each child of `node` (the cell `cx`, `cy` of level `depth`) whose
        /// cell meets `box`, and that cell.
        @inline(__always)
        private func forEachChild(of node: Int, depth: Int, cx: UInt64, cy: UInt64, meeting box: FixedBox, _ body: (Ref, UInt64, UInt64) -> Void) {
            let s = UInt64(32 - depth - 1)
            for q in 0..<4 where children[node * 4 + q] != QuadTree.none {
                let x = cx << 1 | UInt64(q & 1), y = cy << 1 | UInt64(q >> 1)
                guard x << s <= UInt64(box.east), ((x + 1) << s) - 1 >= UInt64(box.west),
                      y << s <= UInt64(box.south), ((y + 1) << s) - 1 >= UInt64(box.north) else { continue }
                body(children[node * 4 + q], x, y)
            }
        }

        /// Calls `body` with every matching slot in `box` (those in an edge unit included).
        func forEachSlot(_ ref: Ref, depth: Int, cx: UInt64, cy: UInt64, box: FixedBox, filter: ClusterFilter, _ body: (Slot) -> Void) {
            if ref < 0 {
                withLeaf(Int(~ref)) { list in
                    for i in list {
                        let slot = slots[Int(i)]
                        guard filter.matches(status: slot.status, createdAt: slot.createdAt),
                              slot.x >= box.west, slot.x <= box.east, slot.y >= box.north, slot.y <= box.south else { continue }
                        body(slot)
                    }
                }
                return
            }
            let shift = UInt64(32 - depth)
            let x0 = cx << shift, x1 = ((cx + 1) << shift) - 1, y0 = cy << shift, y1 = ((cy + 1) << shift) - 1
            if x0 >= UInt64(box.west), x1 <= UInt64(box.east), y0 >= UInt64(box.north), y1 <= UInt64(box.south) {
                var skip = 0
                forEachSlot(ref, cellKey: cellKey(cx, cy), depth: depth, filter: filter, skip: &skip) { slot in
                    body(slot)
                    return true
                }
                return
            }
            forEachChild(of: Int(ref), depth: depth, cx: cx, cy: cy, meeting: box) { child, x, y in
                forEachSlot(child, depth: depth + 1, cx: x, cy: y, box: box, filter: filter, body)
            }
        }

        /// A node yet to visit, and its cell.
        private struct Pending {
            var ref: Ref
            var depth: Int
            var cx: UInt64, cy: UInt64
        }

        /// The cells of `block` inside one leaf: its slots are in key order, so each cell's
        /// reports are one run, and a cell's key is the top bits of theirs. A leaf that
        /// keeps a tally, all of whose reports lie in one cell and match, is that tally.
        private func scan(leaf: Int, depth: Int, block: Block, filter: ClusterFilter, emit: (UInt64, Tally, Ref) -> Void) {
            // Deeper leaves keep none: not looked up, as dense data's leaves are all deeper.
            if depth <= LeafTallies.deepest, emitTally(leaf: leaf, block: block, filter: filter, emit: emit) { return }
            let shift = UInt32(32 - block.depth), keyShift = UInt64(64 - 2 * block.depth)
            var current = UInt64.max
            var tally = Tally()
            withLeaf(leaf) { list in
                for i in list {
                    let slot = slots[Int(i)]
                    let x = UInt64(slot.x >> shift), y = UInt64(slot.y >> shift)
                    guard x >= block.x0, x <= block.x1, y >= block.y0, y <= block.y1, filter.matches(status: slot.status, createdAt: slot.createdAt) else { continue }
                    let cell = slot.key >> keyShift
                    if cell != current {
                        if tally.aggregate.count > 0 { emit(current, tally, ~Int32(leaf)) }
                        tally = Tally()
                        current = cell
                    }
                    tally.add(slot)
                }
            }
            if tally.aggregate.count > 0 { emit(current, tally, ~Int32(leaf)) }
        }

        /// Emits the tally of `leaf` as its cell's, when it keeps one, `filter` takes every
        /// report in it and they all lie in one cell of the block's level; false when the
        /// leaf has to be scanned.
        @inline(never)
        private func emitTally(leaf: Int, block: Block, filter: ClusterFilter, emit: (UInt64, Tally, Ref) -> Void) -> Bool {
            let place = tallyPlace[leaf]
            guard place >= 0, filter.created == nil else { return false }
            let tally = tallies[Int(place)].tally
            if filter.statuses != .max {
                for s in 0..<statusCount where tally.statusCounts[s] != 0 && filter.statuses & (1 << UInt64(s)) == 0 { return false }
            }
            let a = tally.aggregate, shift = UInt32(32 - block.depth), keyShift = UInt64(64 - 2 * block.depth)
            guard a.minKey >> keyShift == a.maxKey >> keyShift else { return false }
            let x = UInt64(a.minX >> shift), y = UInt64(a.minY >> shift)
            if a.count > 0, x >= block.x0, x <= block.x1, y >= block.y0, y <= block.y1 { emit(a.minKey >> keyShift, tally, ~Int32(leaf)) }
            return true
        }

        /// Adds up the matching reports under `ref`; in a leaf, only those of `cellKey` at
        /// level `depth` when given. Status filters read the per-status aggregates; a time
        /// filter uses them for nodes whose whole time range is inside it, skips nodes
        /// outside it, and looks inside the rest.
        func summarize(_ ref: Ref, filter: ClusterFilter, cellKey: UInt64?, depth: Int, into tally: inout Tally) {
            if ref < 0 {
                let shift = UInt64(64 - 2 * depth)
                withLeaf(Int(~ref)) { list in
                    for i in list {
                        let slot = slots[Int(i)]
                        if let cellKey, depth > 0, slot.key >> shift != cellKey { continue }
                        if filter.matches(status: slot.status, createdAt: slot.createdAt) { tally.add(slot) }
                    }
                }
                return
            }
            let node = Int(ref)
            if let range = filter.created, !(range.lowerBound <= createdMin[node] && createdMax[node] <= range.upperBound) {
                guard createdMax[node] >= range.lowerBound, createdMin[node] <= range.upperBound else { return }
                for q in 0..<4 where children[node * 4 + q] != QuadTree.none {
                    summarize(children[node * 4 + q], filter: filter, cellKey: nil, depth: depth, into: &tally)
                }
                return
            }
            var mask = filter.statuses & ((1 << UInt64(statusCount)) - 1)
            let first = node * statusCount
            while mask != 0 {
                let s = mask.trailingZeroBitCount
                mask &= mask - 1
                let a = aggregates[first + s]
                tally.aggregate.merge(a)
                tally.statusCounts[s] += a.count
            }
        }
    }

    /// The node holding the cell `cellKey` of level `depth`: an inner node of that level,
    /// or the leaf it lies in; nil when nothing is there.
    func find(cellKey: UInt64, depth: Int) -> Ref? {
        var ref = root, level = 0
        while ref >= 0 && level < depth {
            ref = children[Int(ref) * 4 + Int(truncatingIfNeeded: cellKey >> UInt64(2 * (depth - level - 1))) & 3]
            if ref == Self.none { return nil }
            level += 1
        }
        return ref
    }

    /// Calls `body` with the matching slots of cell `cellKey` (level `depth`) under `ref`,
    /// in key order, after skipping `skip` of them; `body` returns false to stop. Whole
    /// subtrees are skipped by their counts when the filter allows it.
    @discardableResult
    func forEachSlot(
        _ ref: Ref, cellKey: UInt64, depth: Int, filter: ClusterFilter, skip: inout Int, _ body: (Slot) -> Bool
    ) -> Bool {
        withReader { $0.forEachSlot(ref, cellKey: cellKey, depth: depth, filter: filter, skip: &skip, body) }
    }
}

/// The Morton code of a cell (both numbers below 2^32).
@inline(__always)
func cellKey(_ x: UInt64, _ y: UInt64) -> UInt64 {
    Morton.code(x: UInt32(truncatingIfNeeded: x), y: UInt32(truncatingIfNeeded: y))
}

extension QuadTree {
    /// A box in fixed-point Mercator: the unit each edge falls in (`floor(v · 2^32)`).
    /// Reports in a unit strictly between the edge units are inside the box, those in a
    /// unit beyond them outside; only those in an edge unit (under 1 cm wide) are uncertain.
    struct FixedBox {
        var west: UInt32, east: UInt32, north: UInt32, south: UInt32
    }

    /// Counts the matching reports certainly inside `box` and collects the ids of those on
    /// its edge units, whose exact positions decide.
    func count(in box: FixedBox, filter: ClusterFilter, uncertain: inout [UInt32]) -> Int {
        withReader { $0.count(root, depth: 0, cx: 0, cy: 0, box: box, filter: filter, uncertain: &uncertain) }
    }

    /// Calls `body` with every matching slot in `box`, to the fixed-point unit.
    func forEachSlot(in box: FixedBox, filter: ClusterFilter, _ body: (Slot) -> Void) {
        withReader { $0.forEachSlot(root, depth: 0, cx: 0, cy: 0, box: box, filter: filter, body) }
    }
}
