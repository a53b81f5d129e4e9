/// The index's reports again, split by when they were created: for each period length
/// (64 days, 8 days, one day; periods aligned on 1970-01-01 UTC), one quadtree per period
/// that has reports, over the same slots as the whole tree.
///
/// Why: a creation-time filter on the whole tree can use a node's aggregates only when
/// all of the node's reports fall on one side of an end of the interval, and reports of
/// every date lie side by side on a map, so such a filter looked at every report in view.
/// An interval is instead a few whole periods, whose trees answer from their aggregates
/// as the whole tree does without a filter, and at most two days cut by its ends, whose
/// small trees are looked into (``cover(_:)``). Two years of reports are at most 11 + 7 +
/// 7 + 2 trees, usually far fewer. Each report is in one tree per length: about
/// 4 bytes per report per length for its place in a leaf, plus the trees' nodes.
final class PeriodTrees {
    /// Period lengths in days, longest first; each a multiple of the next, the last 1.
    static let lengths: [Int64] = [64, 8, 1]
    static let millisecondsPerDay: Int64 = 86_400_000

    let table: SlotTable
    let statusCount: Int
    let maxDepth: Int
    let leafCapacity: Int
    /// For each length, the trees by period number (the period's first day ÷ its length).
    private var levels: [[Int64: QuadTree]]

    /// Builds the trees over the slots `list` of `table`, in key order (then id).
    init(table: SlotTable, list: [UInt32], statusCount: Int, maxDepth: Int, leafCapacity: Int) {
        self.table = table
        self.statusCount = statusCount
        self.maxDepth = maxDepth
        self.leafCapacity = leafCapacity
        levels = []
        // Grouping in list order keeps each period's list in key order.
        var days: [Int64] = []
        days.reserveCapacity(list.count)
        for si in list { days.append(Self.day(table.slots[Int(si)].createdAt)) }
        for length in Self.lengths {
            var lists: [Int64: [UInt32]] = [:]
            for (k, si) in list.enumerated() {
                lists[Self.floorDivide(days[k], length), default: []].append(si)
            }
            levels.append(lists.mapValues { self.tree($0) })
        }
    }

    /// The trees of each length by period, for a snapshot (`IndexSnapshot.swift`).
    var trees: [[Int64: QuadTree]] { levels }

    /// Period trees read back from a snapshot, checked by the caller.
    init(table: SlotTable, trees: [[Int64: QuadTree]], statusCount: Int, maxDepth: Int, leafCapacity: Int) {
        (self.table, levels, self.statusCount, self.maxDepth, self.leafCapacity) = (table, trees, statusCount, maxDepth, leafCapacity)
    }

    private func tree(_ list: [UInt32]) -> QuadTree {
        QuadTree(table: table, list: list, statusCount: statusCount, maxDepth: maxDepth, leafCapacity: leafCapacity)
    }

    /// Adds the report of slot `si` to its period's tree at every length.
    func insert(_ si: UInt32) {
        let day = Self.day(table.slots[Int(si)].createdAt)
        for (level, length) in Self.lengths.enumerated() {
            let period = Self.floorDivide(day, length)
            if let tree = levels[level][period] {
                tree.insert(si)
            } else {
                levels[level][period] = tree([si])
            }
        }
    }

    /// Removes the report of slot `si` (record `slot`) from its period's trees; a tree left
    /// empty goes.
    func remove(_ si: UInt32, _ slot: QuadTree.Slot) {
        let day = Self.day(slot.createdAt)
        for (level, length) in Self.lengths.enumerated() {
            let period = Self.floorDivide(day, length)
            guard let tree = levels[level][period] else { continue }
            tree.remove(si, slot)
            if tree.count == 0 { levels[level][period] = nil }
        }
    }

    /// Trees that together hold exactly the reports created in `range`, each once: whole
    /// periods inside it (`cut` false: every report of the tree is in the range), and the
    /// days its ends fall inside (`cut` true: the tree's reports still need the filter).
    func cover(_ range: ClosedRange<Int64>) -> [(tree: QuadTree, cut: Bool)] {
        var found: [(tree: QuadTree, cut: Bool)] = []
        let ms = Self.millisecondsPerDay
        let firstDay = Self.day(range.lowerBound), lastDay = Self.day(range.upperBound)
        let startsWhole = Self.floorModulo(range.lowerBound, ms) == 0
        let endsWhole = Self.floorModulo(range.upperBound, ms) == ms - 1
        let days = levels.count - 1
        func cut(_ day: Int64) {
            if let tree = levels[days][day] { found.append((tree, true)) }
        }
        if firstDay == lastDay && !(startsWhole && endsWhole) {
            cut(firstDay)
            return found
        }
        var from = firstDay, to = lastDay
        if !startsWhole { cut(firstDay); from += 1 }
        if !endsWhole { cut(lastDay); to -= 1 }
        if from <= to { whole(from, to, level: 0, into: &found) }
        return found
    }

    /// Adds the trees of the days `from...to` (a non-empty run), at the longest lengths
    /// that fit: the whole periods of `level` inside the run, and the run's ends before and
    /// after them at the next level.
    private func whole(_ from: Int64, _ to: Int64, level: Int, into found: inout [(tree: QuadTree, cut: Bool)]) {
        let length = Self.lengths[level], trees = levels[level]
        let first = -Self.floorDivide(-from, length), last = Self.floorDivide(to + 1, length) - 1
        guard first <= last else { return whole(from, to, level: level + 1, into: &found) }
        if from < first * length { whole(from, first * length - 1, level: level + 1, into: &found) }
        // An interval reaching far into the past or future spans more periods than there are trees.
        if last - first < Int64(trees.count) {
            for period in first...last { if let tree = trees[period] { found.append((tree, false)) } }
        } else {
            for (period, tree) in trees where (first...last).contains(period) { found.append((tree, false)) }
        }
        if (last + 1) * length <= to { whole((last + 1) * length, to, level: level + 1, into: &found) }
    }

    /// Bytes held by the trees' arrays and the period maps (the shared table not included).
    var memoryBytes: Int {
        levels.reduce(0) { sum, trees in
            trees.values.reduce(sum + trees.capacity * 24) { $0 + $1.memoryBytes + 128 }
        }
    }

    static func day(_ milliseconds: Int64) -> Int64 { floorDivide(milliseconds, millisecondsPerDay) }

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// `a` modulo a positive `b`, from 0 to b - 1.
    static func floorModulo(_ a: Int64, _ b: Int64) -> Int64 {
        let r = a % b
        return r < 0 ? r + b : r
    }
}
