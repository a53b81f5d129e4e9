import Accounts
import Foundation
import Geometry
import Hummingbird
import Interchange
import ReportModel
import ReportService

/// Who goes to check a report (`AssignmentEndpoints.swift`). The rules are the service's;
/// here the assignee's account is looked up, and the answers are made.
struct AssignmentRoutes {
    let service: ReportService
    let accounts: AccountService
    let views: ReportViews

    /// The most accounts `/v1/assignees` lists.
    static let maxAssignees = 5_000

    func register(on router: Router<AppRequestContext>) {
        router.handle(.assign) { request, _, context, identity in
            let id = try ReportRoutes.reportID(context)
            let body = try await AssignmentRequest.read(request)
            try service.checkMayAssign(to: body.userID, by: identity.caller)
            let (assignment, created) = try await service.assign(id, to: try await assignee(body.userID), note: body.note, by: identity.caller)
            // The assignee's own already: nothing was written, nothing created.
            return try Responses.private(try await view(assignment), status: created ? .created : .ok)
        }
        router.handle(.unassign) { _, _, context, identity in
            let id = try ReportRoutes.reportID(context)
            return try Responses.private(try await view(try await service.unassign(id, note: nil, by: identity.caller)))
        }
        router.handle(.reportAssignments) { _, _, context, _ in
            let id = try ReportRoutes.reportID(context)
            let assignments = try await service.assignments(ofReport: id)
            return try Responses.private(Listed(assignments: try await views(assignments)))
        }
        router.handle(.bulkAssign) { request, _, _, identity in
            let body = try await BulkAssignment.read(request)
            let assignments = try await service.assign(body.reportIDs, to: try await assignee(body.userID), note: body.note, by: identity.caller)
            return try Responses.private(Listed(assignments: try await views(assignments)))
        }
        router.handle(.myAssignments) { _, _, _, identity in
            try await list(of: identity.caller)
        }
        router.handle(.reorderAssignments) { request, _, _, identity in
            let body = try await AssignmentOrder.read(request)
            _ = try await service.reorderAssignments(of: identity.caller, body.order)
            return try await list(of: identity.caller)
        }
        router.handle(.assignees) { _, _, _, _ in
            try Responses.private(Assignees(assignees: try await assignees()))
        }
    }

    /// The account `user_id` names, as the service checks assignees; a 422 when none.
    private func assignee(_ id: Int64) async throws -> Assignee {
        guard let account = try await accounts.account(id: id) else { throw ValidationErrors([ValidationError(field: "user_id", "no account \(id)")]) }
        return Assignee(id: account.id, role: account.role, disabled: account.disabled)
    }

    /// The caller's list: each report with its photos and its tag for `If-Match`, and the
    /// change number to follow the feed from (read first: every later change is in it).
    private func list(of caller: Caller) async throws -> Response {
        let lastSeq = try await service.lastChange()
        let assignments = try await service.assignments(of: caller.author.accountID ?? 0)
        let listed = try await service.reports(ids: assignments.map(\.reportID))
        let reports = Dictionary(listed.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let photos = try await service.photos(of: listed)
        var out = Array(#"{"assignments":["#.utf8)
        for (position, assignment) in assignments.enumerated() {
            guard let report = reports[assignment.reportID] else { continue }
            let (_, feature) = try views.rendered(report, for: nil, photos: photos[report.id] ?? [])
            if out.last != UInt8(ascii: "[") { out.append(UInt8(ascii: ",")) }
            out += Array(#"{"position":\#(position + 1),"assigned_at":"\#(RFC3339.string(from: assignment.startedAt))","note":"#.utf8)
            out += try Responses.jsonBytes(assignment.note)
            out += Array(#","etag":"#.utf8) + (try Responses.jsonBytes(ReportViews.tag(report, staff: false)))
            out += Array(#","report":"#.utf8) + feature.dropLast(feature.last == 0x0A ? 1 : 0) + [UInt8(ascii: "}")]
        }
        out += Array(#"],"last_seq":\#(lastSeq)}"#.utf8) + [0x0A]
        var response = Responses.body(out, type: "application/json")
        response.headers[.cacheControl] = "private, no-store"
        response.headers[.lastSeq] = "\(lastSeq)"
        return response
    }

    /// The enabled inspectors and supervisors, with how many reports each has to check;
    /// then the accounts that hold reports but can no longer check them (disabled, or made
    /// administrators), for a supervisor to reassign those.
    private func assignees() async throws -> [Assignees.Item] {
        let held = try await service.assignees(of: try await service.assignedReports()).values.reduce(into: [Int64: Int]()) { $0[$1, default: 0] += 1 }
        var items: [Assignees.Item] = []
        for role in [Role.inspector, .supervisor] {
            var after: Int64 = 0
            while items.count < Self.maxAssignees {
                let page = try await accounts.accounts(role: role, after: after, limit: 500)
                items += page.filter { !$0.disabled }.map { Assignees.Item($0, assigned: held[$0.id] ?? 0) }
                guard page.count == 500, let last = page.last else { break }
                after = last.id
            }
        }
        let listed = Set(items.map(\.id))
        for (id, count) in held.sorted(by: { $0.key < $1.key }) where !listed.contains(id) {
            if let account = try await accounts.account(id: id) { items.append(Assignees.Item(account, assigned: count)) }
        }
        return Array(items.prefix(Self.maxAssignees))
    }

    private func view(_ assignment: Assignment) async throws -> AssignmentView {
        AssignmentView(assignment, name: try await accounts.account(id: assignment.accountID)?.name)
    }

    private func views(_ assignments: [Assignment]) async throws -> [AssignmentView] {
        var names: [Int64: String] = [:]
        for id in Set(assignments.map(\.accountID)) { names[id] = try await accounts.account(id: id)?.name }
        return assignments.map { AssignmentView($0, name: names[$0.accountID]) }
    }

    struct Listed: Encodable { var assignments: [AssignmentView] }

    struct Assignees: Encodable {
        struct Item: Encodable {
            var id: Int64
            var name: String
            var role: String
            var assigned: Int
            /// Whether reports may be assigned to it now (an enabled inspector or supervisor).
            var canCheck: Bool

            init(_ account: Account, assigned: Int) {
                (id, name, role, self.assigned) = (account.id, account.name, account.role.rawValue, assigned)
                canCheck = !account.disabled && (account.role == .inspector || account.role == .supervisor)
            }

            enum CodingKeys: String, CodingKey { case id, name, role, assigned, canCheck = "can_check" }
        }
        var assignees: [Item]
    }
}

/// An assignment as staff, and its assignee, see it.
struct AssignmentView: Encodable {
    struct User: Encodable {
        var id: Int64
        var name: String?
    }
    var id: Int64
    var reportID: Int64
    var user: User
    var position: Int64
    var active: Bool
    var assignedAt: String
    var assignedBy: CampaignView.By
    var note: String?
    var endedAt: String?
    var endedBy: CampaignView.By?
    var endNote: String?

    init(_ a: Assignment, name: String?) {
        (id, reportID, user, position, active) = (a.id, a.reportID, User(id: a.accountID, name: name), a.position, a.isActive)
        (assignedAt, assignedBy, note) = (RFC3339.string(from: a.startedAt), CampaignView.By(a.startedBy), a.note)
        (endedAt, endedBy, endNote) = (a.ended.map { RFC3339.string(from: $0.at) }, a.ended.map { CampaignView.By($0.by) }, a.ended?.note)
    }

    enum CodingKeys: String, CodingKey {
        case id, reportID = "report_id", user, position, active, assignedAt = "assigned_at", assignedBy = "assigned_by", note
        case endedAt = "ended_at", endedBy = "ended_by", endNote = "end_note"
    }
}
