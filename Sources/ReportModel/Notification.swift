import Foundation
import Geometry

/// A status change of a report someone filed, or an assignment of a report to them (or
/// its end), as their notification.
public struct StatusNotification: Sendable, Hashable {
    /// The history row's number: the notification's id, and the cursor of read marks.
    public var seq: Int64
    public var reportID: Int64
    /// `transition`, `assigned` or `unassigned`.
    public var action: ReportAction
    public var at: Date
    public var fromStatus: String?
    public var toStatus: String?
    public var note: String?
    public var read: Bool

    public init(seq: Int64, reportID: Int64, action: ReportAction = .transition, at: Date, fromStatus: String? = nil, toStatus: String? = nil, note: String? = nil, read: Bool) {
        self.seq = seq
        self.reportID = reportID
        self.action = action
        self.at = at
        self.fromStatus = fromStatus
        self.toStatus = toStatus
        self.note = note
        self.read = read
    }
}
