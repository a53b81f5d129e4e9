import Foundation
import Geometry

/// A status change of a report someone filed, as their notification.
public struct StatusNotification: Sendable, Hashable {
    /// The history row's number: the notification's id, and the cursor of read marks.
    public var seq: Int64
    public var reportID: Int64
    public var at: Date
    public var fromStatus: String?
    public var toStatus: String?
    public var note: String?
    public var read: Bool

    public init(seq: Int64, reportID: Int64, at: Date, fromStatus: String? = nil, toStatus: String? = nil, note: String? = nil, read: Bool) {
        self.seq = seq
        self.reportID = reportID
        self.at = at
        self.fromStatus = fromStatus
        self.toStatus = toStatus
        self.note = note
        self.read = read
    }
}
