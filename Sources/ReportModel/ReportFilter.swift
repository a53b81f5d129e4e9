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

    public init(box: BoundingBox? = nil, statuses: [String]? = nil, created: ClosedRange<Int64>? = nil, objectTypes: [String]? = nil) {
        self.box = box
        self.statuses = statuses
        self.created = created
        self.objectTypes = objectTypes
    }

    /// Whether only the area narrows it (the box paths of `BoxQueries.swift` answer those).
    public var isBoxOnly: Bool { statuses == nil && created == nil && objectTypes == nil }
}
