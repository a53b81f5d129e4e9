import Accounts
import Clustering
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

@Suite("Writes through the service: group commit, history, changes, and an index that equals the rows")
struct WorkflowTests {
    static let filer = Caller(accountID: nil, role: .inspector)
    static let supervisor = Caller(accountID: nil, role: .supervisor)

    /// Every zoom's clusters of an index, for comparing two.
    static func picture(_ index: ClusterIndex) -> [[ClusterItem]] {
        (0...index.grid.maxZoom).map { zoom in
            index.clusters(in: index.grid.cells(in: .world, zoom: zoom)).sorted { "\($0)" < "\($1)" }
        }
    }

    /// What the public and the rows say: the ids in the index against those in `report`.
    static func storedIDs(_ store: SQLiteReports) throws -> Set<Int64> {
        Set(try numbers(store, "SELECT id FROM report"))
    }

    /// The integers a query selects (a synchronous read, away from GRDB's async overloads).
    static func numbers(_ store: SQLiteReports, _ sql: String) throws -> [Int64] {
        try store.pool.read { db in try Int64.fetchAll(db, sql: sql) }
    }

    @Test("after 10,000 random creates, edits, moves, transitions, hides and unhides, the index equals one rebuilt from the database")
    func indexEqualsRows() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        let reference = temp.store.reference
        var rng = SplitMix64(state: 2026)
        var ids: [Int64] = []
        var hidden: Set<Int64> = []
        var refusals = 0
        for step in 0..<10_000 {
            let kind = ids.count < 50 ? 0 : rng.below(10)
            do {
                switch kind {
                case 0, 1, 2:
                    let c = Drafts.positions(1, using: &rng)[0]
                    ids.append(try await service.file(Drafts.make(c, using: &rng), by: Self.filer).report.id)
                case 3, 4:
                    let id = ids[rng.below(ids.count)]
                    let c = Coordinate(longitude: 30.3 + 0.4 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit())
                    let comment = "правка \(step)"
                    let phones = kind == 4 ? [Drafts.randomPhone(using: &rng)] : nil
                    _ = try await service.edit(id, by: Self.supervisor, ifMatch: nil) { current in
                        var d = ReportDraft(current)
                        d.coordinate = c
                        d.comment = comment
                        d.phones = phones ?? d.phones
                        return d
                    }
                case 5, 6, 7:
                    let id = ids[rng.below(ids.count)]
                    guard let current = try await service.report(id: id) else { refusals += 1; continue }
                    let steps = reference.transitions(from: current.status).filter { !$0.by.contains("filer") || $0.by.count > 1 }
                    guard !steps.isEmpty else { refusals += 1; continue }
                    let step = steps[rng.below(steps.count)]
                    var original: Int64?
                    for other in ids where other != id && !hidden.contains(other) {
                        if try await service.report(id: other)?.status != "duplicate" { original = other; break }
                    }
                    _ = try await service.transition(
                        id, to: step.to, note: step.noteRequired ? "причина" : nil, duplicateOf: step.duplicateOfRequired ? original : nil,
                        by: Self.supervisor)
                case 8:
                    let id = ids[rng.below(ids.count)]
                    guard !hidden.contains(id) else { refusals += 1; continue }
                    _ = try await service.hide(id, note: "спам", by: Self.supervisor)
                    hidden.insert(id)
                default:
                    guard let id = hidden.randomElement(using: &rng) else { refusals += 1; continue }
                    _ = try await service.unhide(id, note: nil, by: Self.supervisor)
                    hidden.remove(id)
                }
            } catch is ReportHidden {
                refusals += 1
            }
        }
        #expect(refusals < 2_000)
        #expect(Set(ids).count == ids.count, "every filing got its own id")
        let rebuilt = try await ReportService(storage: temp.store)
        #expect(service.index.count == rebuilt.index.count)
        #expect(service.index.count == ids.count - hidden.count)
        #expect(Self.picture(service.index) == Self.picture(rebuilt.index))
        #expect(try Self.storedIDs(temp.store) == Set(ids).subtracting(hidden))
        let changes = try Self.numbers(temp.store, "SELECT seq FROM report_change ORDER BY rowid")
        #expect(changes == changes.sorted() && Set(changes).count == changes.count)
        let history = try Self.numbers(temp.store, "SELECT count(*) FROM report_history")
        #expect(history == [Int64(changes.count)], "every write has its history row and its change row")
        try Self.expectSearchMatchesRows(temp.store, using: &rng)
        for searched in [service, rebuilt] { try await Self.expectFirstPagesMatchStore(searched, temp.store, using: &rng) }
    }

    /// The service's first pages from three digits to ten (from the tally's memory) are the
    /// store's, in order, the exact id first, and so are their counts.
    static func expectFirstPagesMatchStore(_ service: ReportService, _ store: SQLiteReports, using rng: inout SplitMix64) async throws {
        let rows = try await store.pool.read { db in try Row.fetchAll(db, sql: "SELECT id, phones FROM report").map { (id: $0[0] as Int64, phones: $0[1] as String) } }
        var fromTally = 0
        for round in 0..<300 {
            let phone = rows[rng.below(rows.count)].phones.split(separator: ";")[0]
            let length = 3 + rng.below(min(8, phone.count - 2))
            let start = rng.below(phone.count - length + 1)
            // Now and then a report's own id, which comes first, or a part of one.
            let id = String(rows[rng.below(rows.count)].id)
            let fragment = round % 25 == 0 ? id : round % 25 == 1 ? String(id.dropFirst()) : String(phone.dropFirst(start).prefix(length))
            guard fragment.count >= 3 else { continue }
            let limit = [1, 7, 50][round % 3]
            if (service.tally.newestMatches(fragment, limit: limit + 1) ?? service.tally.newestLongMatches(fragment, limit: limit + 1)) != nil { fromTally += 1 }
            let (found, matched) = try await service.search(fragment, limit: limit)
            #expect(found.map(\.id) == (try store.search(fragment, limit: limit)).map(\.id), "search \(fragment), limit \(limit)")
            #expect(matched == (try store.searchCount(fragment)), "count \(fragment): the tally's is exact")
        }
        #expect(fromTally > 200, "most first pages came from the tally")
    }

    /// The phone search (its full-text index) finds exactly the stored reports whose
    /// phones or id hold a fragment, for fragments of stored numbers and of none.
    static func expectSearchMatchesRows(_ store: SQLiteReports, using rng: inout SplitMix64) throws {
        let rows = try store.pool.read { db in try Row.fetchAll(db, sql: "SELECT id, phones FROM report").map { (id: $0[0] as Int64, phones: $0[1] as String) } }
        for _ in 0..<100 {
            let phone = rows[rng.below(rows.count)].phones.split(separator: ";")[0]
            let length = 3 + rng.below(phone.count - 2)
            let start = rng.below(phone.count - length + 1)
            let fragment = String(phone.dropFirst(start).prefix(length))
            let expected = Set(rows.filter { $0.phones.contains(fragment) || String($0.id).contains(fragment) }.map(\.id))
            let found = try store.search(fragment, limit: rows.count + 1).map(\.id)
            #expect(Set(found) == expected && found.count == expected.count, "search \(fragment)")
        }
    }

    @Test("writers arriving together share commits: 2,000 concurrent filings, unique ids, all stored and indexed, a history row each")
    func groupCommit() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        var rng = SplitMix64(state: 9)
        let drafts = Drafts.positions(2_000, using: &rng).map { Drafts.make($0, using: &rng) }
        let filed = try await withThrowingTaskGroup(of: Int64.self) { group in
            for draft in drafts { group.addTask { try await service.file(draft, by: Self.filer).report.id } }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        #expect(Set(filed).count == 2_000)
        #expect(try Self.storedIDs(temp.store) == Set(filed))
        #expect(service.index.count == 2_000)
        #expect(service.commits.transactions.load(ordering: .relaxed) < 2_000, "some filings shared a transaction")
        #expect(try Self.numbers(temp.store, "SELECT count(*) FROM report_history WHERE action = 'filed'") == [2_000])
    }

    @Test("a write that fails inside a shared transaction leaves nothing, and the others in it stay")
    func failureInBatch() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        var rng = SplitMix64(state: 4)
        let first = try await service.file(Drafts.make(Drafts.positions(1, using: &rng)[0], using: &rng), by: Self.filer).report
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<200 {
                let draft = Drafts.make(Drafts.positions(1, using: &rng)[0], using: &rng)
                group.addTask {
                    if i % 3 == 0 {
                        do {
                            _ = try await service.transition(first.id, to: "confirmed", note: nil, duplicateOf: nil, by: Self.supervisor)
                            return true
                        } catch { return false }
                    }
                    _ = try await service.file(draft, by: Self.filer)
                    return true
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { !$0 }.count == 67, "new → confirmed is no step: each refused")
        #expect(try temp.store.count() == 1 + 133)
        let history = try temp.store.history(of: first.id)
        #expect(history.map(\.action) == [.filed])
        #expect(service.index.count == 134)
    }

    @Test("a transition checks the If-Match version inside its transaction: the second of two writers holding one version is refused")
    func lostUpdate() async throws {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        var rng = SplitMix64(state: 5)
        let report = try await service.file(Drafts.make(Drafts.positions(1, using: &rng)[0], using: &rng), by: Self.filer).report
        let version = report.version
        let first = try await service.transition(report.id, to: "verifying", note: nil, duplicateOf: nil, by: Self.supervisor, ifMatch: version)
        #expect(first.version > version)
        await #expect(throws: PreconditionFailed.self) {
            _ = try await service.edit(report.id, by: Self.supervisor, ifMatch: version) { ReportDraft($0) }
        }
    }
}
