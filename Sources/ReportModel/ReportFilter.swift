import Geometry

/// Which reports a listing or an export takes: an area, statuses, object types and
/// creation times.
public struct ReportFilter: Sendable, Hashable {
    /// The area (edges included; may cross the antimeridian); nil: everywhere.
    public var box: BoundingBox?
    /// Status codes; nil: any status.
    public var statuses: [String]?
    /// Creation times in ms since 1970, ends included; nil: any time.
    public var created: ClosedRange<Int64>?
    /// Object type codes; nil: any type.
    public var objectTypes: [String]?
    /// By the active assignee; nil: whoever.
    public var assignee: AssigneeFilter?

    public init(box: BoundingBox? = nil, statuses: [String]? = nil, created: ClosedRange<Int64>? = nil, objectTypes: [String]? = nil, assignee: AssigneeFilter? = nil) {
        self.box = box
        self.statuses = statuses
        self.created = created
        self.objectTypes = objectTypes
        self.assignee = assignee
    }

    /// Whether only the area narrows it (the box paths of `BoxQueries.swift` answer those).
    public var isBoxOnly: Bool { statuses == nil && created == nil && objectTypes == nil && assignee == nil }
}
