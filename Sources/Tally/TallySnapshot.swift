import FlatFiles

/// The tally saved as its arrays (``ReportTally/save(to:)``) and read back
/// (``ReportTally/init(statusCount:districtCount:objectTypeCount:loading:)``), beside the
/// cluster index's (`IndexSnapshot.swift` in Clustering): building it takes a server on
/// ten million reports fourteen seconds.
///
/// What is read is checked before it is used: every number, status, district, object
/// type, page and fragment slot within its array; each block of a report's other numbers
/// one report's or free, never both; the report count against the reports.
/// The counts per number and per fragment are not recounted: the checksum finds damage
/// (see `IndexSnapshot.swift` on what it does not).
extension ReportTally {
    /// The layout of the records saved byte for byte (sizes and field offsets): a file
    /// saved by a build that laid them out otherwise is refused.
    public static var savedLayout: String {
        let refs = [\Refs.first, \Refs.more, \Refs.second].map { MemoryLayout<Refs>.offset(of: $0) ?? -1 }
            + [MemoryLayout<Refs>.offset(of: \Refs.count), MemoryLayout<Refs>.offset(of: \Refs.status)].map { $0 ?? -1 }
            + [\Refs.district, \Refs.objectType, \Refs.month].map { MemoryLayout<Refs>.offset(of: $0) ?? -1 }
        let match = [\FragmentCounts.Match.second, \FragmentCounts.Match.id].map { MemoryLayout<FragmentCounts.Match>.offset(of: $0) ?? -1 }
        return "refs \(MemoryLayout<Refs>.stride) \(refs), match \(MemoryLayout<FragmentCounts.Match>.stride) \(match)"
    }

    /// The counts a saved tally was made for and with, in the order saved.
    private static func savedCounts(_ statusCount: Int, _ districtCount: Int, _ objectTypeCount: Int) -> [Int] {
        [statusCount, districtCount, objectTypeCount, pageBits, maxPhones, FragmentCounts.slots, FragmentCounts.kept]
    }

    /// A copy of the tally as it is now, which later writes to this one leave alone (its
    /// arrays shared until either is written, so the copy itself is cheap).
    public func frozenCopy() -> ReportTally {
        ReportTally(statusCount: statusCount, districtCount: districtCount, objectTypeCount: objectTypeCount, contents: contents)
    }

    /// Writes the tally to `file` (a consistent copy: writes wait meanwhile).
    public func save(to file: FlatFileWriter) throws {
        let s = contents
        for value in Self.savedCounts(statusCount, districtCount, objectTypeCount) + [s.reportCount] { try file.write(Int64(value)) }
        try file.write(strings: s.numbers)
        try file.write(s.pageOffset)
        try file.write(s.storage)
        try file.write(s.more.list)
        try file.write(s.more.free)
        try file.write(s.totals)
        try file.write(s.fragments.counts)
        try file.write(nested: s.fragments.newest)
        try file.write(s.fragments.slotStart)
        try file.write(s.fragments.slotList)
        try file.write(nested: s.long.reportsOfNumber)
        try file.write(nested: s.long.numbersOfRun)
    }

    /// A tally read back from what ``save(to:)`` wrote, for these counts of statuses,
    /// districts and object types; one saved for others, or that does not hold together,
    /// is an error.
    public convenience init(statusCount: Int, districtCount: Int, objectTypeCount: Int, loading section: inout FlatSectionReader) throws {
        let expected = Self.savedCounts(statusCount, districtCount, objectTypeCount).map(Int64.init)
        var saved: [Int64] = []
        for _ in expected { saved.append(try section.read()) }
        guard saved == expected else {
            throw FlatFileError("the tally was saved for other statuses, districts or object types")
        }
        let reportCount = Int(try section.read(in: 0...Int64(UInt32.max)))
        let numbers = try section.readStrings(limit: Int(UInt32.max), byteLimit: .max)
        let pageOffset: [Int32] = try section.read(limit: (1 << (32 - Self.pageBits)))
        let storage: [Refs] = try section.read(limit: pageOffset.count << Self.pageBits)
        let moreList: [UInt32] = try section.read(limit: MoreNumbers.block * storage.count)
        let moreFree: [UInt32] = try section.read(limit: moreList.count / MoreNumbers.block)
        let totals: [UInt32] = try section.read(limit: numbers.count * statusCount)
        let counts: [UInt32] = try section.read(limit: FragmentCounts.slots)
        let newest: [[FragmentCounts.Match]] = try section.read(nestedLimit: FragmentCounts.slots, elementLimit: FragmentCounts.slots * FragmentCounts.kept)
        let slotStart: [UInt32] = try section.read(limit: numbers.count + 1)
        let slotList: [UInt16] = try section.read(limit: Int(slotStart.last ?? 0))
        let reportsOfNumber: [[UInt32]] = try section.read(nestedLimit: numbers.count, elementLimit: 5 * reportCount)
        let numbersOfRun: [[UInt32]] = try section.read(nestedLimit: LongFragments.runs, elementLimit: 64 * numbers.count)
        let contents = Storage(
            numbers: numbers, pageOffset: pageOffset, storage: storage, more: MoreNumbers(list: moreList, free: moreFree), totals: totals,
            reportCount: reportCount,
            fragments: FragmentCounts.Storage(counts: counts, newest: newest, slotStart: slotStart, slotList: slotList),
            long: LongFragments.Storage(reportsOfNumber: reportsOfNumber, numbersOfRun: numbersOfRun))
        try Self.check(contents, statusCount: statusCount, districtCount: districtCount, objectTypeCount: objectTypeCount)
        self.init(statusCount: statusCount, districtCount: districtCount, objectTypeCount: objectTypeCount, contents: contents)
    }

    private static func check(_ s: Storage, statusCount: Int, districtCount: Int, objectTypeCount: Int) throws {
        let numbers = s.numbers.count
        guard s.totals.count == numbers * statusCount, s.storage.count % (1 << pageBits) == 0 else { throw FlatFileError("the tally's arrays disagree") }
        var pages = Set<Int32>()
        for offset in s.pageOffset where offset >= 0 {
            guard Int(offset) % (1 << pageBits) == 0, Int(offset) < s.storage.count, pages.insert(offset).inserted else {
                throw FlatFileError("the tally's page table points outside it")
            }
        }
        // Each block of the numbers after the first is one report's or free, never both.
        let block = MoreNumbers.block, more = s.more
        guard more.list.count % block == 0 else { throw FlatFileError("the tally's numbers after the first are cut short") }
        var blockUsed = [Bool](repeating: false, count: more.list.count / block)
        func use(_ start: UInt32) throws {
            guard Int(start) % block == 0, Int(start) < more.list.count, !blockUsed[Int(start) / block] else {
                throw FlatFileError("the tally's numbers after the first are claimed twice or lie outside them")
            }
            blockUsed[Int(start) / block] = true
        }
        var held = 0
        try more.list.withUnsafeBufferPointer { list in
            for refs in s.storage where refs.count > 0 {
                guard Int(refs.count) <= maxPhones, Int(refs.status) < statusCount, Int(refs.district) < districtCount, Int(refs.objectType) < objectTypeCount else {
                    throw FlatFileError("a report in the tally is out of range")
                }
                if refs.count > 1 { try use(refs.more) }
                var inRange = true
                refs.forEach(list) { inRange = inRange && Int($0) < numbers }
                guard inRange else { throw FlatFileError("a report in the tally names an unknown number") }
                held += 1
            }
        }
        for start in more.free { try use(start) }
        guard !blockUsed.contains(false) else { throw FlatFileError("the tally's numbers after the first hold a block of no one") }
        guard held == s.reportCount else { throw FlatFileError("the tally's report count disagrees with its reports") }
        let f = s.fragments
        guard f.counts.count == FragmentCounts.slots, f.newest.count == FragmentCounts.slots, f.newest.allSatisfy({ $0.count <= FragmentCounts.kept }),
              f.slotStart.count == numbers + 1, f.slotStart.first == 0, f.slotStart.last.map(Int.init) == f.slotList.count,
              zip(f.slotStart, f.slotStart.dropFirst()).allSatisfy({ $0 <= $1 }), f.slotList.allSatisfy({ Int($0) < FragmentCounts.slots })
        else { throw FlatFileError("the tally's fragment counts do not hold together") }
        guard s.long.reportsOfNumber.count == numbers, s.long.numbersOfRun.count == LongFragments.runs,
              s.long.numbersOfRun.allSatisfy({ $0.allSatisfy { Int($0) < numbers } })
        else { throw FlatFileError("the tally's long fragments do not hold together") }
    }
}
