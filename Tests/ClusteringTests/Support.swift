import Clustering
import FlatFiles
import Foundation
import Generator
import Geometry
import Testing
import TestSupport

// MARK: - Plain-Double reference of the grid

/// The grid, computed the obvious way with Doubles (the spec), independent of `ClusterGrid`.
struct RefGrid {
    let cellSize: Int
    let maxZoom: Int
    let minPoints: Int

    /// log2(256 / C), from a table rather than bit tricks.
    var shift: Int { [32: 3, 64: 2, 128: 1, 256: 0][cellSize]! }

    /// Cells per side at `zoom`: 2^z · 256 / C, as a Double (exact: a power of two).
    func side(_ zoom: Int) -> Double { pow(2.0, Double(zoom)) * 256.0 / Double(cellSize) }

    func cellIndex(_ v: Double, zoom: Int) -> Int {
        let s = side(zoom)
        return min(max(Int((v * s).rounded(.down)), 0), Int(s) - 1)
    }

    func id(x: Int, y: Int, zoom: Int) -> UInt64 {
        let level = zoom + shift
        return (UInt64(1) << UInt64(2 * level)) + naiveMorton(UInt64(x), UInt64(y))
    }

    var clusterGrid: ClusterGrid { try! ClusterGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: minPoints) }
}

/// Bit-by-bit interleave: x on the even bits, y on the odd bits.
func naiveMorton(_ x: UInt64, _ y: UInt64) -> UInt64 {
    var r: UInt64 = 0
    for b in 0..<32 {
        r |= ((x >> UInt64(b)) & 1) << UInt64(2 * b)
        r |= ((y >> UInt64(b)) & 1) << UInt64(2 * b + 1)
    }
    return r
}

func mercX(_ lon: Double) -> Double { (lon + 180) / 360 }
func mercY(_ lat: Double) -> Double { WebMercator.y(latitude: lat) }

/// floor(v · 2^32), clamped to 0...2^32 - 1.
func fixed32(_ v: Double) -> UInt32 {
    let s = (v * 4_294_967_296.0).rounded(.down)
    if s >= 4_294_967_295 { return .max }
    if s <= 0 { return 0 }
    return UInt32(s)
}

/// One report as the reference sees it, with its cell at every zoom precomputed.
struct RefReport {
    let entry: ClusterEntry
    let mx: Double
    let my: Double
    let cx: [Int]
    let cy: [Int]
    /// Z-order key of the 32-bit fixed-point position (the leaves order, before id).
    let zkey: UInt64

    init(_ e: ClusterEntry, grid: RefGrid) {
        entry = e
        let x = mercX(e.coordinate.longitude), y = mercY(e.coordinate.latitude)
        mx = x
        my = y
        cx = (0...grid.maxZoom).map { grid.cellIndex(x, zoom: $0) }
        cy = (0...grid.maxZoom).map { grid.cellIndex(y, zoom: $0) }
        zkey = naiveMorton(UInt64(fixed32(x)), UInt64(fixed32(y)))
    }

    var id: Int64 { entry.id }
}

struct CellXY: Hashable {
    var x: Int
    var y: Int
}

/// The current set of reports, kept the obvious way, plus a stable order of ids (a
/// dictionary's order changes from run to run; random picks must not).
struct Model {
    let grid: RefGrid
    let statusCount: Int
    private(set) var reports: [Int64: RefReport] = [:]
    private(set) var order: [Int64] = []
    private var position: [Int64: Int] = [:]

    init(grid: RefGrid, statusCount: Int, entries: [ClusterEntry] = []) {
        self.grid = grid
        self.statusCount = statusCount
        for e in entries { upsert(e) }
    }

    var list: [RefReport] { order.map { reports[$0]! } }

    mutating func upsert(_ e: ClusterEntry) {
        if reports.updateValue(RefReport(e, grid: grid), forKey: e.id) == nil {
            position[e.id] = order.count
            order.append(e.id)
        }
    }

    @discardableResult
    mutating func remove(_ id: Int64) -> Bool {
        guard reports.removeValue(forKey: id) != nil, let i = position.removeValue(forKey: id) else { return false }
        let last = order.removeLast()
        if i < order.count {
            order[i] = last
            position[last] = i
        }
        return true
    }

    func randomReport(_ rng: inout SplitMix64) -> RefReport? {
        order.isEmpty ? nil : reports[order[rng.int(0..<order.count)]]
    }

    mutating func apply(_ changes: [ClusterIndex.Change]) {
        for c in changes {
            switch c {
            case .upsert(let e): upsert(e)
            case .remove(let id): remove(id)
            }
        }
    }
}

/// A filter in reference form: nil means "any".
struct RefFilter: CustomStringConvertible {
    var statuses: Set<Int>?
    var created: ClosedRange<Int64>?

    static let all = RefFilter()

    var clusterFilter: ClusterFilter {
        if let statuses { return ClusterFilter(statusNumbers: statuses.sorted(), created: created) }
        return ClusterFilter(created: created)
    }

    func matches(_ e: ClusterEntry) -> Bool {
        (statuses?.contains(e.status) ?? true) && (created?.contains(e.createdAt) ?? true)
    }

    var description: String {
        "statuses \(statuses.map { "\($0.sorted())" } ?? "any"), created \(created.map { "\($0)" } ?? "any")"
    }

    static func random(_ rng: inout SplitMix64, model: Model) -> RefFilter {
        var f = RefFilter()
        let kind = rng.int(0..<4)
        if kind == 1 || kind == 3 {
            var s = Set<Int>()
            for st in 0..<model.statusCount where rng.chance(0.5) { s.insert(st) }
            if s.isEmpty { s.insert(rng.int(0..<model.statusCount)) }
            f.statuses = s
        }
        if kind == 2 || kind == 3 {
            if let r1 = model.randomReport(&rng), let r2 = model.randomReport(&rng) {
                // Ends taken from real creation times, so inclusive edges matter.
                let a = r1.entry.createdAt, b = r2.entry.createdAt
                f.created = min(a, b)...max(a, b)
                // Or the whole days from the one to the other's: periods without a cut day.
                let day: Int64 = 86_400_000
                if rng.chance(0.3), let lo = f.created?.lowerBound, let hi = f.created?.upperBound,
                   lo > Int64.min / 2, hi < Int64.max / 2 {
                    let first = lo - ((lo % day) + day) % day
                    f.created = first...(hi - ((hi % day) + day) % day + day - 1)
                }
            } else {
                f.created = 0...10
            }
        }
        return f
    }
}

// MARK: - Reference box selection

func snapEdge(_ v: Double) -> Double {
    let r = v.rounded()
    return abs(v - r) < 1e-7 ? r : v
}

/// The cells of one zoom a box selects, by the spec: cells sharing area with the box, the
/// cells an edge lies in for zero width or height, edges snapped within 1e-7 cell.
struct RefSelection {
    /// Snapped [a, b] intervals in cell units (one, or two across the antimeridian).
    var columnParts: [(Double, Double)]
    var rowPart: (Double, Double)
    let n: Int

    init(box: BoundingBox, zoom: Int, grid: RefGrid) {
        let s = grid.side(zoom)
        n = Int(s)
        if box.west > box.east {
            columnParts = [(snapEdge(mercX(box.west) * s), s), (0, snapEdge(mercX(box.east) * s))]
        } else {
            columnParts = [(snapEdge(mercX(box.west) * s), snapEdge(mercX(box.east) * s))]
        }
        rowPart = (snapEdge(mercY(box.north) * s), snapEdge(mercY(box.south) * s))
    }

    static func selects(_ i: Int, _ part: (Double, Double), n: Int) -> Bool {
        let (a, b) = part
        if a == b { return i == min(max(Int(a.rounded(.down)), 0), n - 1) }
        return Double(i) < b && Double(i + 1) > a
    }

    func selects(_ c: CellXY) -> Bool {
        Self.selects(c.y, rowPart, n: n) && columnParts.contains { Self.selects(c.x, $0, n: n) }
    }

    /// The same selection as closed ranges (closed form of `selects`).
    static func range(_ part: (Double, Double), n: Int) -> ClosedRange<Int> {
        let (a, b) = part
        if a == b {
            let c = min(max(Int(a.rounded(.down)), 0), n - 1)
            return c...c
        }
        return max(0, Int(a.rounded(.down)))...min(n - 1, Int(b.rounded(.up)) - 1)
    }

    var columnRanges: [ClosedRange<Int>] { normalize(columnParts.map { Self.range($0, n: n) }) }
    var rowRange: ClosedRange<Int> { Self.range(rowPart, n: n) }
}

/// Sorted, with overlapping or adjacent ranges merged.
func normalize(_ ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
    var out: [ClosedRange<Int>] = []
    for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
        if let last = out.last, r.lowerBound <= last.upperBound + 1 {
            out[out.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
        } else {
            out.append(r)
        }
    }
    return out
}

// MARK: - Reference answers

struct Expected {
    var clusters: [UInt64: (cell: CellXY, members: [RefReport])] = [:]
    var lone: [Int64: RefReport] = [:]

    var total: Int { clusters.values.reduce(0) { $0 + $1.members.count } + lone.count }
}

/// Groups the matching reports of the selected cells at `zoom` with a dictionary.
func expected(_ model: Model, zoom: Int, filter: RefFilter, selects: (CellXY) -> Bool) -> Expected {
    var groups: [CellXY: [RefReport]] = [:]
    for r in model.reports.values where filter.matches(r.entry) {
        let c = CellXY(x: r.cx[zoom], y: r.cy[zoom])
        if selects(c) { groups[c, default: []].append(r) }
    }
    var out = Expected()
    for (cell, members) in groups {
        if members.count >= model.grid.minPoints {
            out.clusters[model.grid.id(x: cell.x, y: cell.y, zoom: zoom)] = (cell, members)
        } else {
            for m in members { out.lone[m.id] = m }
        }
    }
    return out
}

func refExpansionZoom(_ members: [RefReport], zoom: Int, grid: RefGrid) -> Int {
    let first = members[0]
    var z = zoom + 1
    while z <= grid.maxZoom {
        if members.contains(where: { $0.cx[z] != first.cx[z] || $0.cy[z] != first.cy[z] }) { return z }
        z += 1
    }
    return grid.maxZoom + 1
}

/// Leaves order: Z-order of the fixed-point position, then id.
func leavesOrder(_ members: [RefReport]) -> [Int64] {
    members.sorted { $0.zkey != $1.zkey ? $0.zkey < $1.zkey : $0.id < $1.id }.map(\.id)
}

/// Checks one cluster against its reference members; returns problems.
func clusterProblems(_ c: Cluster, zoom: Int, cell: CellXY, members: [RefReport], model: Model) -> [String] {
    var p: [String] = []
    let g = model.grid
    let tag = "cluster \(c.id) z\(zoom) \(cell.x)/\(cell.y)"
    if c.cell != Cell(zoom: zoom, x: cell.x, y: cell.y) { p.append("\(tag): cell \(c.cell)") }
    if c.count != members.count { p.append("\(tag): count \(c.count), expected \(members.count)") }
    let n = Double(members.count)
    let mx = members.reduce(0) { $0 + $1.mx } / n, my = members.reduce(0) { $0 + $1.my } / n
    if !(abs(c.x - mx) <= 1e-9) || !(abs(c.y - my) <= 1e-9) {
        p.append("\(tag): position \(c.x),\(c.y), expected \(mx),\(my)")
    }
    let ez = refExpansionZoom(members, zoom: zoom, grid: g)
    if c.expansionZoom != ez { p.append("\(tag): expansionZoom \(c.expansionZoom), expected \(ez)") }
    var counts = Array(repeating: 0, count: model.statusCount)
    for m in members { counts[m.entry.status] += 1 }
    if Array(c.statusCounts) != counts { p.append("\(tag): statusCounts \(c.statusCounts), expected \(counts)") }
    p += boundsProblems(c.bounds, members: members, tag: tag)
    return p
}

/// The latitude of the Mercator square's edge, atan(sinh π) (`WebMercator.maxLatitude` is
/// this rounded up to 85.05112878).
let mercatorEdge = atan(sinh(Double.pi)) * 180 / .pi

/// Bounds must contain every member's lon/lat and lie within 1e-6° of the exact box.
/// Positions beyond the Mercator square are clamped onto its edge before indexing, so the
/// exact box is taken over clamped latitudes, and a box with members at the edge (or beyond)
/// may reach the pole on that side.
func boundsProblems(_ b: BoundingBox, members: [RefReport], tag: String) -> [String] {
    var p: [String] = []
    let lons = members.map(\.entry.coordinate.longitude), lats = members.map(\.entry.coordinate.latitude)
    let w = lons.min()!, e = lons.max()!, s = lats.min()!, n = lats.max()!
    if !(b.west <= w && b.east >= e && b.south <= s && b.north >= n) {
        p.append("\(tag): bounds \(b) do not contain the members' box \(w),\(s),\(e),\(n)")
    }
    if b.west > b.east || b.south > b.north { p.append("\(tag): bounds \(b) inverted") }
    let tol = 1e-6
    func clamp(_ lat: Double) -> Double { min(max(lat, -mercatorEdge), mercatorEdge) }
    if !(b.west >= w - tol && b.east <= e + tol) { p.append("\(tag): bounds \(b) too wide for \(w)...\(e)") }
    if !(b.north <= clamp(n) + tol || (n >= mercatorEdge - tol && b.north <= 90)) { p.append("\(tag): north \(b.north) too far from \(n)") }
    if !(b.south >= clamp(s) - tol || (s <= -mercatorEdge + tol && b.south >= -90)) { p.append("\(tag): south \(b.south) too far from \(s)") }
    return p
}

func memberProblems(_ m: ClusterMember, _ r: RefReport, tag: String) -> [String] {
    var p: [String] = []
    if m.id != r.id || m.status != r.entry.status || m.createdAt != r.entry.createdAt {
        p.append("\(tag): member \(m.id) status \(m.status) created \(m.createdAt), expected \(r.id) \(r.entry.status) \(r.entry.createdAt)")
    }
    if !(abs(m.x - r.mx) <= 1e-9) || !(abs(m.y - r.my) <= 1e-9) {
        p.append("\(tag): member \(m.id) at \(m.x),\(m.y), expected \(r.mx),\(r.my)")
    }
    return p
}

/// Compares a query's items with the reference, as sets keyed by cluster id and report id.
func compareItems(_ items: [ClusterItem], _ exp: Expected, zoom: Int, model: Model, tag: String) -> [String] {
    var p: [String] = []
    var seenClusters = Set<UInt64>(), seenReports = Set<Int64>()
    for item in items {
        switch item {
        case .cluster(let c):
            guard seenClusters.insert(c.id.rawValue).inserted else {
                p.append("\(tag): cluster \(c.id) twice")
                continue
            }
            guard let e = exp.clusters[c.id.rawValue] else {
                p.append("\(tag): unexpected cluster \(c.id) \(c.cell) count \(c.count)")
                continue
            }
            if c.count < model.grid.minPoints { p.append("\(tag): cluster \(c.id) below minPoints") }
            p += clusterProblems(c, zoom: zoom, cell: e.cell, members: e.members, model: model).map { "\(tag): \($0)" }
        case .report(let m):
            guard seenReports.insert(m.id).inserted else {
                p.append("\(tag): report \(m.id) twice")
                continue
            }
            guard let r = exp.lone[m.id] else {
                p.append("\(tag): unexpected lone report \(m.id)")
                continue
            }
            p += memberProblems(m, r, tag: tag)
        }
    }
    for (id, e) in exp.clusters where !seenClusters.contains(id) {
        p.append("\(tag): missing cluster \(id) cell \(e.cell.x)/\(e.cell.y) count \(e.members.count)")
    }
    for id in exp.lone.keys where !seenReports.contains(id) { p.append("\(tag): missing lone report \(id)") }
    return p
}

/// `clusters(in:zoom:filter:)` against the brute-force answer.
func checkQuery(_ index: ClusterIndex, _ model: Model, box: BoundingBox, zoom: Int, filter: RefFilter) -> [String] {
    let tag = "box \(box) z\(zoom) \(filter)"
    let items: [ClusterItem]
    do {
        items = try index.clusters(in: box, zoom: zoom, filter: filter.clusterFilter)
    } catch {
        return ["\(tag): threw \(error)"]
    }
    let sel = RefSelection(box: box, zoom: zoom, grid: model.grid)
    let exp = expected(model, zoom: zoom, filter: filter, selects: sel.selects)
    return compareItems(items, exp, zoom: zoom, model: model, tag: tag)
}

/// Records at most a few problems, so a broken build does not print thousands of lines.
func expectNoProblems(_ problems: [String], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(
        problems.isEmpty,
        "\(what): \(problems.count) problem(s)\n\(problems.prefix(12).joined(separator: "\n"))",
        sourceLocation: sourceLocation)
}

// MARK: - Data

let specialLatitudes: [Double] = [90, -90, 85.05112878, -85.05112878, 85.05, -85.05, 0, WebMercator.latitude(y: 0.25)]
let specialLongitudes: [Double] = [180, -180, 0, 179.99999999, -179.99999999]

func randomCreated(_ rng: inout SplitMix64) -> Int64 {
    if rng.chance(0.01) { return rng.pick([Int64.min, Int64.max, 0, -1]) }
    // Coarse times so that many reports share one (midnight of one of 500 days, across
    // several of the index's 64-day periods), and half of them within their day.
    let midnight = 1_600_041_600_000 + Int64(rng.int(0..<500)) * 86_400_000
    return rng.chance(0.5) ? midnight : midnight + Int64(rng.int(0..<86_400_000))
}

/// Uniform over the world: half uniform in degrees (so some beyond the Mercator square),
/// half uniform in Mercator.
func uniformEntries(_ n: Int, _ rng: inout SplitMix64, statusCount: Int, firstID: Int64 = 0) -> [ClusterEntry] {
    (0..<n).map { i in
        let lon = rng.uniform(-180, 180)
        let lat = rng.chance(0.5) ? rng.uniform(-90, 90) : WebMercator.latitude(y: rng.unit())
        return ClusterEntry(
            id: firstID + Int64(i), coordinate: Coordinate(longitude: lon, latitude: min(max(lat, -90), 90)),
            status: rng.int(0..<statusCount), createdAt: randomCreated(&rng))
    }
}

/// A coordinate on a cell boundary of some level (both axes, or one).
func boundaryCoordinate(_ rng: inout SplitMix64, maxLevel: Int) -> Coordinate {
    let d = rng.int(0...maxLevel)
    let n = Double(1 << d)
    let kx = Double(rng.int(0...(1 << d))), ky = Double(rng.int(0...(1 << d)))
    var lon = WebMercator.longitude(x: kx / n), lat = WebMercator.latitude(y: ky / n)
    if rng.chance(0.3) { lon = rng.uniform(-180, 180) }
    if rng.chance(0.3) { lat = rng.uniform(-80, 80) }
    return Coordinate(longitude: min(max(lon, -180), 180), latitude: min(max(lat, -90), 90))
}

func specialCoordinate(_ rng: inout SplitMix64) -> Coordinate {
    switch rng.int(0..<3) {
    case 0: Coordinate(longitude: rng.pick(specialLongitudes), latitude: rng.uniform(-90, 90))
    case 1: Coordinate(longitude: rng.uniform(-180, 180), latitude: rng.pick(specialLatitudes))
    default: Coordinate(longitude: rng.pick(specialLongitudes), latitude: rng.pick(specialLatitudes))
    }
}

let clusterCentres: [Coordinate] = [
    Coordinate(longitude: 30.5234, latitude: 50.4501),
    Coordinate(longitude: 179.9999, latitude: -17.7),
    Coordinate(longitude: -179.99995, latitude: 64.2),
    Coordinate(longitude: 0, latitude: 0),
    Coordinate(longitude: 12.3, latitude: 85.0511),
    Coordinate(longitude: -73.9857, latitude: 40.7484),
]

/// Clustered data: gaussian clouds of several widths around a few centres, many exact
/// duplicates, points on the antimeridian, the poles, the Mercator edge and cell boundaries.
func clusteredEntries(_ n: Int, _ rng: inout SplitMix64, statusCount: Int, maxLevel: Int, firstID: Int64 = 0) -> [ClusterEntry] {
    var out: [ClusterEntry] = []
    out.reserveCapacity(n)
    for i in 0..<n {
        let c: Coordinate
        let roll = rng.unit()
        if roll < 0.2, let prior = out.last(where: { _ in rng.chance(0.2) }) ?? out.first {
            c = prior.coordinate
        } else if roll < 0.3 {
            c = specialCoordinate(&rng)
        } else if roll < 0.4 {
            c = boundaryCoordinate(&rng, maxLevel: maxLevel)
        } else if roll < 0.5 {
            c = Coordinate(longitude: rng.uniform(-180, 180), latitude: rng.uniform(-90, 90))
        } else {
            let centre = rng.pick(clusterCentres)
            let spread = rng.pick([1.0, 1e-2, 1e-4, 1e-6, 1e-8])
            let (dx, dy) = rng.normalPair()
            let lon = centre.longitude + dx * spread, lat = centre.latitude + dy * spread
            c = Coordinate(longitude: min(max(lon, -180), 180), latitude: min(max(lat, -90), 90))
        }
        out.append(ClusterEntry(id: firstID + Int64(i), coordinate: c, status: rng.int(0..<statusCount), createdAt: randomCreated(&rng)))
    }
    return out
}

// MARK: - Boxes

/// The tile at `z` holding a position (plain Double math).
func tileOf(_ c: Coordinate, z: Int) -> TileID {
    let n = Double(1 << z)
    let x = min(Int((mercX(c.longitude) * n).rounded(.down)), (1 << z) - 1)
    let y = min(Int((mercY(c.latitude) * n).rounded(.down)), (1 << z) - 1)
    return try! TileID(z: z, x: x, y: y)
}

func clampedBox(west: Double, south: Double, east: Double, north: Double) -> BoundingBox {
    func lon(_ v: Double) -> Double { v > 180 ? v - 360 : v < -180 ? v + 360 : v }
    let s = min(max(south, -90), 90), n = min(max(north, -90), 90)
    return try! BoundingBox(west: lon(west), south: min(s, n), east: lon(east), north: max(s, n))
}

/// Boxes of every kind for one zoom: fixed antimeridian and world boxes, random ones,
/// tile-aligned ones around reports, tiny and zero-size ones at reports.
func boxes(_ rng: inout SplitMix64, zoom: Int, model: Model, random: Int) -> [BoundingBox] {
    var out: [BoundingBox] = [
        .world,
        try! BoundingBox(west: 170, south: -60, east: -170, north: 70),
        try! BoundingBox(west: 180, south: -90, east: -180, north: 90),
    ]
    for _ in 0..<random {
        let report = model.randomReport(&rng)?.entry.coordinate
        switch rng.int(0..<6) {
        case 0:  // random, often across the antimeridian
            let west = rng.uniform(-180, 180), width = rng.uniform(0, 360) * pow(rng.unit(), 3)
            let a = rng.uniform(-90, 90), b = rng.uniform(-90, 90)
            out.append(clampedBox(west: west, south: a, east: west + width, north: b))
        case 1 where report != nil:  // tile-aligned around a report, at a zoom near this one
            let z = min(max(zoom + rng.int(-2...2), 0), TileID.maxZoom)
            out.append(tileOf(report!, z: z).bounds)
        case 2 where report != nil:  // tiny around a report
            let r = report!
            let eps = rng.pick([1e-2, 1e-4, 1e-6, 1e-8])
            out.append(clampedBox(west: r.longitude - eps, south: r.latitude - eps, east: r.longitude + eps, north: r.latitude + eps))
        case 3 where report != nil:  // zero size at a report
            let r = report!
            out.append(try! BoundingBox(west: r.longitude, south: r.latitude, east: r.longitude, north: r.latitude))
        case 4:  // edges on, or within a hair of, cell boundaries of this zoom
            let s = model.grid.side(zoom)
            func edge(_ k: Int) -> Double { (Double(k) + rng.pick([0, 0, 5e-8, -5e-8, 2e-7, -2e-7, 0.5])) / s }
            let x0 = rng.int(0..<Int(s)), y0 = rng.int(0..<Int(s))
            let x1 = min(x0 + rng.int(0...2), Int(s)), y1 = min(y0 + rng.int(0...2), Int(s))
            let west = WebMercator.longitude(x: min(max(edge(x0), 0), 1)), east = WebMercator.longitude(x: min(max(edge(x1), 0), 1))
            let north = WebMercator.latitude(y: min(max(edge(y0), 0), 1)), south = WebMercator.latitude(y: min(max(edge(y1), 0), 1))
            out.append(clampedBox(west: west, south: south, east: rng.chance(0.2) ? west : east, north: north))
        case 5 where report == nil || rng.chance(0.3):  // zero width or height line
            let lon = rng.uniform(-180, 180), lat = rng.uniform(-90, 90)
            out.append(rng.chance(0.5)
                ? try! BoundingBox(west: lon, south: -90, east: lon, north: 90)
                : try! BoundingBox(west: -180, south: lat, east: 180, north: lat))
        default:  // a viewport
            let centre = report ?? Coordinate(longitude: 0, latitude: 0)
            out.append(WebMercator.viewport(center: centre, zoom: Double(zoom) + rng.uniform(-1, 1), width: 1024, height: 768))
        }
    }
    return out
}

/// The index saved to a file and read back, as a server's restart reads it.
func savedAndLoaded(_ index: ClusterIndex) throws -> ClusterIndex {
    let folder = try TemporaryDirectory()
    let path = folder.path("index.flat")
    let file = try FlatFileWriter(path: path)
    let levels = (0..<ClusterIndex.periodLevels).map { "periods \($0)" }
    try index.save(to: file, sections: ("clusters", levels))
    try file.finish(properties: [:])
    let reader = try FlatFileReader(path: path)
    // The levels read before the table, as a start may read them on another thread.
    let periods = try levels.indices.reversed().map { level in
        try reader.read(section: levels[level]) { try ClusterIndex.readPeriodLevel(&$0, level: level, grid: index.grid, statusCount: index.statusCount) }
    }.reversed()
    let whole = try reader.read(section: "clusters") { try ClusterIndex.readWhole(&$0, grid: index.grid, statusCount: index.statusCount) }
    return try ClusterIndex(grid: index.grid, statusCount: index.statusCount, whole: whole, periods: Array(periods))
}
