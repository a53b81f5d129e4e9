import Foundation

/// Who goes to check a report on site: one account at a time per report. An assignment
/// is never deleted: reassigning or giving a report back ends it, and the report's history
/// records both ends.
public struct Assignment: Sendable, Hashable {
    public var id: Int64
    public var reportID: Int64
    /// The assignee.
    public var accountID: Int64
    /// Its place in the assignee's list (lower first; the assignee may reorder).
    public var position: Int64
    public var startedAt: Date
    public var startedBy: Author
    public var note: String?
    /// The history row that records its start.
    public var startedSeq: Int64
    public var ended: End?

    public struct End: Sendable, Hashable {
        public var at: Date
        public var by: Author
        public var note: String?
        /// The history row that records its end.
        public var seq: Int64

        public init(at: Date, by: Author, note: String?, seq: Int64) {
            self.at = at
            self.by = by
            self.note = note
            self.seq = seq
        }
    }

    public init(id: Int64, reportID: Int64, accountID: Int64, position: Int64, startedAt: Date, startedBy: Author, note: String?, startedSeq: Int64, ended: End? = nil) {
        self.id = id
        self.reportID = reportID
        self.accountID = accountID
        self.position = position
        self.startedAt = startedAt
        self.startedBy = startedBy
        self.note = note
        self.startedSeq = startedSeq
        self.ended = ended
    }

    public var isActive: Bool { ended == nil }

    /// The most reports one bulk assignment takes.
    public static let maxBulk = 500
    /// The most of a report's assignments a read gives, the newest.
    public static let maxOfReport = 1_000
    /// The most active assignments one account may hold (its list must fit a phone offline).
    public static let maxPerAccount = 1_000
}

/// Which reports a listing takes by their assignee.
public enum AssigneeFilter: Sendable, Hashable {
    /// Those nobody is assigned to.
    case unassigned
    /// Those assigned to this account.
    case account(Int64)
}

/// An assignment the report's state does not allow (HTTP 409): the report is closed, is
/// someone else's to check, or has nobody assigned.
public struct AssignmentConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// The report at issue; nil when the conflict is the list's (its order, its size).
    public var reportID: Int64?
    public var reason: String
    public init(reportID: Int64?, reason: String) {
        self.reportID = reportID
        self.reason = reason
    }
    public var description: String { reportID.map { "report \($0): \(reason)" } ?? reason }
}
