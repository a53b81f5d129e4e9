import FlatFiles

/// The index saved as its arrays (``ClusterIndex/save(to:)``) and read back
/// (``ClusterIndex/init(grid:statusCount:loading:)``): what lets a server on ten million
/// reports answer within a second of its start instead of building the index for seven.
///
/// What is read is checked before it is used: every count against the others, every
/// reference (a child, a leaf, a slot, an id's slot) within its array, every status and
/// every ordering a query relies on. The caller's checksum covers damage to the bytes;
/// these checks keep a file that passes it but was not written by this code (or by a
/// bug) from ever becoming an index whose walks leave their arrays.
extension ClusterIndex {
    /// Writes the index to `file` (a consistent copy: writes wait meanwhile), as one
    /// section of the caller's ending.
    public func save(to file: FlatFileWriter) throws {
        try lock.read { () throws in
            try file.write(Int64(grid.cellSize))
            try file.write(Int64(grid.maxZoom))
            try file.write(Int64(grid.minPoints))
            try file.write(Int64(statusCount))
            try file.write(Int64(tree.leafCapacity))
            try file.write(Int64(periods.leafCapacity))
            try Self.save(table.storage, to: file)
            try Self.save(tree.storage, to: file)
            let levels = periods.trees
            try file.write(Int64(levels.count))
            for trees in levels {
                let ordered = trees.sorted { $0.key < $1.key }
                try file.write(ordered.map(\.key))
                for (_, tree) in ordered { try Self.save(tree.storage, to: file) }
            }
        }
    }

    /// An index read back from what ``save(to:)`` wrote, for `grid` and `statusCount`; an
    /// index written for another grid, other statuses or another leaf size is an error,
    /// as is anything that does not hold together.
    public convenience init(grid: ClusterGrid = .standard, statusCount: Int, loading section: inout FlatSectionReader) throws {
        let saved = (
            cellSize: try section.read(), maxZoom: try section.read(), minPoints: try section.read(), statusCount: try section.read()
        )
        guard saved == (Int64(grid.cellSize), Int64(grid.maxZoom), Int64(grid.minPoints), Int64(statusCount)) else {
            throw FlatFileError("the index was saved for another grid or other statuses")
        }
        let leafCapacity = Int(try section.read(in: 2...4_096)), periodLeafCapacity = Int(try section.read(in: 2...8_192))
        let table = SlotTable(storage: try Self.readTable(&section, statusCount: statusCount))
        let reader = TreeReader(table: table, statusCount: statusCount, maxDepth: grid.maxDepth)
        let tree = try reader.read(&section, leafCapacity: leafCapacity)
        guard tree.count == table.count else { throw FlatFileError("the index's tree and table disagree") }
        guard try section.read() == Int64(PeriodTrees.lengths.count) else { throw FlatFileError("the index was saved with other periods") }
        var levels: [[Int64: QuadTree]] = []
        for _ in PeriodTrees.lengths {
            let periods: [Int64] = try section.read(limit: table.count)
            var trees: [Int64: QuadTree] = [:]
            var held = 0
            for period in periods {
                let periodTree = try reader.read(&section, leafCapacity: periodLeafCapacity)
                guard trees.updateValue(periodTree, forKey: period) == nil, periodTree.count > 0 else { throw FlatFileError("a period's tree is repeated or empty") }
                held += periodTree.count
            }
            guard held == table.count else { throw FlatFileError("the period trees and the table disagree") }
            levels.append(trees)
        }
        let periods = PeriodTrees(table: table, trees: levels, statusCount: statusCount, maxDepth: grid.maxDepth, leafCapacity: periodLeafCapacity)
        self.init(grid: grid, statusCount: statusCount, table: table, tree: tree, periods: periods)
    }

    private static func save(_ t: SlotTable.Storage, to file: FlatFileWriter) throws {
        try file.write(t.slots)
        try file.write(t.freeSlots)
        try file.write(t.dense)
        let sparse = t.sparse.sorted { $0.key < $1.key }
        try file.write(sparse.map(\.key))
        try file.write(sparse.map(\.value))
        try file.write(Int64(t.count))
    }

    private static func readTable(_ section: inout FlatSectionReader, statusCount: Int) throws -> SlotTable.Storage {
        let slots: [QuadTree.Slot] = try section.read(limit: Int(UInt32.max))
        let freeSlots: [UInt32] = try section.read(limit: slots.count)
        let dense: [UInt32] = try section.read(limit: Int(UInt32.max))
        let sparseIDs: [UInt32] = try section.read(limit: slots.count)
        let sparseSlots: [UInt32] = try section.read(limit: slots.count)
        let count = Int(try section.read(in: 0...Int64(slots.count)))
        guard sparseIDs.count == sparseSlots.count, count + freeSlots.count == slots.count else {
            throw FlatFileError("the index's table does not add up")
        }
        // Every held report's slot is named once, by its own id; the free slots are the rest.
        var named = [Bool](repeating: false, count: slots.count)
        func name(_ id: UInt32, _ si: UInt32) throws {
            guard Int(si) < slots.count, !named[Int(si)], slots[Int(si)].id == id, Int(slots[Int(si)].status) < statusCount else {
                throw FlatFileError("the index's table names a slot wrongly")
            }
            named[Int(si)] = true
        }
        for (id, si) in dense.enumerated() where si != SlotTable.absent { try name(UInt32(id), si) }
        var sparse: [UInt32: UInt32] = [:]
        sparse.reserveCapacity(sparseIDs.count)
        for (id, si) in zip(sparseIDs, sparseSlots) {
            guard Int(id) >= dense.count || dense[Int(id)] == SlotTable.absent, sparse.updateValue(si, forKey: id) == nil else {
                throw FlatFileError("the index's table holds an id twice")
            }
            try name(id, si)
        }
        for si in freeSlots {
            guard Int(si) < slots.count, !named[Int(si)] else { throw FlatFileError("the index's table frees a held slot") }
            named[Int(si)] = true
        }
        return SlotTable.Storage(slots: slots, freeSlots: freeSlots, dense: dense, sparse: sparse, count: count)
    }

    private static func save(_ t: QuadTree.Storage, to file: FlatFileWriter) throws {
        try file.write(Int64(t.count))
        try file.write(Int64(t.root))
        try file.write(t.children)
        try file.write(t.aggregates)
        try file.write(t.createdMin)
        try file.write(t.createdMax)
        try file.write(t.freeNodes)
        try file.write(nested: t.leaves)
        try file.write(t.freeLeaves)
    }

    /// Reads trees over one table, checking each.
    private struct TreeReader {
        let table: SlotTable
        let statusCount: Int
        let maxDepth: Int
        /// Which slots hold no report.
        let free: [Bool]

        init(table: SlotTable, statusCount: Int, maxDepth: Int) {
            (self.table, self.statusCount, self.maxDepth) = (table, statusCount, maxDepth)
            let storage = table.storage
            var free = [Bool](repeating: false, count: storage.slots.count)
            for si in storage.freeSlots { free[Int(si)] = true }
            self.free = free
        }

        func read(_ section: inout FlatSectionReader, leafCapacity: Int) throws -> QuadTree {
            let slots = table.slots.count
            let count = Int(try section.read(in: 0...Int64(slots)))
            let root = try section.read(in: Int64(Int32.min)...Int64(Int32.max))
            let children: [QuadTree.Ref] = try section.read(limit: Int(Int32.max))
            let nodes = children.count / 4
            let aggregates: [Aggregate] = try section.read(limit: nodes * statusCount)
            let createdMin: [Int64] = try section.read(limit: nodes)
            let createdMax: [Int64] = try section.read(limit: nodes)
            let freeNodes: [Int32] = try section.read(limit: nodes)
            let leaves: [[UInt32]] = try section.read(nestedLimit: Int(Int32.max), elementLimit: slots)
            let freeLeaves: [Int32] = try section.read(limit: leaves.count)
            guard children.count == nodes * 4, aggregates.count == nodes * statusCount, createdMin.count == nodes, createdMax.count == nodes else {
                throw FlatFileError("a tree's node arrays disagree")
            }
            let storage = QuadTree.Storage(
                count: count, children: children, aggregates: aggregates, createdMin: createdMin, createdMax: createdMax, freeNodes: freeNodes,
                leaves: leaves, freeLeaves: freeLeaves, root: QuadTree.Ref(root))
            try check(storage)
            return QuadTree(table: table, storage: storage, statusCount: statusCount, maxDepth: maxDepth, leafCapacity: leafCapacity)
        }

        /// Walks the tree from its root: every node and leaf reached once, within the
        /// depth; every slot a held report's, in the leaf its key leads to; its count the
        /// reports its leaves list.
        private func check(_ t: QuadTree.Storage) throws {
            let slots = table.slots
            var seenNode = [Bool](repeating: false, count: t.createdMin.count), seenLeaf = [Bool](repeating: false, count: t.leaves.count)
            var reports = 0
            // Each node with its depth and its cell (the keys' first 2·depth bits).
            var stack: [(ref: QuadTree.Ref, depth: Int, cell: UInt64)] = [(t.root, 0, 0)]
            while let (ref, depth, cell) = stack.popLast() {
                guard depth <= maxDepth, depth <= 32 else { throw FlatFileError("a tree is deeper than its grid") }
                if ref >= 0 {
                    guard Int(ref) < seenNode.count, !seenNode[Int(ref)] else { throw FlatFileError("a tree's node is out of place") }
                    seenNode[Int(ref)] = true
                    for q in 0..<4 where t.children[Int(ref) * 4 + q] != QuadTree.none {
                        stack.append((t.children[Int(ref) * 4 + q], depth + 1, cell << 2 | UInt64(q)))
                    }
                } else {
                    guard ref != QuadTree.none, Int(~ref) < seenLeaf.count, !seenLeaf[Int(~ref)] else { throw FlatFileError("a tree's leaf is out of place") }
                    seenLeaf[Int(~ref)] = true
                    let leaf = t.leaves[Int(~ref)]
                    for si in leaf {
                        guard Int(si) < slots.count, !free[Int(si)] else { throw FlatFileError("a leaf names a free slot") }
                        guard depth == 0 || slots[Int(si)].key >> UInt64(64 - 2 * depth) == cell else { throw FlatFileError("a report lies in another cell's leaf") }
                    }
                    for k in leaf.indices.dropFirst() where !QuadTree.precedes(slots[Int(leaf[k - 1])], slots[Int(leaf[k])]) {
                        throw FlatFileError("a leaf is out of order")
                    }
                    reports += leaf.count
                }
            }
            guard reports == t.count else { throw FlatFileError("a tree's count disagrees with its leaves") }
            for n in t.freeNodes where Int(n) >= seenNode.count || n < 0 || seenNode[Int(n)] { throw FlatFileError("a tree frees a node in use") }
            for l in t.freeLeaves where Int(l) >= seenLeaf.count || l < 0 || seenLeaf[Int(l)] { throw FlatFileError("a tree frees a leaf in use") }
        }
    }
}
