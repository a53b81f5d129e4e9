import Foundation
import Geometry
import ReportModel
import StorePorts

/// An account a report may be assigned to, as the caller looked it up.
public struct Assignee: Sendable, Hashable {
    public var id: Int64
    public var role: Role
    public var disabled: Bool

    public init(id: Int64, role: Role, disabled: Bool) {
        self.id = id
        self.role = role
        self.disabled = disabled
    }

    /// Only people who check reports on site: enabled inspectors and supervisors.
    func check() throws(ValidationErrors) {
        if disabled { throw ValidationErrors([ValidationError(field: "user_id", "account \(id) is disabled")]) }
        guard role == .inspector || role == .supervisor else {
            throw ValidationErrors([ValidationError(field: "user_id", "account \(id) is an \(role)'s; reports are assigned to inspectors and supervisors")])
        }
    }
}

/// Assignments: supervisors assign any open report to an inspector or a supervisor (and
/// reassign it); an inspector takes an unassigned one for themselves and gives back their
/// own. Each start and end is the report's history row and change, in the transaction of
/// its cause; a report that closes, is hidden or is deleted ends its assignment with it.
extension ReportService {
    /// Throws unless `caller` may assign reports to account `userID` at all: supervisors
    /// to anyone, an inspector only to themselves. Checked before the account is looked
    /// up, so that an inspector learns nothing of others' accounts from the refusal.
    public func checkMayAssign(to userID: Int64, by caller: Caller) throws {
        guard caller.isStaff || caller.author.accountID == userID else { throw Forbidden(reason: "an inspector assigns reports only to themselves") }
    }

    /// Assigns report `id` to `assignee`, and whether it did: the active assignment, not
    /// created, when it is theirs already (nothing written).
    public func assign(_ id: Int64, to assignee: Assignee, note: String?, by caller: Caller, now: Date = Date()) async throws -> (assignment: Assignment, created: Bool) {
        try assignee.check()
        let note = try Self.note(note, required: false)
        return try await commits.perform { [self] t in
            let active = try checkAssignment(id, to: assignee, by: caller, t)
            if let active, active.accountID == assignee.id { return ((active, false), IndexEffect()) }
            try checkRoom(for: assignee, adding: 1, t)
            return ((try t.assign(id, to: assignee.id, replacing: active, note: note, author: caller.author, now: now), true), IndexEffect())
        }
    }

    /// Assigns every report of `ids` to `assignee`, or none: each report's broken rule is
    /// named (`report_ids[i]`). Reports theirs already stay as they are.
    public func assign(_ ids: [Int64], to assignee: Assignee, note: String?, by caller: Caller, now: Date = Date()) async throws -> [Assignment] {
        guard caller.isStaff else { throw Forbidden(reason: "only supervisors assign reports in bulk") }
        try assignee.check()
        let note = try Self.note(note, required: false)
        return try await commits.perform { [self] t in
            var actives: [Assignment?] = [], problems: [ValidationError] = []
            for (i, id) in ids.enumerated() {
                do { actives.append(try checkAssignment(id, to: assignee, by: caller, t)) } catch let refused as ReportNotFound {
                    problems.append(ValidationError(field: "report_ids[\(i)]", "report \(refused.id) does not exist or is hidden"))
                    actives.append(nil)
                } catch let refused as AssignmentConflict {
                    problems.append(ValidationError(field: "report_ids[\(i)]", refused.description))
                    actives.append(nil)
                }
            }
            guard problems.isEmpty else { throw ValidationErrors(problems) }
            try checkRoom(for: assignee, adding: zip(ids, actives).filter { $0.1?.accountID != assignee.id }.count, t)
            let assignments = try zip(ids, actives).map { id, active in
                if let active, active.accountID == assignee.id { return active }
                return try t.assign(id, to: assignee.id, replacing: active, note: note, author: caller.author, now: now)
            }
            return (assignments, IndexEffect())
        }
    }

    /// Ends report `id`'s assignment: supervisors any, an inspector their own.
    public func unassign(_ id: Int64, note: String?, by caller: Caller, now: Date = Date()) async throws -> Assignment {
        let note = try Self.note(note, required: false)
        return try await commits.perform { t in
            guard try t.report(id) != nil else { throw ReportNotFound(id: id) }
            guard let active = try t.activeAssignment(of: id) else { throw AssignmentConflict(reportID: id, reason: "nobody is assigned to it") }
            guard caller.isStaff || active.accountID == caller.author.accountID else {
                throw Forbidden(reason: "an inspector gives back only the reports assigned to them")
            }
            return (try t.endAssignment(active, note: note, author: caller.author, now: now), IndexEffect())
        }
    }

    /// Puts the caller's list in this order: `reportIDs` must be exactly the reports of
    /// their active assignments (a list changed since the app read it is a 409).
    public func reorderAssignments(of caller: Caller, _ reportIDs: [Int64]) async throws -> [Assignment] {
        guard let account = caller.author.accountID else { throw Forbidden(reason: "only a person's account has a list of checks") }
        return try await commits.perform { t in
            let current = try t.assignments(of: account)
            let byReport = Dictionary(current.map { ($0.reportID, $0) }, uniquingKeysWith: { a, _ in a })
            guard reportIDs.count == current.count, Set(reportIDs) == Set(byReport.keys) else {
                let missing = Set(byReport.keys).subtracting(reportIDs).sorted(), foreign = Set(reportIDs).subtracting(byReport.keys).sorted()
                let parts = [missing.isEmpty ? nil : "leaves out \(missing.prefix(10).map(String.init).joined(separator: ", "))",
                             foreign.isEmpty ? nil : "lists \(foreign.prefix(10).map(String.init).joined(separator: ", ")), not assigned to you",
                             Set(reportIDs).count == reportIDs.count ? nil : "lists a report twice"].compactMap { $0 }
                throw AssignmentConflict(reportID: nil, reason: "the order must list each of your \(current.count) assigned reports once: it " + parts.joined(separator: "; ") + "; read /v1/me/assignments again")
            }
            let ordered = reportIDs.map { byReport[$0]! }
            try t.reorderAssignments(ordered.map(\.id))
            return (ordered.enumerated().map { i, a in var a = a; a.position = Int64(i + 1); return a }, IndexEffect())
        }
    }

    /// An account's active assignments of public reports, in its order.
    public func assignments(of account: Int64) async throws -> [Assignment] { try await read { try await $0.assignments(of: account) } }

    /// A report's assignments, newest first (the newest ``Assignment/maxOfReport``).
    public func assignments(ofReport id: Int64) async throws -> [Assignment] { try await read { try await $0.assignments(ofReport: id) } }

    /// The active assignee of each of these reports that has one.
    public func assignees(of ids: [Int64]) async throws -> [Int64: Int64] { try await read { try await $0.assignees(of: ids) } }

    /// The reports someone is assigned to now, ascending.
    public func assignedReports() async throws -> [Int64] { try await read { try await $0.assignedReports() } }

    /// Ends, in the caller's transaction, report `id`'s assignment when the report has
    /// closed or left the public answers.
    func endAssignmentIfDone(_ id: Int64, open: Bool, why: String, _ t: any ReportTransaction, author: Author, now: Date) throws {
        guard !open, let active = try t.activeAssignment(of: id) else { return }
        _ = try t.endAssignment(active, note: why, author: author, now: now)
    }

    // MARK: Rules

    /// Throws unless `caller` may assign report `id` to `assignee` now; returns the active
    /// assignment, if any.
    private func checkAssignment(_ id: Int64, to assignee: Assignee, by caller: Caller, _ t: any ReportTransaction) throws -> Assignment? {
        guard let report = try t.report(id) else { throw ReportNotFound(id: id) }
        guard reference.isOpen(report.status) else { throw AssignmentConflict(reportID: id, reason: "it is closed (\(report.status)): only open reports are checked") }
        let active = try t.activeAssignment(of: id)
        guard !caller.isStaff else { return active }
        guard caller.author.accountID == assignee.id else { throw Forbidden(reason: "an inspector assigns reports only to themselves") }
        if let active, active.accountID != assignee.id { throw AssignmentConflict(reportID: id, reason: "someone else is assigned to it") }
        return active
    }

    private func checkRoom(for assignee: Assignee, adding count: Int, _ t: any ReportTransaction) throws {
        let held = try t.assignments(of: assignee.id).count
        guard held + count <= Assignment.maxPerAccount else {
            throw AssignmentConflict(reportID: nil, reason: "account \(assignee.id) would hold \(held + count) reports to check; at most \(Assignment.maxPerAccount)")
        }
    }
}
