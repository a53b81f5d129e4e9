import Foundation
import Geometry

/// One numbered change: a write of a report or a phone, numbered in commit order (the
/// change log's contract is written on `StorePorts.ChangeLog`).
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
