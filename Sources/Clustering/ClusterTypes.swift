import Geometry

/// What the index keeps of a report: enough to place, filter and count it.
public struct ClusterEntry: Sendable, Hashable {
    /// The public report number (0 to 2^32 - 1).
    public var id: Int64
    public var coordinate: Coordinate
    /// The report's status as a number: its position in the reference list of statuses.
    public var status: Int
    /// Creation time in milliseconds since 1970.
    public var createdAt: Int64

    public init(id: Int64, coordinate: Coordinate, status: Int, createdAt: Int64) {
        self.id = id
        self.coordinate = coordinate
        self.status = status
        self.createdAt = createdAt
    }
}

/// Which reports a query counts: a set of statuses and a range of creation times. Filters
/// are answered from the index as built; nothing is rebuilt for them.
public struct ClusterFilter: Sendable, Hashable {
    /// Bit `s` set: status number `s` is counted. All bits set: every status.
    public var statuses: UInt64
    /// Creation times (ms since 1970, both ends included); nil: any time.
    public var created: ClosedRange<Int64>?

    public init(statuses: UInt64 = .max, created: ClosedRange<Int64>? = nil) {
        self.statuses = statuses
        self.created = created
    }

    /// The filter of a list of status numbers (numbers outside 0...63 match nothing).
    public init(statusNumbers: some Sequence<Int>, created: ClosedRange<Int64>? = nil) {
        self.init(statuses: statusNumbers.reduce(0) { (0..<64).contains($1) ? $0 | (1 << UInt64($1)) : $0 }, created: created)
    }

    /// Every report.
    public static let all = ClusterFilter()

    /// Whether the filter counts this report.
    public func matches(_ entry: ClusterEntry) -> Bool {
        (0..<64).contains(entry.status) && matches(status: UInt8(entry.status), createdAt: entry.createdAt)
    }

    @inline(__always)
    func matches(status: UInt8, createdAt: Int64) -> Bool {
        statuses & (1 << UInt64(status)) != 0 && (created?.contains(createdAt) ?? true)
    }
}

/// A group of reports sharing one cell.
public struct Cluster: Sendable, Hashable {
    public var id: ClusterID
    public var cell: Cell
    /// How many (matching) reports it holds.
    public var count: Int
    /// The mean of its members' normalized Web Mercator positions (to within 2⁻³²).
    public var x: Double
    public var y: Double
    /// The lowest zoom at which its members fall into more than one cell;
    /// `maxZoom + 1` when they never do.
    public var expansionZoom: Int
    /// Its members by status number (one entry per status).
    public var statusCounts: StatusCounts
    /// Its members' box in 32-bit fixed-point Mercator (``bounds`` in degrees).
    var box: (minX: UInt32, minY: UInt32, maxX: UInt32, maxY: UInt32)

    /// The mean position in degrees.
    public var coordinate: Coordinate {
        Coordinate(longitude: WebMercator.longitude(x: x), latitude: WebMercator.latitude(y: y))
    }

    /// The smallest box holding its members (rounded outward by under 1 cm; reaching the
    /// pole when members lie at the Mercator square's north or south edge or beyond it,
    /// where positions are clamped onto the edge).
    public var bounds: BoundingBox {
        let scale = FixedPoint.scale
        let north = box.minY == 0 ? 90 : WebMercator.latitude(y: Double(box.minY) / scale)
        let south = box.maxY == .max ? -90 : WebMercator.latitude(y: (Double(box.maxY) + 1) / scale)
        return BoundingBox(
            unchecked: WebMercator.longitude(x: Double(box.minX) / scale), south,
            WebMercator.longitude(x: (Double(box.maxX) + 1) / scale), north)
    }

    public static func == (a: Cluster, b: Cluster) -> Bool {
        a.id == b.id && a.cell == b.cell && a.count == b.count && a.x == b.x && a.y == b.y && a.expansionZoom == b.expansionZoom
            && a.statusCounts == b.statusCounts && a.box == b.box
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(count)
        hasher.combine(x)
        hasher.combine(y)
    }
}

extension Cluster {
    /// A count as a map label, as supercluster writes `point_count_abbreviated`: `999`,
    /// `1.2k` (one decimal from 1,000), `34k` (whole thousands from 10,000), `1.2M`, `34M`.
    public static func abbreviated(_ count: Int) -> String {
        func short(_ value: Int, _ unit: Int, _ suffix: String) -> String {
            if value >= 10 * unit { return "\((value + unit / 2) / unit)\(suffix)" }
            let tenths = (value + unit / 20) / (unit / 10)
            return tenths % 10 == 0 ? "\(tenths / 10)\(suffix)" : "\(tenths / 10).\(tenths % 10)\(suffix)"
        }
        if count >= 999_500 { return short(count, 1_000_000, "M") }
        if count >= 1_000 { return short(count, 1_000, "k") }
        return String(count)
    }
}

/// Counts by status number, kept inline (no allocation per cluster).
public struct StatusCounts: RandomAccessCollection, Sendable, Hashable, ExpressibleByArrayLiteral, CustomStringConvertible {
    private var storage = SIMD16<UInt32>()
    public let endIndex: Int

    init(_ counts: SIMD16<UInt32>, count: Int) {
        storage = counts
        endIndex = count
    }

    public init(arrayLiteral elements: Int...) {
        endIndex = elements.count
        for (i, n) in elements.enumerated() { storage[i] = UInt32(n) }
    }

    public var startIndex: Int { 0 }
    public subscript(position: Int) -> Int { Int(storage[position]) }

    public static func == (a: StatusCounts, b: StatusCounts) -> Bool { a.elementsEqual(b) }
    public func hash(into hasher: inout Hasher) {
        for n in self { hasher.combine(n) }
    }
    public var description: String { Array(self).description }
}

/// One report as the index knows it.
public struct ClusterMember: Sendable, Hashable {
    public var id: Int64
    /// Its normalized Web Mercator position (to within 2⁻³²; the store has the exact one).
    public var x: Double
    public var y: Double
    public var status: Int
    public var createdAt: Int64
}

/// What a query shows in a cell: a cluster, or a report alone.
public enum ClusterItem: Sendable, Hashable {
    case cluster(Cluster)
    case report(ClusterMember)
}

/// A page of the reports inside a cluster, in the index's order (by position along the
/// Z-order curve, then id).
public struct LeavesPage: Sendable, Hashable {
    /// How many matching reports the cluster holds.
    public var total: Int
    public var members: [ClusterMember]
}

/// A cluster id naming a cell without matching reports.
public struct ClusterNotFound: Error, Sendable, Hashable, CustomStringConvertible {
    public var id: ClusterID
    public var cell: Cell
    public var description: String { "cluster \(id) (cell \(cell)) holds no matching reports" }
}

/// A number that is no cluster id of the grid: no cluster could ever have it.
public struct NoSuchCluster: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
}
