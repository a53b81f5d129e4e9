import Foundation
import Generator
import ReportModel
@testable import ReportService
import Testing
import TestSupport

@Suite("Status updates read from the change log against a record of every step")
struct StatusUpdateTests {
    struct Step: Equatable {
        var id: Int64
        var at: Date
        var from: String?
        var to: String
    }

    @Test("for random windows and limits, the steps of public reports made in the window, oldest first, found by bisection over a log of filings, edits and steps")
    func windows() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        let codes = temp.store.reference.statuses.map(\.code)
        var rng = SplitMix64(state: 311)
        let base = Date(timeIntervalSince1970: 1_790_000_000)
        var ids: [Int64] = [], steps: [Step] = []
        for tick in 0..<3_000 {
            // Several writes may share a millisecond; time never goes back.
            let now = base.addingTimeInterval(Double(tick / 2) * 37)
            if ids.count < 40 || rng.below(4) == 0 {
                let c = Drafts.positions(1, using: &rng)[0]
                ids.append(try await service.file(Drafts.make(c, using: &rng), by: WorkflowTests.filer, now: now).report.id)
                continue
            }
            let id = ids[rng.below(ids.count)]
            let before = try #require(try await service.report(id: id, for: WorkflowTests.supervisor))
            let target = codes[rng.below(codes.count)]
            do {
                _ = try await service.transition(id, to: target, note: "шаг \(tick)", duplicateOf: target == "duplicate" ? ids[0] : nil, by: WorkflowTests.supervisor, now: now)
                steps.append(Step(id: id, at: now, from: before.report.status, to: target))
            } catch {}
        }
        #expect(steps.count > 400, "the log holds steps among the filings, over several pages of it")
        let hidden = ids[5]
        _ = try await service.hide(hidden, note: "спам", by: WorkflowTests.supervisor, now: base.addingTimeInterval(1_000_000))
        let visible = steps.filter { $0.id != hidden }
        let end = base.addingTimeInterval(1_500 * 37)
        for round in 0..<40 {
            let start = base.addingTimeInterval(Double(rng.below(1_600)) * 37 - 1_000)
            let stop = round == 0 ? end.addingTimeInterval(100) : start.addingTimeInterval(Double(rng.below(1_200)) * 37)
            let limit = [1, 7, 50, 1_000][round % 4]
            let expected = Array(visible.filter { $0.at >= start && $0.at <= stop }.prefix(limit))
            let found = try await service.statusUpdates(from: start, to: stop, limit: limit).updates.map { Step(id: $0.reportID, at: $0.at, from: $0.fromStatus, to: $0.toStatus) }
            #expect(found == expected, "\(start)…\(stop), limit \(limit)")
        }
        // Read on by pages of 7 from each page's `next`: every update of the window once, in
        // order; also when a page may read only 9 changes of the log (filings and edits
        // among the steps), so that pages end early, some of them empty, with where to go on.
        for scan in [ReportService.statusUpdateScan, 9] {
            var paged: [StatusUpdate] = [], after: Int64?, pages = 0, short = 0
            while true {
                let page = try await service.statusUpdates(from: base - 1, to: end, after: after, limit: 7, scan: scan)
                paged += page.updates
                pages += 1
                if page.updates.count < 7, page.next != nil { short += 1 }
                guard let next = page.next else { break }
                #expect(next > after ?? 0, "a page moves on")
                after = next
            }
            #expect(paged.map { Step(id: $0.reportID, at: $0.at, from: $0.fromStatus, to: $0.toStatus) } == visible.filter { $0.at <= end }, "scan \(scan)")
            #expect(paged.map(\.seq) == paged.map(\.seq).sorted() && Set(paged.map(\.seq)).count == paged.count)
            #expect(scan == 9 ? short > 10 : short == 0, "\(short) of \(pages) pages ended at the scan's limit")
        }
        let last = try await service.statusUpdates(from: base - 1, to: end.addingTimeInterval(1_000_000), limit: 1_000)
        #expect(last.updates.count < 1_000 && last.next == nil, "the whole window read: nowhere to go on")
        #expect(try await service.statusUpdates(from: end.addingTimeInterval(1), to: end.addingTimeInterval(99), limit: 10) == StatusUpdates(updates: [], next: nil), "after the last")
        #expect(try await service.statusUpdates(from: end, to: base, limit: 10) == StatusUpdates(updates: [], next: nil), "an empty window")
    }
}
