import ChangeFeed
import Foundation
import GRDB
import Generator
import Geometry
import ReportModel
@testable import ReportService
import SQLiteStore
import Synchronization
import Testing
import TestSupport

/// The feed against a brute-force replay: a snapshot taken while writes go on, with the
/// changes since its `lastChange` applied in order, equals the database. And the hub of
/// the change stream cutting off a subscriber that does not read, while writers go on.
@Suite("The changes feed replayed onto a snapshot")
struct ChangeFeedTests {
    /// Random writes by `workers` concurrent writers, each its own seeded sequence:
    /// filings, edits (phones and places too), transitions, hides and unhides.
    static func randomWrites(_ service: ReportService, ids: [Int64], steps: Int, workers: Int, seed: UInt64) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var rng = SplitMix64(state: seed &+ UInt64(worker))
                    var mine: [Int64] = []
                    for _ in 0..<steps {
                        let pool = mine + ids
                        let id = pool.isEmpty ? 0 : pool[rng.below(pool.count)]
                        do {
                            switch pool.isEmpty ? 0 : rng.below(6) {
                            case 0:
                                let c = Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit())
                                mine.append(try await service.file(Drafts.make(c, using: &rng), by: WorkflowTests.filer).report.id)
                            case 1:
                                let phones = [Drafts.randomPhone(using: &rng)]
                                let c = Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit())
                                _ = try await service.edit(id, by: WorkflowTests.supervisor, ifMatch: nil) { current in
                                    var d = ReportDraft(current)
                                    d.phones = phones
                                    d.coordinate = c
                                    return d
                                }
                            case 2, 3:
                                guard let current = try await service.report(id: id) else { continue }
                                let steps = service.reference.transitions(from: current.status).filter { !$0.noteRequired && !$0.duplicateOfRequired && $0.by.contains { $0 != "filer" } }
                                guard !steps.isEmpty else { continue }
                                _ = try await service.transition(id, to: steps[rng.below(steps.count)].to, note: nil, duplicateOf: nil, by: WorkflowTests.supervisor)
                            case 4: _ = try await service.hide(id, note: "спам", by: WorkflowTests.supervisor)
                            default: _ = try await service.unhide(id, note: nil, by: WorkflowTests.supervisor)
                            }
                        } catch is ReportHidden {
                        } catch is TransitionNotAllowed {}  // another writer moved it first
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Every report a reader may see, by id: the public ones, and for staff the hidden too.
    static func everything(_ store: SQLiteReports, staff: Bool) throws -> [Int64: Report] {
        var all = try store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM report") }
        if staff { all += try store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM report_hidden") } }
        var found = Dictionary(try store.reports(ids: all).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for (id, hidden) in try store.hidden(ids: all) { found[id] = hidden.report }
        return found
    }

    @Test("after random concurrent writes, a snapshot taken meanwhile plus the feed since its X-Last-Seq equals the database, for the public and for staff")
    func replay() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        let feed = ChangeFeed(storage: temp.store)
        try await Self.randomWrites(service, ids: [], steps: 150, workers: 4, seed: 1)
        let ids = try WorkflowTests.numbers(temp.store, "SELECT id FROM report UNION SELECT id FROM report_hidden")

        for staff in [false, true] {
            // The snapshot is read while other writers go on, as a client's download is.
            let writing = Task { try await Self.randomWrites(service, ids: ids, steps: 150, workers: 4, seed: staff ? 20 : 10) }
            let since = try temp.store.lastChange()
            var copy = try Self.everything(temp.store, staff: staff)
            try await writing.value

            var cursor = since, seen: [Int64] = []
            while true {
                let page = try await feed.page(since: cursor, limit: 37, staff: staff)
                for entry in page.entries {
                    seen.append(entry.seq)
                    let visible = staff || (entry.type != .reportHidden && entry.type != .reportDeleted)
                    if let report = entry.report, visible { copy[entry.reportID] = report } else { copy[entry.reportID] = nil }
                }
                cursor = page.lastSeq
                if page.entries.count < 37 { break }
            }
            #expect(seen == seen.sorted() && Set(seen).count == seen.count && seen.allSatisfy { $0 > since })
            #expect(cursor == (try temp.store.lastChange()))
            let now = try Self.everything(temp.store, staff: staff)
            let differing = Set(copy.keys).union(now.keys).filter { copy[$0] != now[$0] }
            #expect(differing.isEmpty, "staff: \(staff): \(differing.count) reports differ, e.g. \(differing.sorted().prefix(5))")
            #expect(!now.isEmpty)
        }
    }

    @Test("a subscriber that reads nothing is cut off once its queue is full; the writers all go through")
    func slowSubscriber() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        let hub = ChangeHub(feed: ChangeFeed(storage: temp.store), pollInterval: .milliseconds(5), queueLimit: 10)
        let reader = try await hub.subscribe(after: 0, staff: false, box: nil)
        let slow = try await hub.subscribe(after: 0, staff: false, box: nil)
        var rng = SplitMix64(state: 5)
        var received = 0
        var iterator = reader.events.makeAsyncIterator()
        for _ in 0..<40 {
            let c = Drafts.positions(1, using: &rng)[0]
            _ = try await service.file(Drafts.make(c, using: &rng), by: WorkflowTests.filer)
            // The reader keeps up: one event a filing.
            if await iterator.next() != nil { received += 1 }
        }
        #expect(received == 40)
        #expect(hub.cutOff.load(ordering: .relaxed) == 1)
        var left = 0
        for await _ in slow.events { left += 1 }  // ends: the stream was finished
        #expect(left == 10, "it kept its queue, and nothing past it")
        #expect(hub.subscriberCount == 1)
        hub.unsubscribe(reader)
    }

    @Test("a commit of this process rings the hub: its event comes without waiting for the poll")
    func nudged() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        // A poll that never comes within the test: only the nudge can bring the events.
        let hub = ChangeHub(feed: ChangeFeed(storage: temp.store), pollInterval: .seconds(3_600))
        service.onWrite { _ in hub.nudge() }
        let subscription = try await hub.subscribe(after: try temp.store.lastChange(), staff: false, box: nil)
        var rng = SplitMix64(state: 9)
        var iterator = subscription.events.makeAsyncIterator()
        for _ in 0..<3 {
            let filed = try await service.file(Drafts.make(Drafts.positions(1, using: &rng)[0], using: &rng), by: WorkflowTests.filer)
            let chunk = await iterator.next()
            #expect(chunk.map { String(buffer: $0) }?.contains("\"id\":\(filed.report.id)") == true)
        }
        hub.unsubscribe(subscription)
    }
}
