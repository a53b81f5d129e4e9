/// What a change did, as the feed names it.
public enum ChangeType: String, Sendable, CaseIterable {
    case reportCreated = "report.created"
    case reportUpdated = "report.updated"
    case reportStatusChanged = "report.status_changed"
    case reportHidden = "report.hidden"
    case reportUnhidden = "report.unhidden"
    case reportDeleted = "report.deleted"
    case reportAssigned = "report.assigned"
    case reportUnassigned = "report.unassigned"
    /// A bulk import changed the data set as a whole (`id` 0): start again from a snapshot.
    case datasetChanged = "dataset.changed"
    case photoAdded = "photo.added"
    case photoRemoved = "photo.removed"
    case phoneVerified = "phone.verified"
    case phoneBlocked = "phone.blocked"
    case phoneUnblocked = "phone.unblocked"
    case phoneAutodialStarted = "phone.autodial_started"
    case phoneAutodialStopped = "phone.autodial_stopped"

    /// The write of the changes table this type names.
    public var action: ReportAction {
        switch self {
        case .reportCreated: .filed
        case .reportUpdated: .edited
        case .reportStatusChanged: .transition
        case .reportHidden: .hidden
        case .reportUnhidden: .unhidden
        case .reportDeleted: .deleted
        case .reportAssigned: .assigned
        case .reportUnassigned: .unassigned
        case .datasetChanged: .imported
        case .photoAdded: .photoAdded
        case .photoRemoved: .photoRemoved
        case .phoneVerified: .phoneVerified
        case .phoneBlocked: .phoneBlocked
        case .phoneUnblocked: .phoneUnblocked
        case .phoneAutodialStarted: .phoneAutodialStarted
        case .phoneAutodialStopped: .phoneAutodialStopped
        }
    }

    public init(_ action: ReportAction) {
        self = Self.allCases.first { $0.action == action }!
    }
}
