import Geometry

/// Which reports a listing or an export takes: an area, statuses and creation times.
public struct ReportFilter: Sendable, Hashable {
    /// The area (edges included; may cross the antimeridian); nil: everywhere.
    public var box: BoundingBox?
    /// Status codes; nil: any status.
    public var statuses: [String]?
    /// Creation times in ms since 1970, ends included; nil: any time.
    public var created: ClosedRange<Int64>?

    public init(box: BoundingBox? = nil, statuses: [String]? = nil, created: ClosedRange<Int64>? = nil) {
        self.box = box
        self.statuses = statuses
        self.created = created
    }

    /// Whether only the area narrows it (the box paths of `BoxQueries.swift` answer those).
    public var isBoxOnly: Bool { statuses == nil && created == nil }
}
