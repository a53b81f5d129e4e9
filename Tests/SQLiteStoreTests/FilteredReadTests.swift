import Foundation
import Generator
import Geometry
import ReportModel
@testable import SQLiteStore
import StorePorts
import Testing
import TestSupport

@Suite("Filtered reads against a brute-force filter")
struct FilteredReadTests {
    /// Filters of every kind: boxes (random, through stored points, across the
    /// antimeridian, the world, none), status sets, creation intervals and object types, alone and together.
    static func filters(_ all: [Report], using rng: inout SplitMix64) -> [ReportFilter] {
        let codes = Drafts.reference.statuses.map(\.code)
        var filters: [ReportFilter] = [ReportFilter()]
        for box in BoxQueryTests.boxes(through: all, using: &rng) {
            let statuses: [String]? = Bool.random(using: &rng) ? nil : Array(codes.shuffled(using: &rng).prefix(Int.random(in: 1...3, using: &rng)))
            var created: ClosedRange<Int64>?
            if Bool.random(using: &rng) {
                let a = all.randomElement(using: &rng)!.createdMilliseconds, b = all.randomElement(using: &rng)!.createdMilliseconds
                created = min(a, b)...max(a, b)
            }
            filters.append(ReportFilter(box: box))
            filters.append(ReportFilter(box: box, statuses: statuses, created: created))
            filters.append(ReportFilter(box: nil, statuses: statuses, created: created))
            let types = Array(Drafts.reference.objectTypes.map(\.code).shuffled(using: &rng).prefix(Int.random(in: 1...2, using: &rng)))
            filters.append(ReportFilter(box: box, statuses: statuses, objectTypes: types))
        }
        return filters
    }

    static func matches(_ report: Report, _ filter: ReportFilter) -> Bool {
        (filter.box?.contains(report.coordinate) ?? true) && (filter.statuses?.contains(report.status) ?? true)
            && (filter.objectTypes?.contains(report.objectType) ?? true)
            && (filter.created?.contains(report.createdMilliseconds) ?? true)
    }

    @Test("paging by cursor returns every matching report once, in id order, whether the box is read by its ids or by a scan",
          arguments: [1, 7, 100, 10_000])
    func paging(limit: Int) throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: UInt64(40 + limit))
        let drafts = Drafts.positions(1_500, using: &rng).map { Drafts.make($0, using: &rng) }
        try fixture.store.insert(drafts)
        let all = try fixture.store.all().sorted { $0.id < $1.id }
        for filter in Self.filters(all, using: &rng).prefix(limit == 1 ? 40 : 400) {
            let expected = all.filter { Self.matches($0, filter) }
            var got: [Report] = []
            var after: Int64 = 0
            while true {
                let page = try fixture.store.reports(matching: filter, after: after, limit: limit)
                #expect(page.count <= limit)
                got += page
                guard page.count == limit, let last = page.last else { break }
                after = last.id
            }
            #expect(got == expected, "\(filter)")
        }
    }

    @Test("a box's ids come from the R*Tree in order, or nil past the cap; the rows among them are filtered")
    func idsAndAmong() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 77)
        try fixture.store.insert(Drafts.positions(1_200, using: &rng).map { Drafts.make($0, using: &rng) })
        let all = try fixture.store.all().sorted { $0.id < $1.id }
        for filter in Self.filters(all, using: &rng) {
            guard let box = filter.box else { continue }
            let inBox = all.filter { box.contains($0.coordinate) }.map(\.id)
            let cap = Int.random(in: 0...1_300, using: &rng)
            let ids = try fixture.store.ids(in: box, cap: cap)
            #expect(ids == (inBox.count > cap ? nil : inBox), "\(box) cap \(cap)")
            let among = try fixture.store.reports(among: inBox, matching: filter)
            #expect(among == all.filter { Self.matches($0, filter) }, "\(filter)")
        }
    }
}
