/// The reports of a ``ClusterIndex``, one record (slot) each, found by slot number or by
/// id. The index's trees (the whole and each period's, see ``PeriodTrees``) list slot
/// numbers of one table, so a report's record is held once however many trees hold it.
final class SlotTable {
    private(set) var slots: [QuadTree.Slot]
    private var freeSlots: [UInt32] = []
    /// Slot numbers by id: ids below `dense.count` in the array (``absent`` where none),
    /// the rest in `sparse`. A store numbers its reports 1, 2, 3…, so the array holds
    /// nearly all of them in 4 bytes each, a third of what a dictionary takes; an id far
    /// beyond the others (an import's own numbers) does not make it grow.
    private var dense: [UInt32] = []
    private var sparse: [UInt32: UInt32] = [:]
    private(set) var count = 0
    static let absent = UInt32.max

    /// A table of `slots` in the order given; a repeated id is returned as the error.
    init(_ slots: [QuadTree.Slot]) throws(QuadTree.DuplicateID) {
        self.slots = slots
        // The array reaches the highest id it may hold: ids far beyond the others go to the dictionary.
        let limit = Self.denseLimit(count: slots.count)
        let highest = slots.lazy.map { Int($0.id) }.filter { $0 < limit }.max() ?? -1
        dense = Array(repeating: Self.absent, count: highest + 1)
        for (i, slot) in slots.enumerated() where !place(slot.id, UInt32(i)) {
            throw QuadTree.DuplicateID(id: Int64(slot.id))
        }
    }

    /// A table's arrays as they are, for a snapshot (`IndexSnapshot.swift`).
    struct Storage {
        var slots: [QuadTree.Slot]
        var freeSlots: [UInt32]
        var dense: [UInt32]
        var sparse: [UInt32: UInt32]
        var count: Int
    }

    var storage: Storage { Storage(slots: slots, freeSlots: freeSlots, dense: dense, sparse: sparse, count: count) }

    /// A table with arrays read back from a snapshot, checked by the caller.
    init(storage s: Storage) {
        (slots, freeSlots, dense, sparse, count) = (s.slots, s.freeSlots, s.dense, s.sparse, s.count)
    }

    /// How far the array may reach for `count` reports.
    private static func denseLimit(count: Int) -> Int { 2 * count + 1_024 }

    /// Records `id` at slot `si`; false when the id is there already.
    private func place(_ id: UInt32, _ si: UInt32) -> Bool {
        if Int(id) >= dense.count, Int(id) < Self.denseLimit(count: count) {
            dense.append(contentsOf: repeatElement(Self.absent, count: Int(id) + 1 - dense.count + dense.count / 2))
        }
        if Int(id) < dense.count, dense[Int(id)] == Self.absent, sparse[id] == nil {
            dense[Int(id)] = si
        } else if Int(id) >= dense.count || dense[Int(id)] == Self.absent {
            guard sparse.updateValue(si, forKey: id) == nil else { return false }
        } else {
            return false
        }
        count += 1
        return true
    }

    /// The slot of report `id`, or nil.
    func index(of id: UInt32) -> UInt32? {
        if Int(id) < dense.count, dense[Int(id)] != Self.absent { return dense[Int(id)] }
        return sparse[id]
    }

    /// The record of report `id`, or nil.
    func slot(id: UInt32) -> QuadTree.Slot? {
        index(of: id).map { slots[Int($0)] }
    }

    /// Stores a report whose id is not in the table; returns its slot number.
    func add(_ slot: QuadTree.Slot) -> UInt32 {
        let si: UInt32
        if let free = freeSlots.popLast() {
            si = free
            slots[Int(si)] = slot
        } else {
            si = UInt32(slots.count)
            slots.append(slot)
        }
        let placed = place(slot.id, si)
        precondition(placed, "report \(slot.id) is in the table already")
        return si
    }

    /// Forgets report `id` (its slot is reused later); returns its slot number and record.
    func remove(id: UInt32) -> (index: UInt32, slot: QuadTree.Slot)? {
        let si: UInt32
        if Int(id) < dense.count, dense[Int(id)] != Self.absent {
            si = dense[Int(id)]
            dense[Int(id)] = Self.absent
        } else if let found = sparse.removeValue(forKey: id) {
            si = found
        } else {
            return nil
        }
        count -= 1
        freeSlots.append(si)
        return (si, slots[Int(si)])
    }

    /// Bytes held by the records and the id array (capacity), and an estimate for the dictionary.
    var memoryBytes: Int {
        // Dictionary: a power-of-two table at most 3/4 full, 8 bytes per bucket plus a bit.
        slots.capacity * MemoryLayout<QuadTree.Slot>.stride + freeSlots.capacity * 4 + dense.capacity * 4
            + sparse.capacity * 4 / 3 * 8 + sparse.capacity / 6
    }
}
