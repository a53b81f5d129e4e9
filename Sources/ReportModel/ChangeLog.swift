import Foundation
import Geometry

/// One row of `report_change`: a write, numbered in commit order.
///
/// **The change log's contract**, on which the feed's cursors, the following of other
/// processes, the change stream and the webhook outbox rest: a reader that has seen change
/// N never later finds a change numbered below N. So "the changes after N" is a complete
/// cursor: every change committed after a read that ended at N is numbered above N. Here
/// SQLite gives it: one writer at a time, the number taken inside the write transaction,
/// and a reader sees a snapshot of whole commits. A store where writers commit
/// concurrently must make it hold by other means. `ChangeLogTests` proves it with several
/// writers and followers on one file.
public struct ChangeRow: Sendable, Hashable {
    public var seq: Int64
    public var action: ReportAction
    public var reportID: Int64
    public var at: Date
    /// The history row the write made (what staff see of it): a `report_history` row, or
    /// for a phone's change a `phone_history` row.
    public var historySeq: Int64?
    /// The number a phone's change is about.
    public var phone: String?

    public init(seq: Int64, action: ReportAction, reportID: Int64, at: Date, historySeq: Int64? = nil, phone: String? = nil) {
        self.seq = seq
        self.action = action
        self.reportID = reportID
        self.at = at
        self.historySeq = historySeq
        self.phone = phone
    }
}

/// A page of change rows and where the sequence stands, read together.
public struct ChangeRows: Sendable {
    /// The rows after the asked-for sequence number, in order.
    public var rows: [ChangeRow]
    /// The highest sequence number handed out so far (0 before the first write).
    public var lastSeq: Int64
    /// Changes up to this sequence number have been forgotten (0: none).
    public var prunedThrough: Int64

    public init(rows: [ChangeRow], lastSeq: Int64, prunedThrough: Int64) {
        self.rows = rows
        self.lastSeq = lastSeq
        self.prunedThrough = prunedThrough
    }
}
