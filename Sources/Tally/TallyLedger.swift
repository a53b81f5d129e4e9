extension ReportTally {
    /// What the tally holds, and how a report is counted in or out. It is a value apart
    /// from the class (its lock and its reads) so that a build of millions of reports
    /// works on a local variable: Swift then checks exclusive access to its arrays when it
    /// compiles, where a class's stored arrays are checked at run time, at every write.
    struct Ledger {
        let statusCount: Int
        let districtCount: Int
        let objectTypeCount: Int
        var numbers: [String] = []
        /// Each number's position in `numbers`; nil after a load until the first write or
        /// ``ReportTally/prepareForWrites()`` makes it (hashing millions of numbers is a
        /// start's slowest step).
        var numberIDs: [String: UInt32]? = [:]
        /// Where each page of ids starts in `storage` (-1: no page yet).
        var pageOffset: [Int32] = []
        var storage: [Refs] = []
        var more = MoreNumbers()
        /// City-wide reports per number and status: `totals[number * statusCount + status]`.
        var totals: [UInt32] = []
        var reportCount = 0
        var fragments = FragmentCounts()
        var long = LongFragments()

        init(statusCount: Int, districtCount: Int, objectTypeCount: Int) {
            (self.statusCount, self.districtCount, self.objectTypeCount) = (statusCount, districtCount, objectTypeCount)
        }

        /// A ledger of arrays read back from a snapshot, checked by the caller.
        init(statusCount: Int, districtCount: Int, objectTypeCount: Int, contents s: Storage) {
            self.init(statusCount: statusCount, districtCount: districtCount, objectTypeCount: objectTypeCount)
            (numbers, pageOffset, storage, more, totals, reportCount) = (s.numbers, s.pageOffset, s.storage, s.more, s.totals, s.reportCount)
            fragments = FragmentCounts(storage: s.fragments)
            long = LongFragments(storage: s.long)
            numberIDs = nil
        }

        /// The arrays as they are, for a snapshot.
        var contents: Storage {
            Storage(
                numbers: numbers, pageOffset: pageOffset, storage: storage, more: more, totals: totals, reportCount: reportCount,
                fragments: fragments.storage, long: long.storage)
        }

        static func positions(_ numbers: [String]) -> [String: UInt32] {
            var positions: [String: UInt32] = [:]
            positions.reserveCapacity(numbers.count)
            for (i, number) in numbers.enumerated() { positions[number] = UInt32(i) }
            return positions
        }

        /// Where report `id` is (or goes) in `storage`; nil for an id outside 0...2^32 - 1, or
        /// in a page not made when `making` is false.
        mutating func index(_ id: Int64, making: Bool) -> Int? {
            guard (0...Int64(UInt32.max)).contains(id) else { return nil }
            let page = Int(id >> ReportTally.pageBits)
            if page >= pageOffset.count {
                guard making else { return nil }
                pageOffset += [Int32](repeating: -1, count: page + 1 - pageOffset.count)
            }
            if pageOffset[page] < 0 {
                guard making else { return nil }
                pageOffset[page] = Int32(storage.count)
                storage += [Refs](repeating: Refs(), count: 1 << ReportTally.pageBits)
            }
            return Int(pageOffset[page]) + Int(id) & ReportTally.pageMask
        }

        mutating func set(_ id: Int64, _ entry: Entry) {
            remove(id)
            guard !entry.phones.isEmpty, (0..<statusCount).contains(entry.status), (0..<districtCount).contains(entry.district),
                  (0..<objectTypeCount).contains(entry.objectType), (0...Int(UInt16.max)).contains(entry.month), let i = index(id, making: true)
            else { return }
            // The numbers' positions on the stack: no array to allocate for each report.
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: ReportTally.maxPhones) { buffer in
                var count = 0
                for number in entry.phones.prefix(ReportTally.maxPhones) {
                    buffer[count] = intern(number)
                    count += 1
                }
                let phones = UnsafeBufferPointer(rebasing: buffer[..<count])
                let refs = Refs(phones, more: count > 1 ? more.add(phones.dropFirst()) : 0, entry)
                storage[i] = refs
                for phone in phones {
                    long.add(UInt32(id), number: phone)
                    totals[Int(phone) * statusCount + entry.status] += 1
                }
                countFragments(phones, id: id, second: Int64(refs.second), by: 1)
            }
            reportCount += 1
        }

        mutating func remove(_ id: Int64) {
            guard let i = index(id, making: false), storage[i].count > 0 else { return }
            let old = storage[i]
            let phones = [old.first] + (old.count > 1 ? more.list[Int(old.more)..<Int(old.more) + Int(old.count) - 1] : [])
            for phone in phones { totals[Int(phone) * statusCount + Int(old.status)] -= 1 }
            phones.withUnsafeBufferPointer { countFragments($0, id: id, second: Int64(old.second), by: -1) }
            for phone in phones { long.remove(UInt32(id), number: phone) }
            if old.count > 1 { more.remove(at: old.more) }
            storage[i] = Refs()
            reportCount -= 1
        }

        /// Counts a report's fragments in or out.
        private mutating func countFragments(_ phones: UnsafeBufferPointer<UInt32>, id: Int64, second: Int64, by delta: Int) {
            fragments.begin(id: id, second: second)
            for phone in phones { fragments.add(number: phone, by: delta) }
            fragments.add(id: id, by: delta)
        }

        private mutating func intern(_ number: String) -> UInt32 {
            if numberIDs == nil { numberIDs = Self.positions(numbers) }
            if let id = numberIDs?[number] { return id }
            let id = UInt32(numbers.count)
            numbers.append(number)
            fragments.intern(number)
            long.intern(number, as: id)
            numberIDs?[number] = id
            totals += [UInt32](repeating: 0, count: statusCount)
            return id
        }
    }
}
