import Foundation
import Geometry
import ReportModel
import StorePorts

/// A phone's change and the reports it moved, as they are now.
public struct PhoneChange: Sendable {
    public var entry: PhoneHistoryEntry
    public var moved: [Report]
}

/// Verifying and blocking numbers. A block moves, in its own transaction, every report in
/// ``blockableStatus`` whose numbers are now all blocked to ``phoneBlockedStatus``, each
/// step a history row naming the block; an unblock moves back those of them nobody has
/// moved since.
extension ReportService {
    /// The status of a report whose numbers a block may stop.
    public static let blockableStatus = "confirmed"
    /// The status a block moves such a report to.
    public static let phoneBlockedStatus = "phone_blocked"

    /// Records what a supervisor found out about a number. A blocked number is unblocked
    /// first (``PhoneStatusConflict``).
    public func verify(_ number: String, outcome: PhoneStatus, note: String?, by caller: Caller, now: Date = Date()) async throws -> PhoneChange {
        guard PhoneStatus.outcomes.contains(outcome) else {
            throw ValidationErrors([ValidationError(field: "outcome", "must be one of \(PhoneStatus.outcomes.map(\.rawValue).joined(separator: ", "))")])
        }
        let note = try checkPhoneWrite(by: caller, note: note)
        return try await commits.perform { [self] t in
            let status = try Self.known(number, t)
            guard status != .blocked else { throw PhoneStatusConflict(number: number, status: status, wanted: .verified) }
            let entry = try t.setPhoneStatus(number, to: outcome, action: .verified, note: note, moved: 0, author: caller.author, now: now)
            try endCampaignIfNotViolator(number, outcome: outcome, t, now: now)
            return (PhoneChange(entry: entry, moved: []), IndexEffect())
        }
    }

    /// Blocks a number verified as the advertiser's, and moves the reports it stops.
    public func block(_ number: String, note: String?, by caller: Caller, now: Date = Date()) async throws -> PhoneChange {
        let note = try checkPhoneWrite(by: caller, note: note)
        return try await commits.perform { [self] t in
            let status = try Self.known(number, t)
            guard status == .violator else { throw PhoneStatusConflict(number: number, status: status, wanted: .blocked) }
            let candidates = try t.reports(carrying: number, status: Self.blockableStatus)
            let blocked = try t.blockedNumbers(among: Set(candidates.flatMap(\.phones))).union([number])
            let stopped = candidates.filter { $0.phones.allSatisfy(blocked.contains) }
            let entry = try t.setPhoneStatus(number, to: .blocked, action: .blocked, note: note, moved: stopped.count, author: caller.author, now: now)
            let moved = try move(stopped, to: Self.phoneBlockedStatus, because: entry, t)
            try t.rememberBlockMoves(moved.map { ($0.report.id, $0.historySeq) })
            return (PhoneChange(entry: entry, moved: moved.map(\.report)), effect(moved: zip(stopped, moved.map(\.report))))
        }
    }

    /// Unblocks a number (it stays verified as the advertiser's), and moves back to
    /// ``blockableStatus`` the reports its blocks moved that are still where they left them.
    public func unblock(_ number: String, note: String?, by caller: Caller, now: Date = Date()) async throws -> PhoneChange {
        let note = try checkPhoneWrite(by: caller, note: note)
        return try await commits.perform { [self] t in
            let status = try Self.known(number, t)
            guard status == .blocked else { throw PhoneStatusConflict(number: number, status: status, wanted: .unblocked) }
            let candidates = try t.reports(carrying: number, status: Self.phoneBlockedStatus)
            let untouched = try t.movedByBlock(candidates.map(\.id))
            let back = candidates.filter { untouched.contains($0.id) }
            let entry = try t.setPhoneStatus(number, to: .violator, action: .unblocked, note: note, moved: back.count, author: caller.author, now: now)
            let moved = try move(back, to: Self.blockableStatus, because: entry, t)
            try t.forgetBlockMoves(back.map(\.id))
            return (PhoneChange(entry: entry, moved: moved.map(\.report)), effect(moved: zip(back, moved.map(\.report))))
        }
    }

    /// A number's record as `caller` may see it (the history's authors and notes are
    /// staff's), or nil when no report carries it and it has no record.
    public func phoneRecord(_ number: String, for caller: Caller?) async throws -> PhoneRecord? {
        guard var record = try await read({ try await $0.phoneRecord(number) }) else { return nil }
        if caller?.isStaff != true {
            record.history = record.history.map { entry in
                var entry = entry
                (entry.author, entry.note) = (.system, nil)
                return entry
            }
        }
        return record
    }

    /// The statuses of these numbers.
    public func phoneStatuses(_ numbers: [String]) async throws -> [String: PhoneStatus] {
        try await read { try await $0.phoneStatuses(numbers) }
    }

    /// A page of the public reports that carry a number, in id order after the cursor, and
    /// how many there are.
    public func reports(carrying number: String, after: Int64, limit: Int) async throws -> (reports: [Report], matched: Int) {
        try await read { try await $0.reports(carrying: number, after: after, limit: limit) }
    }

    // MARK: Rules

    /// Only staff change a phone's status; the note is checked as a transition's.
    private func checkPhoneWrite(by caller: Caller, note: String?) throws -> String? {
        guard caller.isStaff else { throw Forbidden(reason: "only supervisors verify, block and unblock phone numbers") }
        return try Self.note(note, required: false)
    }

    /// The number's status; a number no report carries and nobody recorded is ``PhoneNotFound``.
    private static func known(_ number: String, _ t: any ReportTransaction) throws -> PhoneStatus {
        guard try t.knows(phone: number) else { throw PhoneNotFound(number: number) }
        return try t.phoneStatus(number)
    }

    /// Moves reports as the consequence of a phone's change, each step's note naming it.
    /// The supervisor's own note stays with the phone's history: a step's note reaches the
    /// report's filer as a notification.
    private func move(_ reports: [Report], to status: String, because change: PhoneHistoryEntry, _ t: any ReportTransaction) throws -> [(report: Report, historySeq: Int64)] {
        let why = "phone +\(change.number) \(change.action.rawValue) (phone change \(change.seq))"
        return try reports.map { report in
            let (after, seq) = try t.moveForPhone(report, to: status, note: why, author: change.author, now: change.at)
            try endAssignmentIfDone(report.id, open: reference.isOpen(status), why: "the report is \(status)", t, author: change.author, now: change.at)
            return (after, seq)
        }
    }

    /// What moving reports does to the index.
    private func effect(moved pairs: some Sequence<(Report, Report)>) -> IndexEffect {
        pairs.reduce(into: IndexEffect()) { total, pair in total += effect(pair.0, pair.1) }
    }
}

/// A number no report carries and nobody recorded (HTTP 404).
public struct PhoneNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    public var number: String
    public init(number: String) { self.number = number }
    public var description: String { "no report carries +\(number)" }
}

/// A phone change its status does not allow (HTTP 409): blocking one not verified as the
/// advertiser's, unblocking one not blocked, verifying a blocked one.
public struct PhoneStatusConflict: Error, Sendable, Hashable, CustomStringConvertible {
    public var number: String
    public var status: PhoneStatus
    public var wanted: PhoneAction

    public var description: String {
        switch wanted {
        case .blocked where status == .blocked: "+\(number) is already blocked"
        case .blocked: "+\(number) is \(status.rawValue): only a number verified as violator can be blocked; verify it first (POST /v1/phones/\(number)/verification)"
        case .unblocked: "+\(number) is \(status.rawValue), not blocked"
        case .verified: "+\(number) is blocked: unblock it before verifying it again"
        case .autodialStarted: "+\(number) is \(status.rawValue): autodial calls only a number verified as violator; verify it first (POST /v1/phones/\(number)/verification)"
        case .autodialStopped: "+\(number) has no autodial campaign running"
        }
    }
}
