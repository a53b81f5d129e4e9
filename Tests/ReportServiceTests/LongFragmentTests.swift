import Testing
@testable import Tally

@Suite("Long fragments: the ids that hold a run of digits, against counting every id")
struct LongFragmentTests {
    @Test("every id up to the largest that holds the fragment, and no other, for fragments of five and six digits, leading zeros and repeats included", arguments: [99_999, 123_456, 1_000_000])
    func ids(maxID: Int64) throws {
        for fragment in ["12345", "00001", "99999", "10000", "45612", "123456", "000000", "11111"] {
            let digits = Array(fragment.utf8)
            let expected = (1...maxID).filter { String($0).contains(fragment) }
            let found = try #require(LongFragments.ids(holding: digits, upTo: maxID)).sorted()
            #expect(found == expected, "\(fragment) up to \(maxID)")
        }
        #expect(LongFragments.ids(holding: Array("1234".utf8), upTo: maxID) == nil, "four digits are not a long fragment")
        #expect(LongFragments.ids(holding: Array("12345".utf8), upTo: 9_999_999_999) == nil, "too many ids to try")
        for long in [String(repeating: "9", count: 20), String(repeating: "1", count: 64), "1234567"] {
            #expect(LongFragments.ids(holding: Array(long.utf8), upTo: min(maxID, 999_999)) == [], "\(long.count) digits: longer than any id")
        }
    }

    @Test("an id's fragment slots, read from its value, are those of its decimal text")
    func idSlots() {
        var rng = SystemRandomNumberGenerator()
        let values: [Int64] = [0, 7, 99, 100, 1_000, 9_999, 10_000, 2_147_483_647, -1, -1_234, .max, .min]
            + (0..<2_000).map { _ in Int64.random(in: 0...Int64(UInt32.max), using: &rng) }
        for value in values {
            var fromText: [UInt16] = [], fromValue: [UInt16] = []
            FragmentCounts.forEachSlot(of: String(value).utf8) { fromText.append($0) }
            FragmentCounts.forEachSlot(ofDigitsOf: value) { fromValue.append($0) }
            #expect(fromValue == fromText, "\(value)")
        }
    }

    @Test("a number holds a run only where its digits do")
    func holds() {
        #expect(LongFragments.holds("380671234567".utf8, Array("0671234".utf8)))
        #expect(!LongFragments.holds("380671234567".utf8, Array("0671235".utf8)))
        #expect(!LongFragments.holds("3806".utf8, Array("38067".utf8)))
    }
}
