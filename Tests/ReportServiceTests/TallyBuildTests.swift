import Generator
import Testing
import TestSupport
@testable import Tally

@Suite("The tally's build from many entries at once, against the same entries applied one by one")
struct TallyBuildTests {
    /// Entries in no order, some ids given twice (the last kept), some outside what the tally
    /// keeps (no number, a status, district or month out of range, an id past 32 bits).
    static func entries(_ count: Int, using rng: inout SplitMix64) -> [(Int64, ReportTally.Entry)] {
        let pool = (0..<60).map { _ in Drafts.randomPhone(using: &rng) }
        var ids = (1...Int64(count)).map { $0 * 7 % 100_003 + 1 }
        ids.shuffle(using: &rng)
        ids += (0..<count / 20).map { _ in ids[rng.below(ids.count)] }
        return ids.map { id in
            let phones = (0..<rng.below(7)).map { _ in pool[rng.below(pool.count)] }
            var entry = ReportTally.Entry(
                phones: Array(Set(phones)), district: rng.below(10), objectType: rng.below(5), month: 600 + rng.below(40), status: rng.below(6),
                // Many reports share a second, so that the id orders them.
                second: 1_600_000_000 + Int64(rng.below(2_000)) * 1_000)
            switch rng.below(60) {
            case 0: entry.status = 6
            case 1: entry.district = 10
            case 2: entry.month = 70_000
            case 3: return (Int64(UInt32.max) + 5, entry)
            default: break
            }
            return (id, entry)
        }
    }

    @Test("built at once, it answers as one that applied the entries in order: counts, newest matches, long fragments, rankings, summaries, entries")
    func sameAsApplied() {
        var rng = SplitMix64(state: 42)
        let entries = Self.entries(4_000, using: &rng)
        let built = ReportTally(statusCount: 6, districtCount: 10, objectTypeCount: 5, entries: entries)
        let applied = ReportTally(statusCount: 6, districtCount: 10, objectTypeCount: 5, entries: [])
        applied.apply(entries.map { .set(id: $0.0, $0.1) })
        #expect(built.count == applied.count && built.count > 3_000)
        // Every fragment of three and four digits, leading zeros included.
        for value in 1_000..<11_000 {
            for digits in [String(String(value).suffix(3)), String(value).count == 4 ? String(value) : String(String(value).suffix(4))] {
                #expect(built.fragmentCount(digits) == applied.fragmentCount(digits), "\(digits)")
                // Taking a report out can leave a list too short to answer (nil: the store
                // answers); one built at once has lost none.
                if let b = applied.newestMatches(digits, limit: 50) {
                    #expect(built.newestMatches(digits, limit: 50).map { [$0.ids, [Int64($0.count)]] } == [b.ids, [Int64(b.count)]], "\(digits)")
                }
            }
        }
        for _ in 0..<200 {
            let digits = String(rng.below(100_000) + 100_000).dropFirst()
            let (a, b) = (built.newestLongMatches(digits, limit: 20), applied.newestLongMatches(digits, limit: 20))
            #expect(a?.ids == b?.ids && a?.count == b?.count, "\(digits)")
        }
        #expect(built.ranking(limit: 100) == applied.ranking(limit: 100))
        #expect(built.ranking(limit: 100, statuses: 0b101, district: 3) == applied.ranking(limit: 100, statuses: 0b101, district: 3))
        #expect(built.summary() == applied.summary())
        for (id, _) in entries { #expect(built.entry(id: id) == applied.entry(id: id), "\(id)") }
    }
}
