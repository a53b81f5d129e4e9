import Geometry

/// The grid that clusters reports: square cells of `cellSize` pixels on 256-px Web
/// Mercator tiles, at every zoom from 0 to `maxZoom`.
///
/// At zoom `z` a position's cell is `(floor(x · 2^z · 256 / C), floor(y · 2^z · 256 / C))`
/// for normalized Mercator `x`, `y` (see ``WebMercator``). Cells are aligned with tiles, so
/// each cell lies inside one tile and a cell at zoom `z` is the union of four cells at
/// `z + 1`. Positions on the east edge (`x = 1`, longitude 180°) or the south edge of the
/// Mercator square fall into the last column or row.
///
/// ```swift
/// let grid = try ClusterGrid(cellSize: 64, maxZoom: 20, minPoints: 2)
/// grid.cell(of: Coordinate(longitude: 30.52, latitude: 50.45), zoom: 10)   // 10/2395/1381
/// ```
public struct ClusterGrid: Sendable, Hashable {
    /// The allowed cell sizes, in pixels.
    public static let cellSizes = [32, 64, 128, 256]
    /// The deepest level of cells a grid may have (cluster ids must stay below 2^53, the
    /// largest integer a JavaScript client reads exactly).
    static let depthLimit = 26

    /// The side of a cell in pixels: 32, 64 (default), 128 or 256.
    public let cellSize: Int
    /// The highest zoom that is clustered (default 20); above it reports are shown alone.
    public let maxZoom: Int
    /// A cell with fewer matching reports than this (default 2) yields the reports themselves.
    public let minPoints: Int
    /// log2(256 / cellSize): a tile at zoom z is 2^cellShift cells wide, so the cells of
    /// zoom z are the quadtree level `z + cellShift`.
    let cellShift: Int

    public init(cellSize: Int = 64, maxZoom: Int = 20, minPoints: Int = 2) throws(ValidationError) {
        guard Self.cellSizes.contains(cellSize) else {
            throw ValidationError(field: "cell_size", "must be 32, 64, 128 or 256 pixels, got \(cellSize)")
        }
        let shift = 8 - cellSize.trailingZeroBitCount
        let zoomLimit = Self.depthLimit - shift
        guard (0...zoomLimit).contains(maxZoom) else {
            throw ValidationError(field: "max_zoom", "must be from 0 to \(zoomLimit) with \(cellSize)-px cells, got \(maxZoom)")
        }
        guard (1...1_000_000).contains(minPoints) else {
            throw ValidationError(field: "min_points", "must be from 1 to 1000000, got \(minPoints)")
        }
        self.cellSize = cellSize
        self.maxZoom = maxZoom
        self.minPoints = minPoints
        cellShift = shift
    }

    /// 64-px cells, zooms 0–20, clusters of 2 or more.
    public static let standard = try! ClusterGrid()

    /// The quadtree level of the finest cells (those of `maxZoom`).
    var maxDepth: Int { maxZoom + cellShift }

    /// The quadtree level of the cells of `zoom`.
    func depth(zoom: Int) -> Int { zoom + cellShift }

    /// How many cells the world is wide and high at `zoom`.
    public func cellsPerSide(zoom: Int) -> Int { 1 << depth(zoom: zoom) }

    /// Checks a zoom of this grid; `field` names the input in the error.
    public func checkZoom(_ zoom: Int, field: String = "zoom") throws(ValidationError) {
        guard (0...maxZoom).contains(zoom) else {
            throw ValidationError(field: field, "must be an integer from 0 to \(maxZoom), got \(zoom)")
        }
    }

    /// The cell holding a position at `zoom` (0...maxZoom).
    public func cell(of coordinate: Coordinate, zoom: Int) -> Cell {
        let d = depth(zoom: zoom)
        let p = FixedPoint(coordinate)
        return Cell(zoom: zoom, x: Int(UInt64(p.x) >> (32 - d)), y: Int(UInt64(p.y) >> (32 - d)))
    }

    /// The stable id of a cell: `4^level + Morton(x, y)`, where `level` is the cell's
    /// quadtree level (`zoom + log2(256 / cellSize)`). The leading 1 bit encodes the level,
    /// the bits below it interleave x and y. Ids stay below 2^53.
    public func id(of cell: Cell) -> ClusterID {
        let d = depth(zoom: cell.zoom)
        return ClusterID(rawValue: (1 << (2 * d)) | Morton.code(x: UInt32(cell.x), y: UInt32(cell.y)))
    }

    /// The cell an id names; a number that names no cell of this grid is a
    /// ``NoSuchCluster`` (a well-formed id of nothing, as a deleted report's number is).
    public func cell(of id: ClusterID) throws(NoSuchCluster) -> Cell {
        let raw = id.rawValue
        let top = raw == 0 ? -1 : 63 - raw.leadingZeroBitCount
        let d = top / 2
        guard raw != 0, top % 2 == 0, (cellShift...maxDepth).contains(d) else {
            throw NoSuchCluster(description: "\(raw) is not a cluster id of this grid (zooms 0 to \(maxZoom), \(cellSize)-px cells)")
        }
        let (x, y) = Morton.cell(raw & ((1 << (2 * d)) - 1))
        return Cell(zoom: d - cellShift, x: Int(x), y: Int(y))
    }

    /// The cells of `zoom` that share area with the box, as one or two column ranges (two
    /// when the box crosses the antimeridian) and one row range.
    ///
    /// A cell that only touches the box's edge is not included, so the cells of a
    /// tile-aligned box are exactly the tile's cells; a box of zero width or height takes
    /// the cells its edge lies in. Edges within 10⁻⁷ of a cell boundary are taken as on it,
    /// so boxes computed from tile bounds in degrees select the tile's cells exactly.
    public func cells(in box: BoundingBox, zoom: Int) -> CellBlock {
        let n = cellsPerSide(zoom: zoom)
        let scale = Double(n)
        func first(_ v: Double) -> Int {
            let r = v.rounded()
            return min(max(Int(abs(v - r) < 1e-7 ? r : v.rounded(.down)), 0), n - 1)
        }
        func last(_ v: Double, from: Int) -> Int {
            let r = v.rounded()
            let cell = abs(v - r) < 1e-7 ? Int(r) - 1 : Int(v.rounded(.down))
            return min(max(cell, from), n - 1)
        }
        let top = first(WebMercator.y(latitude: box.north) * scale)
        let rows = top...last(WebMercator.y(latitude: box.south) * scale, from: top)
        let west = first(WebMercator.x(longitude: box.west) * scale)
        if !box.crossesAntimeridian {
            return CellBlock(zoom: zoom, columns: [west...last(WebMercator.x(longitude: box.east) * scale, from: west)], rows: rows)
        }
        let east = last(WebMercator.x(longitude: box.east) * scale, from: 0)
        if east + 1 >= west { return CellBlock(zoom: zoom, columns: [0...(n - 1)], rows: rows) }
        return CellBlock(zoom: zoom, columns: [west...(n - 1), 0...east], rows: rows)
    }
}

/// One cell of the grid: its zoom and its column and row (0 at the west and north edges).
public struct Cell: Sendable, Hashable, CustomStringConvertible {
    public var zoom: Int
    public var x: Int
    public var y: Int

    public init(zoom: Int, x: Int, y: Int) {
        self.zoom = zoom
        self.x = x
        self.y = y
    }

    public var description: String { "\(zoom)/\(x)/\(y)" }
}

/// The cells of one zoom selected by a query: every cell in one of `columns` and in `rows`.
public struct CellBlock: Sendable, Hashable {
    public var zoom: Int
    /// Disjoint column ranges, west to east of the query (two across the antimeridian).
    public var columns: [ClosedRange<Int>]
    public var rows: ClosedRange<Int>

    public init(zoom: Int, columns: [ClosedRange<Int>], rows: ClosedRange<Int>) {
        self.zoom = zoom
        self.columns = columns
        self.rows = rows
    }

    /// How many cells the block holds.
    public var cellCount: Int { columns.reduce(0) { $0 + $1.count } * rows.count }

    /// Whether the block holds the cell (of its zoom).
    public func contains(_ cell: Cell) -> Bool {
        cell.zoom == zoom && rows.contains(cell.y) && columns.contains { $0.contains(cell.x) }
    }
}

/// The id of a cluster: its zoom and cell (see ``ClusterGrid/id(of:)``).
public struct ClusterID: Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Parses the decimal form used in URLs and GeoJSON; anything else is an error on `field`.
    public init(parsing text: Substring, field: String = "id") throws(ValidationError) {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = UInt64(text) else {
            throw ValidationError(field: field, "must be a cluster id (a non-negative integer), got \"\(text.prefix(40))\"")
        }
        rawValue = value
    }

    public var description: String { String(rawValue) }
}

/// A position in 32-bit fixed point of normalized Web Mercator: `floor(x · 2^32)`, the
/// east and south edges clamped into the last unit. Cells at every level are the top
/// bits of these numbers, so `x >> (32 - level)` is `floor(x · 2^level)` exactly; sums
/// of them are exact integers, so insert-then-delete leaves no rounding behind. One unit
/// is 2⁻³² of the world's width: under 1 cm.
struct FixedPoint {
    var x: UInt32
    var y: UInt32

    static let scale = 4_294_967_296.0

    init(_ c: Coordinate) {
        x = Self.quantize(WebMercator.x(longitude: c.longitude))
        y = Self.quantize(WebMercator.y(latitude: c.latitude))
    }

    var key: UInt64 { Morton.code(x: x, y: y) }

    @inline(__always)
    static func quantize(_ v: Double) -> UInt32 {
        let s = v * scale
        return s >= scale ? .max : s <= 0 ? 0 : UInt32(s)
    }

    /// The centre of a unit, back in normalized Mercator.
    @inline(__always)
    static func position(_ v: UInt32) -> Double { (Double(v) + 0.5) / scale }
}
