import Foundation
import Generator
import Geometry
import ReportModel
import ReportService
import StorePorts
import Testing
import TestSupport

/// Assignments on every store, through the service: one active assignee per report, ends
/// kept, each start and end the report's history row and change, the assignee's order,
/// the filters by assignee against a model of who holds what, and the assignee's
/// notifications.
@Suite("Store conformance: assignments")
struct AssignmentStorageConformance {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let boss = Caller(accountID: 7, role: .supervisor)
    static let anna = Assignee(id: 11, role: .inspector, disabled: false), borys = Assignee(id: 12, role: .inspector, disabled: false)
    static let annaCalls = Caller(accountID: 11, role: .inspector)

    @Test("assign, reassign, take, give back, close, hide, bulk all or nothing, reorder; the lists, filters, counts, history, changes and notifications agree with a model", arguments: StoreUnderTest.all)
    func lifecycle(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        var rng = SplitMix64(state: 77)
        let drafts = try Drafts.positions(30, using: &rng).map { try storage.reference.validate(Drafts.make($0, status: "new", using: &rng)) }
        let r = try storage.commit([{ t in try drafts.map { try t.insert($0, filer: nil, author: .system, now: Self.t0) } }])[0].get().map(\.id)
        let service = try await ReportService(storage: storage)
        var holds: [Int64: Int64] = [:]  // report → assignee, the model

        for id in r[0..<5] { _ = try await service.assign(id, to: Self.anna, note: "перевір", by: Self.boss, now: Self.t0 + 1) }
        _ = try await service.assign(r[5], to: Self.borys, note: nil, by: Self.boss, now: Self.t0 + 2)
        for id in r[0..<5] { holds[id] = 11 }
        holds[r[5]] = 12
        #expect(try await service.assignments(of: 11).map(\.reportID) == Array(r[0..<5]))
        #expect(try await service.assignments(of: 11).map(\.position) == [1, 2, 3, 4, 5])

        // Reassigned: one history row, the old assignment ended by it, the new one last in Borys's list.
        _ = try await service.assign(r[1], to: Self.borys, note: "Борис ближче", by: Self.boss, now: Self.t0 + 3)
        holds[r[1]] = 12
        #expect(try await service.assignments(of: 12).map(\.reportID) == [r[5], r[1]])
        let trail = try await service.assignments(ofReport: r[1])
        #expect(trail.map(\.accountID) == [12, 11] && trail[0].isActive && trail[1].ended?.seq == trail[0].startedSeq)
        let history = try await storage.history(of: r[1], after: 0, limit: 1_000)
        #expect(history.map(\.action) == [.filed, .assigned, .assigned])
        #expect(history.last?.changes == [FieldChange(field: "assignee", before: "11", after: "12")] && history.last?.author.accountID == 7)

        // The assignee's own already: nothing written.
        let quiet = try await storage.lastChange()
        _ = try await service.assign(r[1], to: Self.borys, note: nil, by: Self.boss, now: Self.t0 + 4)
        #expect(try await storage.lastChange() == quiet)

        // An inspector takes an unassigned report and gives it back; not another's, not for someone else.
        _ = try await service.assign(r[6], to: Self.anna, note: nil, by: Self.annaCalls, now: Self.t0 + 5)
        await #expect(throws: AssignmentConflict.self) { try await service.assign(r[5], to: Self.anna, note: nil, by: Self.annaCalls) }
        await #expect(throws: Forbidden.self) { try await service.assign(r[7], to: Self.borys, note: nil, by: Self.annaCalls) }
        await #expect(throws: Forbidden.self) { try await service.unassign(r[5], note: nil, by: Self.annaCalls) }
        _ = try await service.unassign(r[6], note: nil, by: Self.annaCalls, now: Self.t0 + 6)
        await #expect(throws: AssignmentConflict.self) { try await service.unassign(r[6], note: nil, by: Self.boss) }
        await #expect(throws: ValidationErrors.self) { try await service.assign(r[7], to: Assignee(id: 13, role: .admin, disabled: false), note: nil, by: Self.boss) }
        await #expect(throws: ValidationErrors.self) { try await service.assign(r[7], to: Assignee(id: 14, role: .inspector, disabled: true), note: nil, by: Self.boss) }

        // Closing and hiding end an assignment in their own transaction.
        _ = try await service.transition(r[2], to: "rejected", note: "не реклама", duplicateOf: nil, by: Self.boss, now: Self.t0 + 7)
        _ = try await service.hide(r[3], note: "спам", by: Self.boss, now: Self.t0 + 8)
        holds[r[2]] = nil
        holds[r[3]] = nil
        #expect(try await storage.history(of: r[2], after: 0, limit: 1_000).map(\.action) == [.filed, .assigned, .transition, .unassigned])
        await #expect(throws: AssignmentConflict.self) { try await service.assign(r[2], to: Self.anna, note: nil, by: Self.boss) }
        await #expect(throws: ReportNotFound.self) { try await service.assign(r[3], to: Self.anna, note: nil, by: Self.boss) }

        // Bulk: a closed report among them writes nothing and names it.
        let before = try await storage.lastChange()
        do {
            _ = try await service.assign([r[8], r[9], r[2]], to: Self.anna, note: nil, by: Self.boss)
            Issue.record("a closed report among them")
        } catch let errors as ValidationErrors {
            #expect(errors.issues.map(\.field) == ["report_ids[2]"])
        }
        #expect(try await storage.lastChange() == before)
        let bulk = try await service.assign([r[8], r[9], r[0]], to: Self.anna, note: "обхід", by: Self.boss, now: Self.t0 + 9)
        #expect(bulk.map(\.reportID) == [r[8], r[9], r[0]])
        holds[r[8]] = 11
        holds[r[9]] = 11
        #expect(try await storage.changes(after: before, limit: 10).rows.map(\.action) == [.assigned, .assigned], "r[0] was Anna's already")

        // Anna's list, reordered.
        let anna = [r[0], r[4], r[8], r[9]]
        #expect(try await service.assignments(of: 11).map(\.reportID) == anna)
        await #expect(throws: AssignmentConflict.self) { _ = try await service.reorderAssignments(of: Self.annaCalls, [r[0], r[4], r[8]]) }
        await #expect(throws: AssignmentConflict.self) { _ = try await service.reorderAssignments(of: Self.annaCalls, anna + [r[5]]) }
        _ = try await service.reorderAssignments(of: Self.annaCalls, anna.reversed())
        #expect(try await service.assignments(of: 11).map(\.reportID) == anna.reversed())

        // Reads against the model.
        #expect(try await service.assignedReports() == holds.keys.sorted())
        #expect(try await service.assignees(of: r) == holds)
        let visible = r.filter { $0 != r[3] }
        for (filter, expected) in [
            (AssigneeFilter.account(11), visible.filter { holds[$0] == 11 }), (.account(12), visible.filter { holds[$0] == 12 }),
            (.unassigned, visible.filter { holds[$0] == nil }), (.account(99), []),
        ] {
            let f = ReportFilter(assignee: filter)
            #expect(try await storage.reports(matching: f, after: 0, limit: 100).map(\.id) == expected, "\(filter)")
            #expect(try await service.page(f, after: nil, limit: 100).map(\.id) == expected, "\(filter)")
            #expect(try await service.page(f, after: expected.first, limit: 2).map(\.id) == Array(expected.dropFirst().prefix(2)), "\(filter) paged")
            #expect(try await service.count(f) == expected.count, "\(filter)")
        }

        // Anna's notifications: what others assigned her or took from her, on public reports.
        let notes = try await storage.notifications(of: 11, before: nil, limit: 50, unreadOnly: false).notifications
        let expected: [(Int64, ReportAction)] = [
            (r[0], .assigned), (r[1], .assigned), (r[2], .assigned), (r[4], .assigned),  // the first five, r[3] hidden since
            (r[1], .unassigned),  // given to Borys
            (r[2], .unassigned),  // closed by the supervisor
            (r[8], .assigned), (r[9], .assigned),
        ]
        #expect(notes.reversed().map { [$0.reportID, Int64($0.action == .assigned ? 1 : 0)] } == expected.map { [$0.0, $0.1 == .assigned ? 1 : 0] })
        #expect(try await storage.notifications(of: 11, before: nil, limit: 50, unreadOnly: false).unread == expected.count)

        // A report passed back and forth: its reads give the newest assignments only.
        for step in 0...Assignment.maxOfReport {
            _ = try await service.assign(r[20], to: step % 2 == 0 ? Self.anna : Self.borys, note: "\(step)", by: Self.boss, now: Self.t0 + 10 + Double(step))
        }
        let passes = try await service.assignments(ofReport: r[20])
        #expect(passes.count == Assignment.maxOfReport && passes.first?.isActive == true && passes.first?.note == "\(Assignment.maxOfReport)")
        #expect(passes.dropFirst().allSatisfy { !$0.isActive } && passes.last?.note == "1", "newest first; the first pass left out")
        _ = keep
    }
}
