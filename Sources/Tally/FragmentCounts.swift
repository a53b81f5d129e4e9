/// How many reports hold each fragment of three or four digits, in one of their numbers or
/// in their id: the count a phone search of such a fragment answers (`numberMatched`),
/// kept write by write. Short fragments are in many reports (`067` in one of twenty), and
/// counting them in the store reads every match (a PostgreSQL trigram scan rechecks each
/// row: 194 ms for 49,000); here it is one array read.
///
/// A fragment of three digits is slot `0..<1,000` (its value), one of four is slot
/// `1,000 + value`. A report counts once per fragment however often it holds it.
struct FragmentCounts {
    static let slots = 11_000
    private var counts = [UInt32](repeating: 0, count: slots)
    /// Each interned number's fragment slots (with repeats), by the tally's number.
    private var numberSlots: [[UInt16]] = []
    /// The report each slot was last counted for (a generation), so that a report counts
    /// once per fragment without sorting its slots.
    private var seen = [UInt32](repeating: 0, count: slots)
    private var generation: UInt32 = 0

    /// The count for `digits` (ASCII digits), or nil when it is not three or four long.
    func count(of digits: some StringProtocol) -> Int? {
        let bytes = Array(digits.utf8)
        guard (3...4).contains(bytes.count), bytes.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let value = bytes.reduce(0) { $0 * 10 + Int($1 - 48) }
        return Int(counts[bytes.count == 3 ? value : 1_000 + value])
    }

    /// Learns the fragments of a newly interned number (numbered in order from 0).
    mutating func intern(_ number: String) {
        numberSlots.append(Self.slots(of: number.utf8))
    }

    /// Starts counting a report in or out: its fragments then count once each, however
    /// many of its numbers hold them (``add(number:by:)``, ``add(id:by:)``).
    mutating func begin() {
        generation &+= 1
        if generation == 0 {
            seen = [UInt32](repeating: 0, count: Self.slots)
            generation = 1
        }
    }

    /// Counts the fragments of one of the report's numbers (the tally's number): `delta` 1
    /// in, -1 out.
    mutating func add(number: UInt32, by delta: Int) {
        for slot in numberSlots[Int(number)] { add(slot, delta) }
    }

    /// Counts the fragments of the report's id.
    mutating func add(id: Int64, by delta: Int) {
        Self.forEachSlot(of: String(id).utf8) { add($0, delta) }
    }

    @inline(__always)
    private mutating func add(_ slot: UInt16, _ delta: Int) {
        let i = Int(slot)
        guard seen[i] != generation else { return }
        seen[i] = generation
        counts[i] = UInt32(Int(counts[i]) + delta)
    }

    static func slots(of text: some Sequence<UInt8>) -> [UInt16] {
        var slots: [UInt16] = []
        forEachSlot(of: text) { slots.append($0) }
        return slots
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
