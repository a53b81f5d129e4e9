import Clustering

/// The reports of any area and period, counted from memory: which numbers the most
/// reports carry (what a supervisor reads to choose the numbers to verify next), and how
/// many reports there are by status, district, object type and month (a dashboard).
///
/// ## Design
/// Each number seen is interned as a small integer; each report's first number, district,
/// object type, month and status are kept by report id in pages of 4,096 ids, one flat
/// array of 20-byte records and a page table (two array reads per report, and memory for
/// the ids in use only); a report's other numbers (at most four more, in one report of
/// five or so) in blocks beside them, a third read. The city-wide counts per number and
/// status are kept too, write by write, so the unfiltered ranking reads one count per
/// number. A ranking over an area or a period walks the reports of the cluster index
/// (which filters them by area, status and creation time), counts their numbers in an
/// array, and keeps the best `limit` with a bounded heap; the status counts of the ranked
/// numbers come from a second pass over the (number, status) pairs met.
/// A summary walks the same reports and counts them four ways.
///
/// Writes reach the tally with the cluster index's (``apply(_:)``), after their commit.
public final class ReportTally: @unchecked Sendable {
    /// What the tally keeps of a report: its numbers and the positions of its district,
    /// object type and status in the reference lists, and its month (since January 1970).
    public struct Entry: Sendable, Hashable {
        public var phones: [String]
        public var district: Int
        public var objectType: Int
        public var month: Int
        public var status: Int
        /// When it was created, in seconds since 1970: a search's first page is the newest.
        public var second: Int64

        public init(phones: [String], district: Int, objectType: Int, month: Int, status: Int, second: Int64) {
            (self.phones, self.district, self.objectType, self.month, self.status, self.second) = (phones, district, objectType, month, status, second)
        }
    }

    /// Reports counted by status, district and object type (by their positions) and by month.
    public struct Summary: Sendable, Hashable {
        public var total = 0
        public var byStatus: [Int] = []
        public var byDistrict: [Int] = []
        public var byObjectType: [Int] = []
        /// Months since January 1970, and their counts, in order.
        public var byMonth: [(month: Int, count: Int)] = []

        public static func == (a: Self, b: Self) -> Bool {
            a.total == b.total && a.byStatus == b.byStatus && a.byDistrict == b.byDistrict && a.byObjectType == b.byObjectType
                && a.byMonth.elementsEqual(b.byMonth, by: ==)
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(total) }
    }

    /// A change to the tally.
    public enum Change: Sendable, Hashable {
        case set(id: Int64, Entry)
        case remove(id: Int64)
    }

    /// A number and its reports in the asked area and period.
    public struct Ranked: Sendable, Hashable {
        public var number: String
        public var count: Int
        /// Its reports per status number.
        public var statusCounts: [Int]
    }

    /// What is kept of a report (20 bytes); `count` 0: no report. Most reports carry one
    /// number: the others of a report that carries more are in ``MoreNumbers``.
    struct Refs {
        /// The first number, and where the others are in ``MoreNumbers`` (`count` > 1).
        var first: UInt32 = 0, more: UInt32 = 0
        /// The creation second, held to 1970…2106 (four bytes a report).
        var second: UInt32 = 0
        var district: UInt16 = 0
        var objectType: UInt16 = 0
        var month: UInt16 = 0
        var count: UInt8 = 0
        var status: UInt8 = 0

        init() {}

        init(_ phones: UnsafeBufferPointer<UInt32>, more: UInt32, _ entry: Entry) {
            count = UInt8(phones.count)
            (district, status, objectType) = (UInt16(entry.district), UInt8(entry.status), UInt16(entry.objectType))
            month = UInt16(clamping: entry.month)
            second = UInt32(clamping: entry.second)
            first = phones.first ?? 0
            self.more = more
        }

        /// Calls `body` with each of the report's numbers, the first first; `more` is
        /// ``MoreNumbers/list``.
        @inline(__always)
        func forEach(_ more: UnsafeBufferPointer<UInt32>, _ body: (UInt32) -> Void) {
            guard count > 0 else { return }
            body(first)
            var k = Int(self.more)
            for _ in 1..<Int(count) {
                body(more[k])
                k += 1
            }
        }
    }

    /// The numbers after the first of the reports that carry more than one (some one in
    /// five), in blocks of ``ReportTally/maxPhones`` − 1, a freed block used again.
    struct MoreNumbers {
        static let block = ReportTally.maxPhones - 1
        var list: [UInt32] = []
        /// The blocks no report holds, by their start.
        var free: [UInt32] = []

        /// Keeps `numbers` (at most a block) and returns where.
        mutating func add(_ numbers: some Collection<UInt32>) -> UInt32 {
            let start: Int
            if let reused = free.popLast() { start = Int(reused) } else {
                start = list.count
                list += repeatElement(0, count: Self.block)
            }
            for (k, number) in numbers.enumerated() { list[start + k] = number }
            return UInt32(start)
        }

        mutating func remove(at start: UInt32) { free.append(start) }
    }

    static let pageBits = 12
    static let pageMask = (1 << pageBits) - 1
    static let maxPhones = 5

    public let statusCount: Int
    public let districtCount: Int
    public let objectTypeCount: Int
    private let lock = ReadWriteLock()
    private var ledger: Ledger

    /// A tally of `entries` (a report id, and what the tally keeps of it), in any order (see
    /// ``Ledger/build(_:)``). Statuses are numbered 0..<statusCount (at most 64), districts
    /// and object types below their counts (at most 65,536 each); an entry outside them is
    /// not kept.
    public init(statusCount: Int, districtCount: Int, objectTypeCount: Int, entries: some Sequence<(Int64, Entry)>) {
        precondition((1...64).contains(statusCount) && (1...65_536).contains(districtCount) && (1...65_536).contains(objectTypeCount))
        (self.statusCount, self.districtCount, self.objectTypeCount) = (statusCount, districtCount, objectTypeCount)
        var ledger = Ledger(statusCount: statusCount, districtCount: districtCount, objectTypeCount: objectTypeCount)
        ledger.build(entries)
        self.ledger = ledger
    }

    /// The tally's arrays as they are, for a snapshot (`TallySnapshot.swift`).
    struct Storage {
        var numbers: [String]
        var pageOffset: [Int32]
        var storage: [Refs]
        var more: MoreNumbers
        var totals: [UInt32]
        var reportCount: Int
        var fragments: FragmentCounts.Storage
        var long: LongFragments.Storage
    }

    /// A consistent copy of the arrays (writes wait meanwhile).
    var contents: Storage {
        lock.read { ledger.contents }
    }

    /// A tally of arrays read back from a snapshot, checked by the caller.
    init(statusCount: Int, districtCount: Int, objectTypeCount: Int, contents s: Storage) {
        (self.statusCount, self.districtCount, self.objectTypeCount) = (statusCount, districtCount, objectTypeCount)
        ledger = Ledger(statusCount: statusCount, districtCount: districtCount, objectTypeCount: objectTypeCount, contents: s)
    }

    /// Makes what writes need that a load leaves out, without holding up readers meanwhile
    /// (a write that comes first makes it itself).
    public func prepareForWrites() {
        guard let numbers = lock.read({ ledger.numberIDs == nil ? ledger.numbers : nil }) else { return }
        let positions = Ledger.positions(numbers)
        lock.write {
            // Numbers interned meanwhile made the dictionary already.
            if ledger.numberIDs == nil, ledger.numbers.count == numbers.count { ledger.numberIDs = positions }
        }
    }

    /// How many reports it holds.
    public var count: Int { lock.read { ledger.reportCount } }

    /// Applies changes in order, after the writes that made them are committed.
    public func apply(_ changes: [Change]) {
        guard !changes.isEmpty else { return }
        lock.write {
            for change in changes {
                switch change {
                case .set(let id, let entry): ledger.set(id, entry)
                case .remove(let id): ledger.remove(id)
                }
            }
        }
    }

    /// Replaces the whole tally by another's (a rebuild from the rows).
    public func replaceContents(with other: ReportTally) {
        let copy = other.lock.read { other.ledger }
        lock.write { ledger = copy }
    }

    /// Whether the tally holds a report with this id.
    public func holds(id: Int64) -> Bool {
        lock.read { (0...Int64(UInt32.max)).contains(id) && withLookup { $0(UInt32(id)) != nil } }
    }

    /// The entry held for a report, if any.
    public func entry(id: Int64) -> Entry? {
        lock.read {
            guard (0...Int64(UInt32.max)).contains(id), let (refs, phones) = withLookup({ lookup in lookup(UInt32(id)).map { ($0, lookup.numbers(of: $0)) } })
            else { return nil }
            return Entry(
                phones: phones.map { ledger.numbers[Int($0)] }, district: Int(refs.district), objectType: Int(refs.objectType),
                month: Int(refs.month), status: Int(refs.status), second: Int64(refs.second))
        }
    }

    /// How many reports hold `digits` (three or four ASCII digits) in one of their
    /// numbers or in their id; nil for another fragment (see ``FragmentCounts``).
    public func fragmentCount(_ digits: some StringProtocol) -> Int? {
        lock.read { ledger.fragments.count(of: digits) }
    }

    /// The newest reports holding `digits` (three or four digits) in a number or their id,
    /// newest first (by creation second, then id), at most `limit`, with how many hold it;
    /// nil when the fragment is another or the tally keeps too few (see ``FragmentCounts``).
    public func newestMatches(_ digits: some StringProtocol, limit: Int) -> (ids: [Int64], count: Int)? {
        lock.read {
            guard let ids = ledger.fragments.newest(of: digits, limit: limit), let count = ledger.fragments.count(of: digits) else { return nil }
            return (ids, count)
        }
    }

    /// The same for a fragment of five digits or more: the newest `limit` reports holding
    /// it in a number or their id, and how many do, from memory (see ``LongFragments``);
    /// nil for a shorter fragment, or ids too many to try.
    public func newestLongMatches(_ digits: some StringProtocol, limit: Int) -> (ids: [Int64], count: Int)? {
        let bytes = Array(digits.utf8)
        guard bytes.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return lock.read {
            guard var found = ledger.long.reports(holding: bytes, numbers: ledger.numbers),
                  let candidates = LongFragments.ids(holding: bytes, upTo: Int64(ledger.pageOffset.count << Self.pageBits) - 1)
            else { return nil }
            withLookup { lookup in
                for id in candidates where lookup(UInt32(id)) != nil { found.insert(UInt32(id)) }
            }
            var newest = BestKept(limit: limit, order: NewestMatches())
            withLookup { lookup in
                for id in found { newest.offer(FragmentCounts.Match(second: Int64(lookup(id)?.second ?? 0), id: Int64(id))) }
            }
            return (newest.sorted().map(\.id), found.count)
        }
    }

    // MARK: Rankings

    /// The `limit` numbers the most reports carry, most first (equal counts in number
    /// order), among the reports of a status in `statuses` (a bit per status number) and,
    /// when given, of `district`.
    public func ranking(limit: Int, statuses: UInt64 = .max, district: Int? = nil) -> [Ranked] {
        lock.read {
            guard district != nil else { return rankCityWide(limit: limit, statuses: statuses) }
            var counter = Counter(numbers: ledger.numbers.count, district: district)
            defer { counter.release() }
            ledger.more.list.withUnsafeBufferPointer { more in
                for refs in ledger.storage where refs.count > 0 && statuses & (1 << UInt64(refs.status)) != 0 { counter.add(refs, more, status: Int(refs.status)) }
            }
            return ranked(counter, limit: limit)
        }
    }

    /// The same ranking among the reports `members` lists (an id and its status number,
    /// e.g. the cluster index's reports of an area and period), narrowed to `district`.
    public func ranking(limit: Int, district: Int? = nil, members: ((_ id: UInt32, _ status: Int) -> Void) -> Void) -> [Ranked] {
        var counter = Counter(numbers: lock.read { ledger.numbers.count }, district: district)
        defer { counter.release() }
        lookUp(Self.collect(members)) { refs, more, status in counter.add(refs, more, status: status) }
        return lock.read { ranked(counter, limit: limit) }
    }

    /// The ids and statuses `members` lists, gathered before any lock of the tally is taken.
    private static func collect(_ members: ((_ id: UInt32, _ status: Int) -> Void) -> Void) -> [UInt64] {
        var met: [UInt64] = []
        members { id, status in met.append(UInt64(id) << 8 | UInt64(status)) }
        return met
    }

    /// Calls `body` with the refs of each report of `met` that the tally holds, a slice at
    /// a time under the read lock, so that a write waits at most for one slice.
    private func lookUp(_ met: [UInt64], _ body: (Refs, _ more: UnsafeBufferPointer<UInt32>, Int) -> Void) {
        let slice = 32_768
        for start in stride(from: 0, to: met.count, by: slice) {
            lock.read {
                withLookup { lookup in
                    for pair in met[start..<min(start + slice, met.count)] {
                        if let refs = lookup(UInt32(truncatingIfNeeded: pair >> 8)) { body(refs, lookup.more, Int(pair & 0xFF)) }
                    }
                }
            }
        }
    }

    // MARK: Summaries

    /// Every report counted by status, district, object type and month.
    public func summary() -> Summary {
        lock.read {
            var counter = SummaryCounter(statusCount: statusCount, districtCount: districtCount, objectTypeCount: objectTypeCount)
            defer { counter.release() }
            for refs in ledger.storage where refs.count > 0 { counter.add(refs, status: Int(refs.status)) }
            return counter.summary()
        }
    }

    /// The reports `members` lists (an id and its status number) counted the same ways.
    public func summary(members: ((_ id: UInt32, _ status: Int) -> Void) -> Void) -> Summary {
        var counter = SummaryCounter(statusCount: statusCount, districtCount: districtCount, objectTypeCount: objectTypeCount)
        defer { counter.release() }
        lookUp(Self.collect(members)) { refs, _, status in counter.add(refs, status: status) }
        return counter.summary()
    }

    /// Reports counted four ways, in buffers of their own (no copy-on-write checks in the loop).
    private struct SummaryCounter {
        var total = 0
        let statuses: UnsafeMutableBufferPointer<Int>
        let districts: UnsafeMutableBufferPointer<Int>
        let types: UnsafeMutableBufferPointer<Int>
        let months = UnsafeMutableBufferPointer<Int>.allocate(capacity: 1 << 16)

        init(statusCount: Int, districtCount: Int, objectTypeCount: Int) {
            (statuses, districts, types) = (.allocate(capacity: statusCount), .allocate(capacity: districtCount), .allocate(capacity: objectTypeCount))
            for buffer in [statuses, districts, types, months] { buffer.initialize(repeating: 0) }
        }

        @inline(__always)
        mutating func add(_ refs: Refs, status: Int) {
            total += 1
            statuses[status] += 1
            districts[Int(refs.district)] += 1
            types[Int(refs.objectType)] += 1
            months[Int(refs.month)] += 1
        }

        func summary() -> Summary {
            var s = Summary(byStatus: Array(statuses))
            s.total = total
            s.byDistrict = Array(districts)
            s.byObjectType = Array(types)
            s.byMonth = months.indices.filter { months[$0] > 0 }.map { (month: $0, count: months[$0]) }
            return s
        }

        func release() {
            for buffer in [statuses, districts, types, months] { buffer.deallocate() }
        }
    }

    /// From the city-wide counts.
    private func rankCityWide(limit: Int, statuses: UInt64) -> [Ranked] {
        let s = statusCount
        let (numbers, totals) = (ledger.numbers, ledger.totals)
        var heap = BestKept(limit: limit, order: MostReports(numbers: numbers))
        for phone in 0..<numbers.count {
            var n: UInt32 = 0
            for status in 0..<s where statuses & (1 << UInt64(status)) != 0 { n += totals[phone * s + status] }
            if n > 0 { heap.offer((UInt32(phone), n)) }
        }
        return heap.sorted().map { phone, n in
            Ranked(
                number: numbers[Int(phone)], count: Int(n),
                statusCounts: (0..<s).map { statuses & (1 << UInt64($0)) != 0 ? Int(totals[Int(phone) * s + $0]) : 0 })
        }
    }

    /// The numbers of the reports met, counted.
    private struct Counter {
        /// Reports per number, for the numbers interned when the count began (one interned
        /// since, by a write meanwhile, is left out).
        let counts: UnsafeMutableBufferPointer<UInt32>
        /// number << 6 | status, for the status counts of the ranked numbers.
        var met: [UInt64] = []
        /// The district asked for; one that no report can have (-1) when none.
        let district: Int

        init(numbers: Int, district: Int?) {
            counts = .allocate(capacity: numbers)
            counts.initialize(repeating: 0)
            met.reserveCapacity(1 << 16)
            self.district = district ?? -1
        }

        @inline(__always)
        mutating func add(_ refs: Refs, _ more: UnsafeBufferPointer<UInt32>, status: Int) {
            if district >= 0, Int(refs.district) != district { return }
            refs.forEach(more) { phone in
                guard Int(phone) < counts.count else { return }
                counts[Int(phone)] &+= 1
                met.append(UInt64(phone) << 6 | UInt64(status))
            }
        }

        func release() { counts.deallocate() }
    }

    private func ranked(_ counter: Counter, limit: Int) -> [Ranked] {
        let numbers = ledger.numbers
        var heap = BestKept(limit: limit, order: MostReports(numbers: numbers))
        for (phone, n) in counter.counts.enumerated() where n > 0 { heap.offer((UInt32(phone), n)) }
        let ranked = heap.sorted()
        var slot = [Int32](repeating: -1, count: counter.counts.count)
        for (i, element) in ranked.enumerated() { slot[Int(element.phone)] = Int32(i) }
        var statusCounts = [Int](repeating: 0, count: statusCount * ranked.count)
        slot.withUnsafeBufferPointer { slot in
            for pair in counter.met {
                let i = slot[Int(pair >> 6)]
                if i >= 0 { statusCounts[Int(i) * statusCount + Int(pair & 63)] += 1 }
            }
        }
        return ranked.enumerated().map { i, element in
            Ranked(
                number: numbers[Int(element.phone)], count: Int(element.count),
                statusCounts: Array(statusCounts[(i * statusCount)..<((i + 1) * statusCount)]))
        }
    }

    // MARK: Lookups and upkeep

    /// Finds a report's refs by id through the page table, without touching reference counts.
    struct Lookup {
        let pageOffset: UnsafeBufferPointer<Int32>
        let storage: UnsafeBufferPointer<Refs>
        let more: UnsafeBufferPointer<UInt32>

        /// A report's numbers, the first first.
        func numbers(of refs: Refs) -> [UInt32] {
            var numbers: [UInt32] = []
            refs.forEach(more) { numbers.append($0) }
            return numbers
        }

        @inline(__always)
        func callAsFunction(_ id: UInt32) -> Refs? {
            let page = Int(id >> UInt32(ReportTally.pageBits))
            guard page < pageOffset.count, pageOffset[page] >= 0 else { return nil }
            let refs = storage[Int(pageOffset[page]) + Int(id) & ReportTally.pageMask]
            return refs.count > 0 ? refs : nil
        }
    }

    private func withLookup<T>(_ body: (Lookup) -> T) -> T {
        ledger.pageOffset.withUnsafeBufferPointer { offsets in
            ledger.storage.withUnsafeBufferPointer { storage in
                ledger.more.list.withUnsafeBufferPointer { body(Lookup(pageOffset: offsets, storage: storage, more: $0)) }
            }
        }
    }
}

/// How a ``BestKept`` ranks what it is offered.
protocol KeptOrder {
    associatedtype Element
    /// Whether `a` ranks below `b`.
    func below(_ a: Element, _ b: Element) -> Bool
}

/// The best `limit` elements offered, by an order: a min-heap whose root is the worst kept,
/// so that most offers lose to it in one comparison.
struct BestKept<Order: KeptOrder> {
    let limit: Int
    let order: Order
    private var heap: [Order.Element] = []

    init(limit: Int, order: Order) {
        self.limit = max(0, limit)
        self.order = order
        heap.reserveCapacity(self.limit)
    }

    mutating func offer(_ item: Order.Element) {
        guard limit > 0 else { return }
        if heap.count < limit {
            heap.append(item)
            var i = heap.count - 1
            while i > 0 {
                let parent = (i - 1) / 2
                guard order.below(heap[i], heap[parent]) else { break }
                heap.swapAt(i, parent)
                i = parent
            }
            return
        }
        guard order.below(heap[0], item) else { return }
        heap[0] = item
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var least = i
            if l < heap.count, order.below(heap[l], heap[least]) { least = l }
            if r < heap.count, order.below(heap[r], heap[least]) { least = r }
            guard least != i else { break }
            heap.swapAt(i, least)
            i = least
        }
    }

    /// What is kept, best first.
    func sorted() -> [Order.Element] {
        heap.sorted { order.below($1, $0) }
    }
}

/// (number, count) pairs: more reports first, then the lower number (its text).
struct MostReports: KeptOrder {
    let numbers: [String]

    @inline(__always)
    func below(_ a: (phone: UInt32, count: UInt32), _ b: (phone: UInt32, count: UInt32)) -> Bool {
        // Most offers lose to the worst kept on the count alone.
        a.count != b.count ? a.count < b.count : numbers[Int(a.phone)] > numbers[Int(b.phone)]
    }
}

/// Matches: the newest first, by creation second then id.
struct NewestMatches: KeptOrder {
    @inline(__always)
    func below(_ a: FragmentCounts.Match, _ b: FragmentCounts.Match) -> Bool { a < b }
}
