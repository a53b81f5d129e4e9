import Foundation
import Geometry

/// Who made a write, as the history keeps it: an account, an API key, or neither (the
/// system: an import, the command line).
public struct Author: Sendable, Hashable {
    public var accountID: Int64?
    public var apiKeyID: Int64?

    public init(accountID: Int64? = nil, apiKeyID: Int64? = nil) {
        self.accountID = accountID
        self.apiKeyID = apiKeyID
    }

    public static let system = Author()
}

/// What a write did to a report, in its history and in the change sequence.
public enum ReportAction: String, Sendable, Hashable, Codable, CaseIterable {
    case filed, edited, transition, hidden, unhidden, deleted
    /// A bulk import into the database: one change for the whole data set (report id 0),
    /// never a history row.
    case imported
    /// A photo added to or removed from a report (a change row; the photo's row says who).
    case photoAdded = "photo_added", photoRemoved = "photo_removed"
    /// A phone number's status changed (a change row naming the number, report id 0; its
    /// history row is in `phone_history`).
    case phoneVerified = "phone_verified", phoneBlocked = "phone_blocked", phoneUnblocked = "phone_unblocked"
    /// Someone was assigned to check a report on site, or the assignment ended (the
    /// history row's `changes` name the assignee before and after, as `assignee`).
    case assigned, unassigned
    /// An autodial campaign started or ended on a number (a phone's change).
    case phoneAutodialStarted = "phone_autodial_started", phoneAutodialStopped = "phone_autodial_stopped"

    /// Whether the change is a phone's rather than a report's.
    public var isPhone: Bool {
        switch self {
        case .phoneVerified, .phoneBlocked, .phoneUnblocked, .phoneAutodialStarted, .phoneAutodialStopped: true
        default: false
        }
    }
}

/// One field's value before and after an edit, as text (nil: none).
public struct FieldChange: Sendable, Hashable, Codable {
    public var field: String
    public var before: String?
    public var after: String?

    public init(field: String, before: String?, after: String?) {
        self.field = field
        self.before = before
        self.after = after
    }

    /// Both values always, null for none (a client reads `before` and `after` on every change).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(field, forKey: .field)
        try container.encode(before, forKey: .before)
        try container.encode(after, forKey: .after)
    }

    private enum CodingKeys: String, CodingKey { case field, before, after }
}

extension FieldChange {
    /// The fields a draft changes in a report, as the interchange vocabulary names them.
    public static func between(_ report: Report, _ draft: ReportDraft) -> [FieldChange] {
        func text(_ c: Coordinate) -> String { "\(c.longitude),\(c.latitude)" }
        let pairs: [(String, String?, String?)] = [
            ("position", text(report.coordinate), text(draft.coordinate)),
            ("address", report.address, draft.address), ("city", report.city, draft.city),
            ("district", report.district, draft.district), ("object_type", report.objectType, draft.objectType),
            ("balance_holder", report.balanceHolder, draft.balanceHolder), ("violator", report.violator, draft.violator),
            ("phones", report.phones.joined(separator: ", "), draft.phones.joined(separator: ", ")),
            ("comment", report.comment, draft.comment),
        ]
        return pairs.filter { $0.1 != $0.2 }.map { FieldChange(field: $0.0, before: $0.1, after: $0.2) }
    }
}

/// What one write recorded of a report.
public struct HistoryEntry: Sendable, Hashable {
    public var seq: Int64
    public var reportID: Int64
    public var at: Date
    public var author: Author
    public var action: ReportAction
    public var fromStatus: String?
    public var toStatus: String?
    public var note: String?
    public var changes: [FieldChange]

    public init(
        seq: Int64, reportID: Int64, at: Date, author: Author, action: ReportAction,
        fromStatus: String?, toStatus: String?, note: String?, changes: [FieldChange]
    ) {
        self.seq = seq
        self.reportID = reportID
        self.at = at
        self.author = author
        self.action = action
        self.fromStatus = fromStatus
        self.toStatus = toStatus
        self.note = note
        self.changes = changes
    }
}

/// A report no public answer shows, and why it was hidden.
public struct HiddenReport: Sendable, Hashable {
    public var report: Report
    public var note: String
    public var hiddenAt: Date

    public init(report: Report, note: String, hiddenAt: Date) {
        self.report = report
        self.note = note
        self.hiddenAt = hiddenAt
    }
}
