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

        /// Whether the tally keeps a report of this id and entry: an id of 32 bits, a number at
        /// least, a status, district and object type among the counts, a month it can hold.
        func accepts(_ id: Int64, _ entry: Entry) -> Bool {
            (0...Int64(UInt32.max)).contains(id) && !entry.phones.isEmpty && (0..<statusCount).contains(entry.status)
                && (0..<districtCount).contains(entry.district) && (0..<objectTypeCount).contains(entry.objectType)
                && (0...Int(UInt16.max)).contains(entry.month)
        }

        mutating func set(_ id: Int64, _ entry: Entry) {
            remove(id)
            if let i = place(id, entry) { countFragments(at: i, id: id, by: 1) }
        }

        mutating func remove(_ id: Int64) {
            guard let i = index(id, making: false), storage[i].count > 0 else { return }
            countFragments(at: i, id: id, by: -1)
            unplace(at: i, id: id)
        }

        /// Keeps a report's record, its numbers and its counts by number and status: all but
        /// its fragments. Where it is in `storage`, or nil when the tally does not keep it.
        mutating func place(_ id: Int64, _ entry: Entry) -> Int? {
            guard accepts(id, entry), let i = index(id, making: true) else { return nil }
            // The numbers' positions on the stack: no array to allocate for each report.
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: ReportTally.maxPhones) { buffer in
                var count = 0
                for number in entry.phones.prefix(ReportTally.maxPhones) {
                    buffer[count] = intern(number)
                    count += 1
                }
                let phones = UnsafeBufferPointer(rebasing: buffer[..<count])
                storage[i] = Refs(phones, more: count > 1 ? more.add(phones.dropFirst()) : 0, entry)
                for phone in phones {
                    long.add(UInt32(id), number: phone)
                    totals[Int(phone) * statusCount + entry.status] += 1
                }
            }
            reportCount += 1
            return i
        }

        /// Takes out what ``place(_:_:)`` kept of the report at `i`.
        private mutating func unplace(at i: Int, id: Int64) {
            let old = storage[i]
            let phones = [old.first] + (old.count > 1 ? more.list[Int(old.more)..<Int(old.more) + Int(old.count) - 1] : [])
            for phone in phones {
                totals[Int(phone) * statusCount + Int(old.status)] -= 1
                long.remove(UInt32(id), number: phone)
            }
            if old.count > 1 { more.remove(at: old.more) }
            storage[i] = Refs()
            reportCount -= 1
        }

        /// Counts the fragments of the report at `i` in or out.
        private mutating func countFragments(at i: Int, id: Int64, by delta: Int) {
            let refs = storage[i]
            fragments.begin(id: id, second: Int64(refs.second))
            more.list.withUnsafeBufferPointer { list in refs.forEach(list) { fragments.add(number: $0, by: delta) } }
            fragments.add(id: id, by: delta)
        }

        /// Keeps `entries` (a start's build): first every record and count by number, in the
        /// entries' order (a store's, which reads memory in order), then every fragment count,
        /// newest first, so that each fragment's list of newest matches fills once and then
        /// turns every older report away at a glance. (Counted in the stores' orders, report
        /// after report was the newest yet and went in at the front.)
        mutating func build(_ entries: some Sequence<(Int64, Entry)>) {
            for (id, entry) in entries {
                // An id given twice (which no store's rows hold): the last is kept.
                if let i = index(id, making: false), storage[i].count > 0 { unplace(at: i, id: id) }
                _ = place(id, entry)
            }
            var newestFirst: [UInt64] = []
            newestFirst.reserveCapacity(reportCount)
            for (page, offset) in pageOffset.enumerated() where offset >= 0 {
                for k in 0..<(1 << ReportTally.pageBits) where storage[Int(offset) + k].count > 0 {
                    // The creation second above the id (both 32 bits, as kept).
                    newestFirst.append(UInt64(storage[Int(offset) + k].second) << 32 | UInt64(page << ReportTally.pageBits + k))
                }
            }
            newestFirst.sort(by: >)
            for key in newestFirst {
                let id = Int64(key & 0xFFFF_FFFF)
                if let i = index(id, making: false) { countFragments(at: i, id: id, by: 1) }
            }
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
