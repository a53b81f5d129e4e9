import Foundation
import Geometry
import ReportModel
import StorePorts

/// Who asks for a write or a read that depends on who asks: an account with its role, or
/// an API key.
public struct Caller: Sendable, Hashable {
    public var author: Author
    public var role: Role

    public init(accountID: Int64?, apiKeyID: Int64? = nil, role: Role) {
        author = Author(accountID: accountID, apiKeyID: apiKeyID)
        self.role = role
    }

    /// Whether the caller may see who filed reports and every history detail.
    public var isStaff: Bool { role.includes(.supervisor) }

    /// The scope of the caller's idempotency keys.
    var scope: String { author.apiKeyID.map { "k:\($0)" } ?? "a:\(author.accountID ?? 0)" }
}

/// A report filed, with the open reports it may duplicate.
public struct Filing: Sendable {
    public var report: Report
    public var possibleDuplicates: [DuplicateHint]
}

extension ReportDraft {
    /// The draft as filing stores it: the id, status and times are the server's to give.
    var filed: ReportDraft {
        var d = self
        (d.id, d.status, d.createdAt, d.updatedAt) = (nil, nil, nil, nil)
        return d
    }
}

extension Report {
    /// The report's version, for `ETag` and `If-Match`: its `updated_at` in milliseconds,
    /// which every write moves forward.
    public var version: Int64 { Int64((updatedAt.timeIntervalSince1970 * 1000).rounded()) }
}

extension ReportService {
    /// Files a checked draft for `caller`: a new id, status new, times now.
    public func file(_ draft: ReportDraft, by caller: Caller, now: Date = Date()) async throws -> Filing {
        let draft = draft.filed
        let hints = try await duplicateHints(near: draft.coordinate, phones: draft.phones)
        return try await commits.perform { [self] t in
            let report = try t.insert(draft, filer: caller.author.accountID, author: caller.author, now: now)
            return (Filing(report: report, possibleDuplicates: hints), effect(added: [report]))
        }
    }

    /// Edits report `id`: `patch` makes the new draft of the current report (a JSON merge
    /// patch), checked against the reference data. The filer may edit while the report is
    /// new, supervisors at any time; the status never changes this way. With `ifMatch`, a
    /// report whose version is another is ``PreconditionFailed``. `issues` are rules the
    /// request broke by itself, answered with those of the patched report.
    public func edit(
        _ id: Int64, by caller: Caller, ifMatch: Int64?, issues: [ValidationError] = [], now: Date = Date(),
        patch: @escaping @Sendable (Report) throws -> ReportDraft
    ) async throws -> Report {
        try await commits.perform { [self] t in
            let current = try self.current(id, t, ifMatch: ifMatch, for: caller)
            if !caller.isStaff {
                guard try t.filer(of: id) == caller.author.accountID, caller.author.accountID != nil else {
                    throw Forbidden(reason: "only the filer or a supervisor may edit report \(id)")
                }
                guard current.status == reference.initialStatus else {
                    throw Forbidden(reason: "the filer may edit a report only while it is \(reference.initialStatus); it is \(current.status)")
                }
            }
            var draft = try patch(current)
            draft.id = id
            draft.status = nil
            var (checked, problems) = reference.check(draft)
            if problems.isEmpty, let outside = intake.check(checked.coordinate, field: "longitude") { problems.append(outside) }
            let flagged = Set(issues.map(\.field))
            problems = issues + problems.filter { !flagged.contains($0.field) }
            guard problems.isEmpty else { throw ValidationErrors(problems) }
            let (before, after) = try t.edit(id, to: checked, author: caller.author, now: now)
            try endCampaignsIfPostersGone(before.phones, t, now: now)
            return (after, effect(before, after))
        }
    }

    /// Moves report `id` to status `target` by the transition table: a step the current
    /// status does not allow is ``TransitionNotAllowed``; a caller the step does not name,
    /// ``Forbidden``; a missing note or a bad `duplicateOf`, ``ValidationErrors``.
    public func transition(
        _ id: Int64, to target: String, note: String?, duplicateOf: Int64?, by caller: Caller, ifMatch: Int64? = nil, now: Date = Date()
    ) async throws -> Report {
        let reference = reference
        guard reference.statuses.contains(where: { $0.code == target }) else {
            throw ValidationErrors([ValidationError(field: "to", "unknown status \"\(target.prefix(40))\"; known: \(statusCodes.joined(separator: ", "))")])
        }
        let note = try Self.note(note, required: false)
        return try await commits.perform { [self] t in
            let current = try self.current(id, t, ifMatch: ifMatch, for: caller)
            guard let step = reference.transition(from: current.status, to: target) else {
                throw TransitionNotAllowed(id: id, from: current.status, to: target, allowed: reference.transitions(from: current.status).map(\.to))
            }
            try check(step, of: id, by: caller, t)
            var problems: [ValidationError] = []
            if step.noteRequired, note == nil { problems.append(ValidationError(field: "note", "is required to make a report \(target)")) }
            if let problem = try duplicateProblem(duplicateOf, of: id, required: step.duplicateOfRequired, t) { problems.append(problem) }
            guard problems.isEmpty else { throw ValidationErrors(problems) }
            let text = [note, duplicateOf.map { "duplicate of #\($0)" }].compactMap { $0 }.joined(separator: "\n")
            let (before, after) = try t.setStatus(id, to: target, note: text.isEmpty ? nil : text, author: caller.author, now: now)
            try endCampaignsIfPostersGone(after.phones, t, now: now)
            try endAssignmentIfDone(id, open: reference.isOpen(target), why: "the report is \(target)", t, author: caller.author, now: now)
            return (after, effect(before, after))
        }
    }

    /// Takes report `id` out of every public answer (clusters, tiles, search, exports,
    /// reports); supervisors still see it, and nothing is deleted.
    public func hide(_ id: Int64, note: String?, by caller: Caller, now: Date = Date()) async throws -> HiddenReport {
        guard caller.isStaff else { throw Forbidden(reason: "only supervisors hide reports") }
        let note = try Self.note(note, required: true)!
        return try await commits.perform { [self] t in
            guard try t.hidden(id) == nil else { throw ReportHidden(id: id, hidden: true) }
            // Its assignment ends first: the hiding is the last the public hears of it.
            try endAssignmentIfDone(id, open: false, why: "the report is hidden", t, author: caller.author, now: now)
            let before = try t.hide(id, note: note, author: caller.author, now: now)
            try endCampaignsIfPostersGone(before.phones, t, now: now)
            return (try t.hidden(id)!, effect(removed: before))
        }
    }

    /// Brings a hidden report back.
    public func unhide(_ id: Int64, note: String?, by caller: Caller, now: Date = Date()) async throws -> Report {
        guard caller.isStaff else { throw Forbidden(reason: "only supervisors unhide reports") }
        let note = try Self.note(note, required: false)
        return try await commits.perform { [self] t in
            if try t.report(id) != nil { throw ReportHidden(id: id, hidden: false) }
            let report = try t.unhide(id, note: note, author: caller.author, now: now)
            return (report, effect(added: [report]))
        }
    }

    // MARK: Reads that depend on the caller

    /// Report `id` as `caller` may see it: a hidden one only for staff.
    public func report(id: Int64, for caller: Caller?) async throws -> (report: Report, hidden: HiddenReport?)? {
        let staff = caller?.isStaff == true
        return try await read { storage in
            if let report = try await storage.report(id: id) { return (report, nil) }
            guard staff, let hidden = try await storage.hidden(id: id) else { return nil }
            return (hidden.report, hidden)
        }
    }

    /// The account that filed report `id`, for staff only.
    public func filer(of id: Int64, for caller: Caller?) async throws -> Int64? {
        guard caller?.isStaff == true else { return nil }
        return try await read { try await $0.filer(of: id) }
    }

    /// A page of a report's history, at most `limit` rows after the one numbered `after`:
    /// everything for staff; for others only the status steps and their times, without who
    /// made them or their notes. Nil for a report the caller cannot see.
    public func history(of id: Int64, for caller: Caller?, after: Int64 = 0, limit: Int = HistoryPage.maxLimit) async throws -> HistoryPage? {
        precondition(limit > 0, "a page holds at least one entry")
        guard try await report(id: id, for: caller) != nil else { return nil }
        let entries = try await read { try await $0.history(of: id, after: after, limit: limit) }
        // Read on from the last row read, even when the public sees none of this page.
        let next = entries.count == limit ? entries.last?.seq : nil
        guard caller?.isStaff != true else { return HistoryPage(entries: entries, next: next) }
        let steps = entries.filter { $0.action == .filed || $0.action == .transition }.map { entry in
            HistoryEntry(
                seq: entry.seq, reportID: entry.reportID, at: entry.at, author: .system, action: entry.action,
                fromStatus: entry.fromStatus, toStatus: entry.toStatus, note: nil, changes: [])
        }
        return HistoryPage(entries: steps, next: next)
    }

    /// A page of the caller's own reports, newest first, before the cursor.
    public func reports(filedBy caller: Caller, before: Int64?, limit: Int) async throws -> [Report] {
        guard let account = caller.author.accountID else { return [] }
        return try await read { try await $0.reports(filedBy: account, before: before, limit: limit) }
    }

    // MARK: Rules

    /// The current report, checked against the version the caller last saw. A hidden
    /// report is said to be hidden to staff only; to others it does not exist.
    func current(_ id: Int64, _ t: any ReportTransaction, ifMatch: Int64?, for caller: Caller) throws -> Report {
        guard let current = try t.report(id) else {
            if caller.isStaff, try t.hidden(id) != nil { throw ReportHidden(id: id, hidden: true) }
            throw ReportNotFound(id: id)
        }
        if let ifMatch, ifMatch != current.version { throw PreconditionFailed(id: id) }
        return current
    }

    /// Whether `caller` is one the step names: a role (or one above it), or the filer.
    private func check(_ step: StatusTransition, of id: Int64, by caller: Caller, _ t: any ReportTransaction) throws {
        for actor in step.by {
            if actor == StatusTransition.filer {
                if let account = caller.author.accountID, try t.filer(of: id) == account { return }
            } else if let role = Role(rawValue: actor), caller.role.includes(role) {
                return
            }
        }
        let who = step.by.map { $0 == StatusTransition.filer ? "the filer" : "a \($0)" }.joined(separator: " or ")
        throw Forbidden(reason: "only \(who) may make a report \(step.to)")
    }

    /// What is wrong with `duplicateOf` for this step, if anything.
    private func duplicateProblem(_ other: Int64?, of id: Int64, required: Bool, _ t: any ReportTransaction) throws -> ValidationError? {
        guard let other else { return required ? ValidationError(field: "duplicate_of", "is required: the report this one repeats") : nil }
        guard required else { return ValidationError(field: "duplicate_of", "is given only when a report becomes a duplicate") }
        guard other != id else { return ValidationError(field: "duplicate_of", "a report cannot duplicate itself") }
        guard let original = try t.report(other) else { return ValidationError(field: "duplicate_of", "report \(other) does not exist") }
        guard original.status != "duplicate" else {
            return ValidationError(field: "duplicate_of", "report \(other) is itself a duplicate; name the report it repeats")
        }
        return nil
    }

    /// A trimmed note of at most 2,000 characters, line breaks and tabs its only control
    /// characters (nil when empty and not required).
    static func note(_ text: String?, required: Bool) throws(ValidationErrors) -> String? {
        let note: String?
        do { note = try ReferenceData.optionalText(text, "note", max: ReportLimits.comment, lines: true) } catch { throw ValidationErrors([error]) }
        if note == nil && required { throw ValidationErrors([ValidationError(field: "note", "is required")]) }
        return note
    }
}

/// A page of a report's history: its entries, oldest first, and the number to read on
/// after (nil on the last page). Every edit and step adds a row, so a report's history
/// has no bound of its own.
public struct HistoryPage: Sendable {
    public static let maxLimit = 1_000

    public var entries: [HistoryEntry]
    public var next: Int64?
}

/// A transition the report's current status does not allow (HTTP 409).
public struct TransitionNotAllowed: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: Int64
    public var from: String
    public var to: String
    public var allowed: [String]
    public var description: String {
        "report \(id) is \(from) and cannot become \(to)" + (allowed.isEmpty ? "; no step leaves \(from)" : "; it can become \(allowed.joined(separator: ", "))")
    }
}

/// A write conditional on a version that is no longer current (HTTP 412).
public struct PreconditionFailed: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: Int64
    public var description: String { "report \(id) has changed since that ETag; read it again and reapply the change" }
}

/// A write to a hidden report, or a hide or unhide that is already done (HTTP 409).
public struct ReportHidden: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: Int64
    public var hidden: Bool
    public var description: String { hidden ? "report \(id) is hidden; unhide it first" : "report \(id) is not hidden" }
}
