/// The reports holding a fragment of five digits or more, found in memory: each interned
/// number's reports, and for each run of four digits the numbers holding it. A long
/// fragment's matches are the reports of the numbers that hold it whole (found among those
/// of its rarest run of four), and the reports whose id holds it.
///
/// What it replaces: at 10,000,000 reports a 7-digit fragment of the generated data is in
/// 17,000 reports on average, and the store's trigram lists took 0.7 to 120 ms for a first
/// page and 4 to 56 ms to count to a thousand (BENCHMARKS.md, #33).
struct LongFragments {
    /// Each number's reports (by the tally's number), in no order.
    private var reportsOfNumber: [[UInt32]] = []
    /// For each run of four digits (its value), the numbers holding it, each once.
    private var numbersOfRun = [[UInt32]](repeating: [], count: runs)

    /// The lists as they are, for a snapshot (`TallySnapshot.swift`).
    struct Storage {
        var reportsOfNumber: [[UInt32]]
        var numbersOfRun: [[UInt32]]
    }

    var storage: Storage { Storage(reportsOfNumber: reportsOfNumber, numbersOfRun: numbersOfRun) }

    /// Lists read back from a snapshot, checked by the caller.
    init(storage s: Storage) {
        (reportsOfNumber, numbersOfRun) = (s.reportsOfNumber, s.numbersOfRun)
    }

    init() {}

    static let runs = 10_000

    /// The shortest fragment answered here; shorter ones are ``FragmentCounts``'.
    static let shortest = 5

    /// Learns a newly interned number (numbered in order from 0).
    mutating func intern(_ number: String, as id: UInt32) {
        reportsOfNumber.append([])
        var runs: [Int] = []
        FragmentCounts.forEachSlot(of: number.utf8) { slot in if slot >= 1_000 { runs.append(Int(slot) - 1_000) } }
        runs.sort()
        for (i, run) in runs.enumerated() where i == 0 || runs[i - 1] != run { numbersOfRun[run].append(id) }
    }

    mutating func add(_ report: UInt32, number: UInt32) {
        reportsOfNumber[Int(number)].append(report)
    }

    mutating func remove(_ report: UInt32, number: UInt32) {
        guard let at = reportsOfNumber[Int(number)].firstIndex(of: report) else { return }
        reportsOfNumber[Int(number)].swapAt(at, reportsOfNumber[Int(number)].count - 1)
        reportsOfNumber[Int(number)].removeLast()
    }

    /// The reports of the numbers holding `digits` (ASCII digits, at least ``shortest``),
    /// each report once; nil for a shorter fragment.
    func reports(holding digits: [UInt8], numbers: [String]) -> Set<UInt32>? {
        guard digits.count >= Self.shortest else { return nil }
        var rarest: [UInt32]?
        for start in 0...(digits.count - 4) {
            let run = digits[start..<(start + 4)].reduce(0) { $0 * 10 + Int($1 - 48) }
            if rarest == nil || numbersOfRun[run].count < rarest!.count { rarest = numbersOfRun[run] }
        }
        var found = Set<UInt32>()
        for number in rarest ?? [] where Self.holds(numbers[Int(number)].utf8, digits) {
            found.formUnion(reportsOfNumber[Int(number)])
        }
        return found
    }

    /// Whether `text` holds `digits` as a run.
    static func holds(_ text: String.UTF8View, _ digits: [UInt8]) -> Bool {
        let bytes = Array(text)
        guard bytes.count >= digits.count else { return false }
        return (0...(bytes.count - digits.count)).contains { start in bytes[start..<(start + digits.count)].elementsEqual(digits) }
    }

    /// The ids up to `maxID` whose decimal digits hold `digits` (at least ``shortest``):
    /// the fragment placed at each position of each length, the other digits free (a
    /// fragment of five digits among eight-digit ids: 4,321 candidates); nil past
    /// ``maxCandidates``.
    static func ids(holding digits: [UInt8], upTo maxID: Int64) -> [Int64]? {
        let length = digits.count
        var maxLength = 1
        while maxLength < 19, pow10(maxLength) <= maxID { maxLength += 1 }
        guard length >= shortest else { return nil }
        // Before the fragment's value, which a fragment longer than any id overflows.
        guard length <= maxLength else { return [] }
        let fragment = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) }
        var count = 0
        for total in length...maxLength { count += (total - length + 1) * Int(pow10(total - length)) }
        guard count <= maxCandidates else { return nil }
        var ids = Set<Int64>()
        for total in length...maxLength {
            let free = total - length
            for before in 0...free {
                // `before` free digits, then the fragment, then `free - before` more.
                let after = pow10(free - before)
                for high in 0..<pow10(before) {
                    for low in 0..<after {
                        let id = (high * pow10(length) + fragment) * after + low
                        // No leading zero: an id of `total` digits is at least 10^(total-1).
                        if id >= pow10(total - 1), id <= maxID { ids.insert(id) }
                    }
                }
            }
        }
        return Array(ids)
    }

    /// The most ids ``ids(holding:upTo:)`` tries.
    static let maxCandidates = 50_000

    static func pow10(_ n: Int) -> Int64 {
        var value: Int64 = 1
        for _ in 0..<n { value *= 10 }
        return value
    }
}
