/// How many reports hold each fragment of three or four digits, in one of their numbers or
/// in their id: the count a phone search of such a fragment answers (`numberMatched`),
/// kept write by write. Short fragments are in many reports (`067` in one of twenty), and
/// counting them in the store reads every match (a PostgreSQL trigram scan rechecks each
/// row: 194 ms for 49,000); here it is one array read.
///
/// A fragment of three digits is slot `0..<1,000` (its value), one of four is slot
/// `1,000 + value`. A report counts once per fragment however often it holds it.
///
/// Each slot also keeps its newest reports, up to ``kept``: what a search's first page
/// answers, newest first, without the store walking thousands of matches (at 10,000,000
/// reports `3804` took 117 ms from SQLite's trigram index). The list is always the exact
/// start of the slot's reports in that order: a report goes in when it is newer than the
/// list's last, or when the list holds every report of the slot; a report taken out
/// leaves the rest a correct, shorter start. A search asks for no more than the list
/// holds, or goes to the store.
struct FragmentCounts {
    static let slots = 11_000
    /// The newest reports kept per fragment: a first page of 50, and room for removals.
    static let kept = 64
    private var counts = [UInt32](repeating: 0, count: slots)
    /// Each slot's newest reports, newest first.
    private var newest = [[Match]](repeating: [], count: slots)
    /// Each slot's list length and its oldest match, flat: what most counts-in need to
    /// see that a report is too old to keep, without reaching into the slot's own array
    /// (a retain, a release and a uniqueness check each, some 200 million times in a
    /// build of ten million reports).
    private var held = [UInt8](repeating: 0, count: slots)
    private var oldest = [Match](repeating: Match(second: .min, id: .min), count: slots)
    /// The report being counted in or out (``begin(_:)``).
    private var current = Match(second: 0, id: 0)

    /// A report as a search orders it: the newer creation second first, then the higher id.
    struct Match: Comparable {
        var second: Int64
        var id: Int64
        static func < (a: Match, b: Match) -> Bool { (a.second, a.id) < (b.second, b.id) }
    }
    /// Each interned number's fragment slots (with repeats), by the tally's number: those
    /// of number n are `slotList[slotStart[n]..<slotStart[n + 1]]` (numbers are only ever
    /// added, so one flat list serves, without an array each to retain at every count).
    private var slotStart: [UInt32] = [0]
    private var slotList: [UInt16] = []
    /// The report each slot was last counted for (a generation), so that a report counts
    /// once per fragment without sorting its slots.
    private var seen = [UInt32](repeating: 0, count: slots)
    private var generation: UInt32 = 0

    /// The counts' arrays as they are, for a snapshot (`TallySnapshot.swift`).
    struct Storage {
        var counts: [UInt32]
        var newest: [[Match]]
        var slotStart: [UInt32]
        var slotList: [UInt16]
    }

    var storage: Storage { Storage(counts: counts, newest: newest, slotStart: slotStart, slotList: slotList) }

    /// Counts read back from a snapshot, checked by the caller.
    init(storage s: Storage) {
        (counts, newest, slotStart, slotList) = (s.counts, s.newest, s.slotStart, s.slotList)
        for slot in 0..<Self.slots { noteEnds(slot) }
    }

    init() {}

    /// The count for `digits` (ASCII digits), or nil when it is not three or four long.
    func count(of digits: some StringProtocol) -> Int? {
        Self.slot(of: digits).map { Int(counts[$0]) }
    }

    /// The ids of the newest `limit` reports holding `digits` (fewer when fewer do), newest
    /// first; nil when the fragment is not three or four digits or the list is too short.
    func newest(of digits: some StringProtocol, limit: Int) -> [Int64]? {
        guard let slot = Self.slot(of: digits) else { return nil }
        let list = newest[slot]
        guard list.count >= min(limit, Int(counts[slot])) else { return nil }
        return list.prefix(limit).map(\.id)
    }

    static func slot(of digits: some StringProtocol) -> Int? {
        let bytes = Array(digits.utf8)
        guard (3...4).contains(bytes.count), bytes.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let value = bytes.reduce(0) { $0 * 10 + Int($1 - 48) }
        return bytes.count == 3 ? value : 1_000 + value
    }

    /// Learns the fragments of a newly interned number (numbered in order from 0).
    mutating func intern(_ number: String) {
        Self.forEachSlot(of: number.utf8) { slotList.append($0) }
        slotStart.append(UInt32(slotList.count))
    }

    /// Starts counting report `id`, created in `second` (since 1970), in or out: its
    /// fragments then count once each, however many of its numbers hold them
    /// (``add(number:by:)``, ``add(id:by:)``).
    mutating func begin(id: Int64, second: Int64) {
        current = Match(second: second, id: id)
        generation &+= 1
        if generation == 0 {
            seen = [UInt32](repeating: 0, count: Self.slots)
            generation = 1
        }
    }

    /// Counts the fragments of one of the report's numbers (the tally's number): `delta` 1
    /// in, -1 out.
    mutating func add(number: UInt32, by delta: Int) {
        for k in Int(slotStart[Int(number)])..<Int(slotStart[Int(number) + 1]) { add(slotList[k], delta) }
    }

    /// Counts the fragments of the report's id.
    mutating func add(id: Int64, by delta: Int) {
        Self.forEachSlot(ofDigitsOf: id) { add($0, delta) }
    }

    @inline(__always)
    private mutating func add(_ slot: UInt16, _ delta: Int) {
        let i = Int(slot)
        guard seen[i] != generation else { return }
        seen[i] = generation
        let before = Int(counts[i])
        counts[i] = UInt32(before + delta)
        if delta > 0 { keep(current, in: i, heldBefore: before) } else { drop(current.id, from: i) }
    }

    /// Puts a report counted in into the slot's list, if the list stays an exact start.
    private mutating func keep(_ match: Match, in slot: Int, heldBefore: Int) {
        let count = Int(held[slot])
        guard count == heldBefore || (count > 0 && match > oldest[slot]) else { return }
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if newest[slot][middle] > match { low = middle + 1 } else { high = middle }
        }
        guard low < Self.kept else { return }
        newest[slot].insert(match, at: low)
        if newest[slot].count > Self.kept { newest[slot].removeLast() }
        noteEnds(slot)
    }

    private mutating func drop(_ id: Int64, from slot: Int) {
        guard let at = newest[slot].firstIndex(where: { $0.id == id }) else { return }
        newest[slot].remove(at: at)
        noteEnds(slot)
    }

    /// Copies the slot's list length and oldest match into the flat arrays.
    private mutating func noteEnds(_ slot: Int) {
        held[slot] = UInt8(newest[slot].count)
        oldest[slot] = newest[slot].last ?? Match(second: .min, id: .min)
    }

    /// Calls `body` with the slot of every run of three and of four digits in `value`
    /// written in decimal, as `String(value)` spells it (a sign is not a digit), without
    /// making that string: once for every report a start counts in.
    static func forEachSlot(ofDigitsOf value: Int64, _ body: (UInt16) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var rest = value.magnitude, start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(48 + rest % 10)
                rest /= 10
            } while rest > 0
            forEachSlot(of: UnsafeBufferPointer(rebasing: buffer[start...]), body)
        }
    }

    /// Calls `body` with the slot of every run of three and of four digits in `text` (a
    /// run never spans a character that is not a digit).
    static func forEachSlot(of text: some Sequence<UInt8>, _ body: (UInt16) -> Void) {
        var run = 0, last4 = 0
        for byte in text {
            guard (48...57).contains(byte) else {
                run = 0
                last4 = 0
                continue
            }
            last4 = (last4 * 10 + Int(byte - 48)) % 10_000
            run += 1
            if run >= 3 { body(UInt16(last4 % 1_000)) }
            if run >= 4 { body(UInt16(1_000 + last4)) }
        }
    }
}
