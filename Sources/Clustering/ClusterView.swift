/// A cluster index as its readers see it: its queries, none of its changes. The report
/// service hands these out (to the tile renderer), so that only the service, which keeps
/// the index in step with the store, can change it.
public struct ClusterView: Sendable {
    private let index: ClusterIndex

    public init(_ index: ClusterIndex) { self.index = index }

    public var grid: ClusterGrid { index.grid }
    /// How many reports the index holds.
    public var count: Int { index.count }

    /// The clusters and lone reports of the cells in `block`.
    public func clusters(in block: CellBlock, filter: ClusterFilter = .all) -> [ClusterItem] {
        index.clusters(in: block, filter: filter)
    }

    /// A page of a cluster's matching reports (see ``ClusterIndex/leaves(of:limit:offset:filter:)``).
    public func leaves(of id: ClusterID, limit: Int, offset: Int, filter: ClusterFilter = .all) throws -> LeavesPage {
        try index.leaves(of: id, limit: limit, offset: offset, filter: filter)
    }
}
