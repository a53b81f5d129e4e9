import Geometry

/// A rectangle of pixels of the Web Mercator world at one zoom: a tile, or a static
/// picture of an area.
///
/// The world at zoom `z` and scale `s` is `256 · s · 2^z` pixels wide and high, (0, 0) at
/// its north-west corner. A window's origin is a whole pixel, so the pixels of any two
/// windows of one zoom and scale are the same pixels of the world: the two halves of a
/// tile pair equal the picture covering both.
///
/// ```swift
/// let tile = try MapWindow(tile: TileID(z: 12, x: 2394, y: 1385), scale: 2)   // 512 × 512
/// let pair = try MapWindow(zoom: 12, left: 2394 * 256, top: 1385 * 256, width: 512, height: 256)
/// let kyiv = try MapWindow(centeredOn: box, zoom: 11, width: 1024, height: 768)
/// ```
public struct MapWindow: Sendable, Hashable, CustomStringConvertible {
    public let zoom: Int
    /// Pixels per pixel of a 256-px tile: 2 for `@2x` tiles.
    public let scale: Int
    /// The window's north-west pixel in world pixels (columns wrap around the antimeridian;
    /// rows outside the world stay empty).
    public let left: Int
    public let top: Int
    public let width: Int
    public let height: Int

    /// The largest scale and picture side accepted.
    public static let maxScale = 4
    public static let maxSide = 4096

    /// A window of `width` × `height` pixels (1 to ``maxSide``) at `zoom` (0 to
    /// ``TileID/maxZoom``) and `scale` (1 to ``maxScale``).
    public init(zoom: Int, scale: Int = 1, left: Int, top: Int, width: Int, height: Int) throws(ValidationError) {
        guard (0...TileID.maxZoom).contains(zoom) else {
            throw ValidationError(field: "zoom", "must be from 0 to \(TileID.maxZoom), got \(zoom)")
        }
        guard (1...Self.maxScale).contains(scale) else {
            throw ValidationError(field: "scale", "must be from 1 to \(Self.maxScale), got \(scale)")
        }
        guard (1...Self.maxSide).contains(width) else {
            throw ValidationError(field: "width", "must be from 1 to \(Self.maxSide) pixels, got \(width)")
        }
        guard (1...Self.maxSide).contains(height) else {
            throw ValidationError(field: "height", "must be from 1 to \(Self.maxSide) pixels, got \(height)")
        }
        self.zoom = zoom
        self.scale = scale
        let world = (256 * scale) << zoom
        self.left = (left % world + world) % world
        self.top = top
        self.width = width
        self.height = height
    }

    /// The window of a tile: 256 · `scale` pixels square.
    public init(tile: TileID, scale: Int = 1) throws(ValidationError) {
        let side = 256 * min(max(scale, 1), Self.maxScale)
        try self.init(zoom: tile.z, scale: scale, left: tile.x * side, top: tile.y * side, width: side, height: side)
    }

    /// The window of `width` × `height` pixels at `zoom` centred on the box's centre (in
    /// Mercator; across the antimeridian when the box crosses it), its origin rounded to a
    /// whole pixel.
    public init(centeredOn box: BoundingBox, zoom: Int, width: Int, height: Int, scale: Int = 1) throws(ValidationError) {
        let west = WebMercator.x(longitude: box.west), east = WebMercator.x(longitude: box.east)
        let x = box.crossesAntimeridian ? (west + east + 1) / 2 : (west + east) / 2
        let y = (WebMercator.y(latitude: box.north) + WebMercator.y(latitude: box.south)) / 2
        let world = Double(256 * min(max(scale, 1), Self.maxScale)) * Double(1 << min(max(zoom, 0), TileID.maxZoom))
        try self.init(
            zoom: zoom, scale: scale, left: Int((x * world - Double(width) / 2).rounded()), top: Int((y * world - Double(height) / 2).rounded()),
            width: width, height: height)
    }

    /// The world's width (and height) in pixels.
    public var worldSize: Int { (256 * scale) << zoom }

    public var description: String { "\(width)×\(height) px at (\(left), \(top)), zoom \(zoom) @\(scale)x" }
}
