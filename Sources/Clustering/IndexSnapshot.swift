import FlatFiles

/// The index saved as its arrays (``ClusterIndex/save(to:sections:)``) and read back
/// (``ClusterIndex/init(grid:statusCount:whole:periods:)``): what lets a server on ten
/// million reports answer within a second of its start instead of building the index for
/// seven. A section for the table of reports with the whole tree, and one for each length
/// of period's trees (``SavedLevel``), so that a start reads them on two threads, a level
/// of periods beside the tally where that evens the threads' work.
///
/// What is read is checked before it is used: the arrays' counts against each other;
/// every child, leaf and slot a walk follows within its array, each node and leaf reached
/// once and none both used and free; every status; in the whole tree every report held,
/// in the leaf its key leads to, in key order, and found by its id. Not checked: the
/// aggregates, and where the period trees place their reports (30 million random reads
/// at ten million reports). The caller's checksum finds damage to the bytes; a file
/// forged to pass it could still make a later write trap, so the file is trusted as the
/// database beside it is (the server writes it readable by its owner only).
extension ClusterIndex {
    /// The layout of the records saved byte for byte (sizes and field offsets): a file
    /// saved by a build that laid them out otherwise is refused.
    public static var savedLayout: String {
        let slot = (\QuadTree.Slot.key, \QuadTree.Slot.createdAt, \QuadTree.Slot.x, \QuadTree.Slot.y, \QuadTree.Slot.id, \QuadTree.Slot.status)
        let aggregate = [\Aggregate.count, \Aggregate.minX, \Aggregate.maxX, \Aggregate.minY, \Aggregate.maxY].map { MemoryLayout<Aggregate>.offset(of: $0) ?? -1 }
            + [\Aggregate.sumX, \Aggregate.sumY, \Aggregate.minKey, \Aggregate.maxKey].map { MemoryLayout<Aggregate>.offset(of: $0) ?? -1 }
        let slotOffsets = [
            MemoryLayout<QuadTree.Slot>.offset(of: slot.0), MemoryLayout<QuadTree.Slot>.offset(of: slot.1), MemoryLayout<QuadTree.Slot>.offset(of: slot.2),
            MemoryLayout<QuadTree.Slot>.offset(of: slot.3), MemoryLayout<QuadTree.Slot>.offset(of: slot.4), MemoryLayout<QuadTree.Slot>.offset(of: slot.5),
        ].map { $0 ?? -1 }
        return "slot \(MemoryLayout<QuadTree.Slot>.stride) \(slotOffsets), aggregate \(MemoryLayout<Aggregate>.stride) \(aggregate)"
    }

    /// A copy of the index as it is now, which later writes to this one leave alone: its
    /// arrays are shared until either is written (copied on write), so the copy itself is
    /// cheap. What a save writes from outside the writers' lock.
    public func frozenCopy() -> ClusterIndex {
        let parts = lock.read {
            Self.assemble(
                grid: grid, statusCount: statusCount, table: table.storage, tree: tree.storage, leafCapacity: tree.leafCapacity,
                periods: periods.trees.map { $0.mapValues(\.storage) }, periodLeafCapacity: periods.leafCapacity)
        }
        return ClusterIndex(grid: grid, statusCount: statusCount, table: parts.table, tree: parts.tree, periods: parts.periods)
    }

    /// The objects of an index over arrays: a table, its whole tree and its period trees.
    private static func assemble(
        grid: ClusterGrid, statusCount: Int, table storage: SlotTable.Storage, tree: QuadTree.Storage, leafCapacity: Int,
        periods: [[Int64: QuadTree.Storage]], periodLeafCapacity: Int
    ) -> (table: SlotTable, tree: QuadTree, periods: PeriodTrees) {
        let table = SlotTable(storage: storage)
        func make(_ s: QuadTree.Storage, _ leafCapacity: Int) -> QuadTree {
            QuadTree(table: table, storage: s, statusCount: statusCount, maxDepth: grid.maxDepth, leafCapacity: leafCapacity)
        }
        let levels = periods.map { $0.mapValues { make($0, periodLeafCapacity) } }
        let periodTrees = PeriodTrees(table: table, trees: levels, statusCount: statusCount, maxDepth: grid.maxDepth, leafCapacity: periodLeafCapacity)
        return (table, make(tree, leafCapacity), periodTrees)
    }

    /// The lengths of period whose trees a saved index holds, each in a section of its own.
    public static var periodLevels: Int { PeriodTrees.lengths.count }

    /// Writes the index to `file`: the table and the whole tree as section `sections.whole`,
    /// each level of period trees as the section of its position in `sections.periods`
    /// (``periodLevels`` names). A consistent copy: writes wait meanwhile.
    public func save(to file: FlatFileWriter, sections: (whole: String, periods: [String])) throws {
        precondition(sections.periods.count == Self.periodLevels, "a section for each level of periods")
        try lock.read { () throws in
            for value in [grid.cellSize, grid.maxZoom, grid.minPoints, statusCount, tree.leafCapacity] { try file.write(Int64(value)) }
            try Self.save(table.storage, to: file)
            try Self.save(tree.storage, to: file)
            try file.endSection(sections.whole)
            for (level, trees) in periods.trees.enumerated() {
                for value in [table.slots.count, periods.leafCapacity, level, Int(PeriodTrees.lengths[level])] { try file.write(Int64(value)) }
                let ordered = trees.sorted { $0.key < $1.key }
                try file.write(ordered.map(\.key))
                for (_, tree) in ordered { try Self.save(tree.storage, to: file) }
                try file.endSection(sections.periods[level])
            }
        }
    }

    /// An index of the sections ``save(to:sections:)`` wrote, read on threads of their own
    /// (``readWhole(_:grid:statusCount:)``, ``readPeriodLevel(_:level:grid:statusCount:)``
    /// for each level, in order); parts that do not belong together are an error.
    public convenience init(grid: ClusterGrid = .standard, statusCount: Int, whole: SavedWhole, periods saved: [SavedLevel]) throws {
        for part in [(whole.statusCount, whole.maxDepth)] + saved.map({ ($0.statusCount, $0.maxDepth) }) where part != (statusCount, grid.maxDepth) {
            throw FlatFileError("the index was read for another grid or other statuses")
        }
        guard saved.map(\.level) == Array(0..<Self.periodLevels), Set(saved.map(\.leafCapacity)).count == 1,
              saved.allSatisfy({ $0.slotCount == whole.table.slots.count && $0.trees.reduce(0) { $0 + $1.value.count } == whole.table.count })
        else {
            throw FlatFileError("the period trees and the table disagree")
        }
        let parts = Self.assemble(
            grid: grid, statusCount: statusCount, table: whole.table, tree: whole.tree, leafCapacity: whole.leafCapacity, periods: saved.map(\.trees),
            periodLeafCapacity: saved[0].leafCapacity)
        self.init(grid: grid, statusCount: statusCount, table: parts.table, tree: parts.tree, periods: parts.periods)
    }

    /// The table of reports and the whole tree of a saved index, read and checked.
    public struct SavedWhole: @unchecked Sendable {
        let table: SlotTable.Storage
        let tree: QuadTree.Storage
        let leafCapacity: Int
        let statusCount: Int
        let maxDepth: Int
    }

    /// Reads the section of the table and the whole tree ``save(to:sections:)`` wrote; one
    /// saved for another grid or other statuses is an error.
    public static func readWhole(_ section: inout FlatSectionReader, grid: ClusterGrid = .standard, statusCount: Int) throws -> SavedWhole {
        var head: [Int64] = []
        for _ in 0..<4 { head.append(try section.read()) }
        guard head == [grid.cellSize, grid.maxZoom, grid.minPoints, statusCount].map(Int64.init) else {
            throw FlatFileError("the index was saved for another grid or other statuses")
        }
        let leafCapacity = Int(try section.read(in: 2...4_096))
        let (table, free) = try readTable(&section, statusCount: statusCount)
        let reader = TreeReader(statusCount: statusCount, maxDepth: grid.maxDepth)
        let tree = try reader.read(&section, slotCount: table.slots.count, placed: (table.slots, free))
        guard tree.count == table.count else { throw FlatFileError("the index's tree and table disagree") }
        return SavedWhole(table: table, tree: tree, leafCapacity: leafCapacity, statusCount: statusCount, maxDepth: grid.maxDepth)
    }

    /// One length of period's trees of a saved index, read and checked after the table on
    /// its thread, or after the tally on the tally's (`SavedIndex.swift` in ReportService);
    /// they become trees once the table is there.
    public struct SavedLevel: @unchecked Sendable {
        /// Its position in ``PeriodTrees/lengths``.
        public let level: Int
        let slotCount: Int
        let leafCapacity: Int
        let statusCount: Int
        let maxDepth: Int
        /// The trees' arrays by period number.
        let trees: [Int64: QuadTree.Storage]
    }

    /// Reads the section of the period trees of `level` that ``save(to:sections:)`` wrote.
    public static func readPeriodLevel(_ section: inout FlatSectionReader, level: Int, grid: ClusterGrid = .standard, statusCount: Int) throws -> SavedLevel {
        let slotCount = Int(try section.read(in: 0...Int64(UInt32.max)))
        let leafCapacity = Int(try section.read(in: 2...8_192))
        guard (0..<Self.periodLevels).contains(level), try section.read() == Int64(level), try section.read() == PeriodTrees.lengths[level] else {
            throw FlatFileError("the index was saved with other periods")
        }
        let reader = TreeReader(statusCount: statusCount, maxDepth: grid.maxDepth)
        let periods: [Int64] = try section.read(limit: slotCount)
        var trees: [Int64: QuadTree.Storage] = [:]
        for period in periods {
            let tree = try reader.read(&section, slotCount: slotCount, placed: nil)
            guard tree.count > 0, trees.updateValue(tree, forKey: period) == nil else { throw FlatFileError("a period's tree is repeated or empty") }
        }
        return SavedLevel(level: level, slotCount: slotCount, leafCapacity: leafCapacity, statusCount: statusCount, maxDepth: grid.maxDepth, trees: trees)
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

    private static func readTable(_ section: inout FlatSectionReader, statusCount: Int) throws -> (SlotTable.Storage, free: [Bool]) {
        let slots: [QuadTree.Slot] = try section.read(limit: Int(UInt32.max))
        let freeSlots: [UInt32] = try section.read(limit: slots.count)
        let dense: [UInt32] = try section.read(limit: Int(UInt32.max))
        let sparseIDs: [UInt32] = try section.read(limit: slots.count)
        let sparseSlots: [UInt32] = try section.read(limit: slots.count)
        let count = Int(try section.read(in: 0...Int64(slots.count)))
        guard sparseIDs.count == sparseSlots.count, count + freeSlots.count == slots.count else {
            throw FlatFileError("the index's table does not add up")
        }
        var free = [Bool](repeating: false, count: slots.count)
        for si in freeSlots {
            guard Int(si) < slots.count, !free[Int(si)] else { throw FlatFileError("the index's table frees a slot twice") }
            free[Int(si)] = true
        }
        var sparse: [UInt32: UInt32] = [:]
        sparse.reserveCapacity(sparseIDs.count)
        for (id, si) in zip(sparseIDs, sparseSlots) {
            guard Int(id) >= dense.count || dense[Int(id)] == SlotTable.absent, sparse.updateValue(si, forKey: id) == nil else {
                throw FlatFileError("the index's table holds an id twice")
            }
        }
        // Each held slot is found by its id, and the ids are as many as the held slots: they
        // name exactly those (two slots of one id cannot both be found by it).
        let entries = sparse.count + dense.reduce(0) { $0 + ($1 == SlotTable.absent ? 0 : 1) }
        guard entries == count else { throw FlatFileError("the index's table names more slots than it holds") }
        try slots.withUnsafeBufferPointer { slots in
            try dense.withUnsafeBufferPointer { dense in
                for (i, slot) in slots.enumerated() where !free[i] {
                    let found = Int(slot.id) < dense.count && dense[Int(slot.id)] != SlotTable.absent ? dense[Int(slot.id)] : sparse[slot.id]
                    guard found == UInt32(i), Int(slot.status) < statusCount else { throw FlatFileError("the index's table names a slot wrongly") }
                }
            }
        }
        return (SlotTable.Storage(slots: slots, freeSlots: freeSlots, dense: dense, sparse: sparse, count: count), free)
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

    /// Reads a tree's arrays and checks them.
    private struct TreeReader {
        let statusCount: Int
        let maxDepth: Int

        /// A tree over a table of `slotCount` slots; with `placed` (the table's records and
        /// which slots are free), its reports' places are checked too.
        func read(_ section: inout FlatSectionReader, slotCount: Int, placed: (slots: [QuadTree.Slot], free: [Bool])?) throws -> QuadTree.Storage {
            let count = Int(try section.read(in: 0...Int64(slotCount)))
            let root = try section.read(in: Int64(Int32.min)...Int64(Int32.max))
            let children: [QuadTree.Ref] = try section.read(limit: Int(Int32.max))
            let nodes = children.count / 4
            let aggregates: [Aggregate] = try section.read(limit: nodes * statusCount)
            let createdMin: [Int64] = try section.read(limit: nodes)
            let createdMax: [Int64] = try section.read(limit: nodes)
            let freeNodes: [Int32] = try section.read(limit: nodes)
            let leaves: [[UInt32]] = try section.read(nestedLimit: Int(Int32.max), elementLimit: slotCount)
            let freeLeaves: [Int32] = try section.read(limit: leaves.count)
            guard children.count == nodes * 4, aggregates.count == nodes * statusCount, createdMin.count == nodes, createdMax.count == nodes else {
                throw FlatFileError("a tree's node arrays disagree")
            }
            let storage = QuadTree.Storage(
                count: count, children: children, aggregates: aggregates, createdMin: createdMin, createdMax: createdMax, freeNodes: freeNodes,
                leaves: leaves, freeLeaves: freeLeaves, root: QuadTree.Ref(root))
            try check(storage, slotCount: slotCount, placed: placed)
            return storage
        }

        /// Walks the tree from its root: every node and leaf reached once, within the
        /// depth; every slot within the table; its count the reports its leaves list. With
        /// `placed` (the whole tree) also every slot a held report's, in the leaf its key
        /// leads to, in key order. The period trees' slots are not looked up (30 million
        /// random reads at ten million reports, 0.7 s of a start): the checksum stands for them.
        private func check(_ t: QuadTree.Storage, slotCount: Int, placed: (slots: [QuadTree.Slot], free: [Bool])?) throws {
            var seenNode = [Bool](repeating: false, count: t.createdMin.count), seenLeaf = [Bool](repeating: false, count: t.leaves.count)
            var reports = 0
            // Each node with its depth and its cell (the keys' first 2·depth bits).
            var stack: [(ref: QuadTree.Ref, depth: Int, cell: UInt64)] = [(t.root, 0, 0)]
            try (placed?.slots ?? []).withUnsafeBufferPointer { slots in
                try (placed?.free ?? []).withUnsafeBufferPointer { free in
                    while let (ref, depth, cell) = stack.popLast() {
                        guard depth <= maxDepth, depth <= 32 else { throw FlatFileError("a tree is deeper than its grid") }
                        if ref >= 0 {
                            guard Int(ref) < seenNode.count, !seenNode[Int(ref)] else { throw FlatFileError("a tree's node is out of place") }
                            seenNode[Int(ref)] = true
                            for q in 0..<4 where t.children[Int(ref) * 4 + q] != QuadTree.none {
                                stack.append((t.children[Int(ref) * 4 + q], depth + 1, cell << 2 | UInt64(q)))
                            }
                            continue
                        }
                        guard ref != QuadTree.none, Int(~ref) < seenLeaf.count, !seenLeaf[Int(~ref)] else { throw FlatFileError("a tree's leaf is out of place") }
                        seenLeaf[Int(~ref)] = true
                        let shift = UInt64(64 - 2 * depth)
                        try t.leaves[Int(~ref)].withUnsafeBufferPointer { leaf in
                            reports += leaf.count
                            guard leaf.allSatisfy({ Int($0) < slotCount }) else { throw FlatFileError("a leaf names a slot beyond the table") }
                            guard placed != nil else { return }
                            var previous: QuadTree.Slot?
                            for si in leaf {
                                guard !free[Int(si)] else { throw FlatFileError("a leaf names a free slot") }
                                let slot = slots[Int(si)]
                                guard depth == 0 || slot.key >> shift == cell else { throw FlatFileError("a report lies in another cell's leaf") }
                                guard previous.map({ QuadTree.precedes($0, slot) }) ?? true else { throw FlatFileError("a leaf is out of order") }
                                previous = slot
                            }
                        }
                    }
                }
            }
            guard reports == t.count else { throw FlatFileError("a tree's count disagrees with its leaves") }
            // A free node or leaf is neither in use nor free twice (it would be handed out twice).
            for n in t.freeNodes {
                guard n >= 0, Int(n) < seenNode.count, !seenNode[Int(n)] else { throw FlatFileError("a tree frees a node in use, or twice") }
                seenNode[Int(n)] = true
            }
            for l in t.freeLeaves {
                guard l >= 0, Int(l) < seenLeaf.count, !seenLeaf[Int(l)] else { throw FlatFileError("a tree frees a leaf in use, or twice") }
                seenLeaf[Int(l)] = true
            }
        }
    }
}
