import Clustering
import Foundation
import Geometry

/// Draws the clusters and single reports of a ``ClusterIndex`` as transparent PNG map
/// tiles (`z/x/y`, 256 px, 512 px `@2x`) and as static pictures of an area.
///
/// ## Design
/// - **Placement.** Every marker is drawn at its own position: a cluster at the mean of
///   its reports, a report where it is, in floating-point pixels of the world at the
///   tile's zoom relative to the window's whole-pixel origin (``MapWindow``). A marker
///   near an edge overlaps the neighbouring tile, so each window asks the index for the
///   cells within the largest marker's reach around it (a cluster lies inside its cell,
///   so `ceil(reach / cell size)` cells suffice; 1 cell with 64-px cells) and draws every
///   marker that reaches into it, wrapping around the antimeridian. Above the grid's
///   `maxZoom`, the deepest clusters are split into their reports.
/// - **Seams.** Every pixel's value is a function of its offset from the marker alone
///   (see ``Canvas``), and that offset is computed exactly: positions are rounded to
///   2⁻⁴⁰ of the world, so subtracting a window's whole-pixel origin loses nothing.
///   Markers are drawn in one global order (reports, then clusters by count, then north
///   to south) and labels snap to the world's pixel grid; so a marker split between two
///   tiles has the same pixels as in one picture covering both, bit for bit.
/// - **Looks.** Discs and labels are anti-aliased by distance-to-outline coverage rounded
///   to sixteenths (see ``Canvas``); labels use our own stroke font (``DigitFont``) in
///   white with a faint dark halo. Sizes and colors are a ``TileStyle``.
/// - **Empty.** A window where no marker paints a pixel renders as nil (HTTP 204).
///
/// ## PNG settings (measured)
/// The 38 zoom-12 tiles with markers over generated Kyiv reports (`ReportGenerator`,
/// seed 42; 16–17 markers a tile), release build on a shared 2-core machine; per-tile
/// medians, encoding only (best of 5), "max" the largest tile:
///
/// | 256-px tiles (512 px `@2x`)        | 100,000 reports          | 1,000,000 reports        |
/// |------------------------------------|--------------------------|--------------------------|
/// | **indexed, level 6, no filter**    | **6.3 KB (max 8.5), 0.9 ms** | **7.5 KB (max 9.6), 1.1 ms** |
/// | indexed, level 6, `@2x`            | 15.8 KB, 3.5 ms          | 18.8 KB, 3.9 ms          |
/// | indexed, level 1 / 3 / 9, no filter| 7.5 / 7.1 / 6.0 KB, 0.7 / 0.7 / 4.3 ms | 9.0 / 8.4 / 7.3 KB, 0.8 / 0.8 / 5.4 ms |
/// | indexed, level 6, sub / up / paeth / adaptive | 7.3 / 8.5 / 8.6 / 8.5 KB, 1.1–1.4 ms | 8.7 / 10.0 / 10.1 / 10.0 KB |
/// | indexed, level 6, `Z_FILTERED` / `Z_RLE` | 6.3 / 7.4 KB, 0.9 / 0.6 ms | 7.6 / 9.5 KB |
/// | RGBA, level 1 / 6 / 9, no filter   | 14.7 / 10.9 / 10.0 KB, 0.5 / 1.7 / 8.4 ms | 16.9 / 12.6 / 11.5 KB |
/// | RGBA, level 6, adaptive filter     | 15.9 KB, 3.2 ms          | 18.3 KB, 3.4 ms          |
/// | libpng simplified API: RGBA / RGBA fast / color-mapped | 17.1 / 13.2 / 6.3 KB, 3.3 / 0.7 / 0.9 ms | 20.2 / 15.0 / 7.5 KB |
///
/// So tiles are indexed, losslessly: with coverage rounded to sixteenths and an opaque
/// ring a tile of the default style had at most 206 colors (unrounded coverage gave
/// 1,000–1,600; a ring at 90 % opacity took 5 of the 38 tiles past 256, which
/// ``PNG/Options/ColorType-swift.enum/indexed`` would quantize by moving 2–141 pixels to a
/// near color). Unfiltered, as filters only hurt palette images; zlib level 6, as level 9
/// saves 4 % for 4–5 times the time and level 1 costs 20 %. Drawing adds 0.3–0.4 ms
/// (0.8–1.1 ms `@2x`). ``PNG/Options/tiles`` holds these settings.
///
/// ```swift
/// let renderer = TileRenderer(index: index)
/// if let tile = try renderer.render(tile: TileID(z: 12, x: 2394, y: 1385), scale: 2) {
///     respond(200, contentType: "image/png", body: tile.png)
/// } else {
///     respond(204)
/// }
/// let picture = try renderer.render(box: kyiv, zoom: 11, width: 1200, height: 800)
/// ```
public struct TileRenderer: Sendable {
    /// Where the clusters come from; tiles always show its current state.
    public let index: ClusterView
    public let style: TileStyle
    /// How the files are written (``PNG/Options/tiles`` unless changed).
    public var pngOptions = PNG.Options.tiles

    /// How far any marker paints from its position, in pixels of a 256-px tile
    /// (``TileStyle/maxExtent``, measured once).
    public let reach: Double

    public init(clusters: ClusterView, style: TileStyle = .default) {
        index = clusters
        self.style = style
        reach = style.maxExtent
    }

    /// A renderer of an index of one's own (a served one is the report service's `clusterView`).
    public init(index: ClusterIndex, style: TileStyle = .default) {
        self.init(clusters: ClusterView(index), style: style)
    }

    /// The zooms tiles are served at: the grid's (deeper tiles would only repeat its
    /// deepest clusters split into reports).
    public var zooms: ClosedRange<Int> { 0...index.grid.maxZoom }

    /// The tile as a PNG of 256 · `scale` pixels square (scale 1 to 4), or nil when no
    /// marker shows on it.
    public func render(tile: TileID, scale: Int = 1, filter: ClusterFilter = .all) throws -> RenderedImage? {
        let window = try MapWindow(tile: tile, scale: scale)
        var canvas = Canvas(width: window.width, height: window.height)
        let markers = draw(window, on: &canvas, filter: filter)
        guard markers > 0 else { return nil }
        return RenderedImage(png: try PNG.encode(canvas, options: pngOptions), width: window.width, height: window.height, markerCount: markers)
    }

    /// A picture of `width` × `height` pixels (1 to 4096) at `zoom`, centred on the box's
    /// centre (see ``MapWindow/init(centeredOn:zoom:width:height:scale:)``); transparent
    /// where there is nothing.
    public func render(
        box: BoundingBox, zoom: Int, width: Int, height: Int, scale: Int = 1, filter: ClusterFilter = .all
    ) throws -> RenderedImage {
        let window = try MapWindow(centeredOn: box, zoom: zoom, width: width, height: height, scale: scale)
        var canvas = Canvas(width: width, height: height)
        let markers = draw(window, on: &canvas, filter: filter)
        return RenderedImage(png: try PNG.encode(canvas, options: pngOptions), width: width, height: height, markerCount: markers)
    }

    /// Draws the markers of a window on a canvas of its size (over what the canvas
    /// holds); returns how many markers painted a pixel (one drawn on both sides of the
    /// antimeridian counts twice).
    ///
    /// ```swift
    /// var canvas = Canvas(width: 512, height: 256)
    /// let window = try MapWindow(zoom: 12, left: 2394 * 256, top: 1385 * 256, width: 512, height: 256)
    /// renderer.draw(window, on: &canvas, filter: ClusterFilter(statusNumbers: [0, 1, 2]))
    /// ```
    @discardableResult
    public func draw(_ window: MapWindow, on canvas: inout Canvas, filter: ClusterFilter = .all) -> Int {
        precondition(canvas.width == window.width && canvas.height == window.height, "the canvas must be the window's size")
        let scale = Double(window.scale)
        let markers = self.markers(window, filter: filter)
        let world = Double(window.worldSize)
        let font = style.font.scaled(by: scale)
        let r = reach * scale
        var drawn = 0
        for marker in markers {
            let x = marker.x * world - Double(window.left), y = marker.y * world - Double(window.top)
            // Each copy of the world (one apart) that brings the marker within reach.
            let first = ((-r - x) / world).rounded(.up), last = ((Double(window.width) + r - x) / world).rounded(.down)
            guard first <= last else { continue }
            for copy in Int(first)...Int(last) {
                if draw(marker, x: x + Double(copy) * world, y: y, scale: scale, font: font, on: &canvas) { drawn += 1 }
            }
        }
        return drawn
    }

    // MARK: Markers

    /// What is drawn for a cluster or a report.
    struct Marker {
        /// Normalized Web Mercator position, a multiple of 2⁻⁴⁰ (under 0.04 mm): so its
        /// position in world pixels (at most 2³⁴ of them) has about 40 significant bits,
        /// well within a Double's 53, and adding or subtracting whole pixels is exact.
        var x: Double
        var y: Double
        /// The cluster's count; 0 for a single report.
        var count: Int
        var status: Int
        var id: UInt64

        init(x: Double, y: Double, count: Int, status: Int, id: UInt64) {
            self.x = (x * 0x1p40).rounded() / 0x1p40
            self.y = (y * 0x1p40).rounded() / 0x1p40
            self.count = count
            self.status = status
            self.id = id
        }
    }

    /// The cells whose markers can paint on the window: those within ``reach`` (at the
    /// window's scale) of it, at the window's zoom or, deeper than the grid, its deepest;
    /// nil when the window lies wholly above or below the world.
    ///
    /// Drawing reads exactly these cells, so a tile can change only when one of them does:
    /// ``TileCache`` invalidates by the same function.
    public func cells(around window: MapWindow) -> CellBlock? {
        let grid = index.grid
        let zoom = min(window.zoom, grid.maxZoom)
        let cells = grid.cellsPerSide(zoom: zoom)
        let cellSide = Double(window.worldSize) / Double(cells)
        let reach = self.reach * Double(window.scale)
        let c0 = Int(((Double(window.left) - reach) / cellSide).rounded(.down))
        let c1 = Int(((Double(window.left + window.width) + reach) / cellSide).rounded(.down))
        let r0 = Int(((Double(window.top) - reach) / cellSide).rounded(.down))
        let r1 = Int(((Double(window.top + window.height) + reach) / cellSide).rounded(.down))
        guard r1 >= 0, r0 < cells else { return nil }
        let rows = max(r0, 0)...min(r1, cells - 1)
        if c1 - c0 + 1 >= cells { return CellBlock(zoom: zoom, columns: [0...(cells - 1)], rows: rows) }
        let west = (c0 % cells + cells) % cells, east = (c1 % cells + cells) % cells
        return CellBlock(zoom: zoom, columns: west <= east ? [west...east] : [west...(cells - 1), 0...east], rows: rows)
    }

    /// The markers of ``cells(around:)``, in drawing order.
    func markers(_ window: MapWindow, filter: ClusterFilter) -> [Marker] {
        guard let block = cells(around: window) else { return [] }
        let grid = index.grid
        var markers: [Marker] = []
        for item in index.clusters(in: block, filter: filter) {
            switch item {
            case .report(let r):
                markers.append(Marker(x: r.x, y: r.y, count: 0, status: r.status, id: UInt64(r.id)))
            case .cluster(let c) where window.zoom > grid.maxZoom:
                // Deeper than the grid clusters: its reports, one by one.
                let members = (try? index.leaves(of: c.id, limit: .max, offset: 0, filter: filter).members) ?? []
                markers += members.map { Marker(x: $0.x, y: $0.y, count: 0, status: $0.status, id: UInt64($0.id)) }
            case .cluster(let c):
                markers.append(Marker(x: c.x, y: c.y, count: c.count, status: 0, id: c.id.rawValue))
            }
        }
        // Reports below clusters, small clusters below large ones, then north to south:
        // one order for every window, whatever cells its query visited first.
        return markers.sorted { ($0.count, $0.y, $0.x, $0.id) < ($1.count, $1.y, $1.x, $1.id) }
    }

    /// Draws one marker centred at canvas pixel position (`x`, `y`); returns whether it
    /// painted a pixel.
    func draw(_ marker: Marker, x: Double, y: Double, scale: Double, font: DigitFont, on canvas: inout Canvas) -> Bool {
        let outline = style.outlineWidth * scale
        guard marker.count > 0 else {
            return canvas.fillCircle(
                centerX: x, centerY: y, radius: style.reportRadius * scale, color: style.statusColors[status: marker.status],
                outline: style.outlineColor, outlineWidth: outline)
        }
        let disc = canvas.fillCircle(
            centerX: x, centerY: y, radius: style.radius(count: marker.count) * scale, color: style.color(count: marker.count),
            outline: style.outlineColor, outlineWidth: outline)
        let label = canvas.drawText(
            style.countLabel(marker.count), centerX: x, centerY: y, font: font, color: style.textColor,
            halo: style.haloColor, haloWidth: style.haloWidth * scale)
        return disc || label
    }
}

/// A rendered PNG and what it shows.
///
/// ```swift
/// if let tile = try renderer.render(tile: tile) {
///     print(tile.png.count, "bytes,", tile.markerCount, "markers")
/// }
/// ```
public struct RenderedImage: Sendable, Hashable {
    /// The PNG file.
    public var png: [UInt8]
    public var width: Int
    public var height: Int
    /// How many markers painted at least one pixel.
    public var markerCount: Int
}
