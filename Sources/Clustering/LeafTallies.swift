/// The tallies that shallow leaves of a ``QuadTree`` keep of their reports.
///
/// Why: where reports are sparse, leaves sit high in the tree and hold their reports for
/// a large area. A query whose cells lie below such a leaf has to look at every report in
/// it, as inner nodes' aggregates stop above. The uniform world's 8-day period trees are
/// leaves four levels down (a few thousand reports a tree over the world): a z2 view of
/// 90 days looked at some 100,000 reports. A leaf that keeps its tally answers a cell
/// that holds all its reports in one step instead.
///
/// Only leaves at ``deepest`` or above keep one: deeper leaves lie in cells of the zooms
/// at which a view holds few reports, and dense data (a city) keeps nearly all its leaves
/// deeper, so it pays next to nothing. The tallies are not saved with an index; a tree
/// read back makes them from its leaves (``QuadTree/init(table:storage:statusCount:maxDepth:leafCapacity:)``).
struct LeafTallies {
    /// The deepest level whose leaves keep a tally: cells of zoom 8 with 64-px cells, a
    /// square some 40 km wide at the equator.
    static let deepest = 10

    /// A leaf's tally as kept: its counts by status in 16 bits each (88 bytes, where a
    /// ``QuadTree/Tally`` takes 128). A leaf of more than 65,535 reports (only the deepest
    /// level's grow past their capacity) keeps none.
    struct Kept {
        var aggregate: Aggregate
        var statusCounts: InlineArray<16, UInt16>

        var tally: QuadTree.Tally {
            var counts = SIMD16<UInt32>()
            for s in 0..<16 { counts[s] = UInt32(statusCounts[s]) }
            return QuadTree.Tally(aggregate: aggregate, statusCounts: counts)
        }
    }

    /// For each leaf of the tree, the place of its tally in `tallies`, or -1 for none.
    private(set) var place: [Int32] = []
    private(set) var tallies: [Kept] = []
    private var free: [Int32] = []

    /// Empty: no leaf keeps a tally.
    init() {}

    /// For a tree whose `leafCount` leaves keep none yet.
    init(leafCount: Int) {
        place = Array(repeating: -1, count: leafCount)
    }

    /// Makes room for one more leaf, which keeps none.
    mutating func appendLeaf() { place.append(-1) }

    /// Gives `leaf`, at level `depth`, the tally of the `list` of slots when it is shallow
    /// enough; drops any it had otherwise.
    mutating func set(_ leaf: Int, depth: Int, list: [UInt32], slots: [QuadTree.Slot]) {
        guard depth <= Self.deepest, list.count <= Int(UInt16.max) else { return drop(leaf) }
        var all = QuadTree.Tally()
        for i in list { all.add(slots[Int(i)]) }
        let tally = Kept(aggregate: all.aggregate, statusCounts: InlineArray { UInt16(all.statusCounts[$0]) })
        if place[leaf] >= 0 {
            tallies[Int(place[leaf])] = tally
        } else if let f = free.popLast() {
            tallies[Int(f)] = tally
            place[leaf] = f
        } else {
            tallies.append(tally)
            place[leaf] = Int32(tallies.count - 1)
        }
    }

    /// Drops the tally of `leaf`, if it keeps one (a leaf freed, split or gone deeper).
    mutating func drop(_ leaf: Int) {
        guard place[leaf] >= 0 else { return }
        free.append(place[leaf])
        place[leaf] = -1
    }

    /// Counts a report added to `leaf`, which now lists `count` reports.
    mutating func add(_ slot: QuadTree.Slot, to leaf: Int, count: Int) {
        guard place[leaf] >= 0 else { return }
        guard count <= Int(UInt16.max) else { return drop(leaf) }
        let t = Int(place[leaf])
        tallies[t].aggregate.add(slot)
        tallies[t].statusCounts[Int(slot.status)] += 1
    }

    /// Takes a report removed from `leaf` (which now lists `list`) out of its tally: its
    /// count and sums at once, its bounds made again from the list when it lay on one.
    mutating func remove(_ slot: QuadTree.Slot, from leaf: Int, list: [UInt32], depth: Int, slots: [QuadTree.Slot]) {
        guard place[leaf] >= 0 else { return }
        let t = Int(place[leaf])
        if tallies[t].aggregate.touches(slot) { return set(leaf, depth: depth, list: list, slots: slots) }
        tallies[t].aggregate.count -= 1
        tallies[t].aggregate.sumX -= UInt64(slot.x)
        tallies[t].aggregate.sumY -= UInt64(slot.y)
        tallies[t].statusCounts[Int(slot.status)] -= 1
    }

    var memoryBytes: Int {
        place.capacity * 4 + tallies.capacity * MemoryLayout<Kept>.stride + free.capacity * 4
    }
}
