import Foundation
import Generator
import Geometry
import ReportModel
@testable import SQLiteStore
import StorePorts
import Testing
import TestSupport

@Suite("Phone and id search against a brute-force substring match")
struct SearchTests {
    /// Brute force: exact id first, then every report whose phones or id contain the
    /// digits, newest first (creation second, then id).
    static func expected(_ all: [Report], _ digits: String, limit: Int) -> [Int64] {
        let exact = digits.first == "0" ? nil : Int64(digits)
        let head = all.filter { $0.id == exact }
        let rest = all.filter { r in r.id != exact && (r.phones.contains { $0.contains(digits) } || String(r.id).contains(digits)) }
            .sorted { (second($0), $0.id) > (second($1), $1.id) }
        return Array((head + rest).prefix(limit).map(\.id))
    }

    static func second(_ r: Report) -> Int64 { Int64((r.createdAt.timeIntervalSince1970).rounded(.down)) }

    @Test("results and counts equal brute force, for every plan")
    func bruteForce() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 21)
        // Heavy reuse: a few phones on many reports, so common fragments take the scan plan.
        let common = (0..<5).map { _ in Drafts.randomPhone(using: &rng) }
        let drafts = (0..<1_200).map { i in
            let phones = i % 3 == 0 ? [common.randomElement(using: &rng)!, Drafts.randomPhone(using: &rng)] : [Drafts.randomPhone(using: &rng)]
            // Many reports in the same second, in different milliseconds: ordered by id.
            let created = Date(timeIntervalSince1970: Double(1_700_000_000_000 + (i % 50 == 0 ? 0 : Int.random(in: 0...200_000, using: &rng))) / 1000)
            return Drafts.make(Coordinate(longitude: 30.5, latitude: 50.4), phones: phones, created: created, using: &rng)
        }
        try fixture.store.importDrafts(drafts)
        let all = try fixture.store.all()
        var queries = ["1", "7", "12", "067", "380", "0671", "5", "99999999", "123", "1000", "1200", "0001"]
        for _ in 0..<60 {
            let phone = all.randomElement(using: &rng)!.phones.randomElement(using: &rng)!
            let length = Int.random(in: 1...12, using: &rng)
            let start = Int.random(in: 0...(12 - length), using: &rng)
            queries.append(String(phone.dropFirst(start).prefix(length)))
        }
        queries += common.map { String($0.suffix(7)) }
        for q in queries {
            for limit in [1, 50, 5_000] {
                #expect(try fixture.store.search(q, limit: limit).map(\.id) == Self.expected(all, q, limit: limit), "q=\(q) limit=\(limit)")
            }
            #expect(try fixture.store.searchCount(q) == Self.expected(all, q, limit: .max).count, "q=\(q)")
        }
    }

    @Test("written forms reduce to their digits: phones, +38(0..), #id")
    func writtenForms() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 22)
        for _ in 0..<30 { try fixture.store.insert(Drafts.make(Coordinate(longitude: 30, latitude: 50), using: &rng)) }
        let target = try fixture.store.insert(Drafts.make(Coordinate(longitude: 30, latitude: 50), phones: ["067 765 43 21"], using: &rng))
        #expect(try fixture.store.search("+38(067)765-43", limit: 5).map(\.id) == [target.id])
        #expect(try fixture.store.search("067 76", limit: 50).contains { $0.id == target.id })
        #expect(try fixture.store.search("#\(target.id)", limit: 50).first?.id == target.id)
    }

    @Test("a text without digits is an error naming q; an empty result is not")
    func errors() throws {
        let fixture = try TemporaryStore()
        #expect(throws: ValidationError(field: "q", "must contain at least one digit of a phone number or report id")) {
            try fixture.store.search("abc", limit: 5)
        }
        #expect(throws: ValidationError.self) { try fixture.store.search(String(repeating: "1", count: 65), limit: 5) }
        #expect(try fixture.store.search("123", limit: 5).isEmpty)
        #expect(try fixture.store.searchCount("12") == 0)
    }
}
