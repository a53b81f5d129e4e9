import Foundation

/// Normalized Web Mercator (EPSG:3857 scaled to the unit square) and the XYZ tile grid.
///
/// `x` runs from 0 at 180°W to 1 at 180°E; `y` from 0 at the north edge (85.05112878°N)
/// to 1 at the south edge. Latitudes beyond ±``maxLatitude`` are clamped, so the poles
/// map to the top and bottom edges instead of to infinity.
public enum WebMercator {
    /// The latitude at which the Web Mercator square ends: atan(sinh(π)) in degrees.
    public static let maxLatitude = 85.05112878

    /// x in [0, 1] for a longitude in degrees.
    @inlinable
    public static func x(longitude: Double) -> Double {
        (longitude + 180) / 360
    }

    /// y in [0, 1] for a latitude in degrees, clamped to ±``maxLatitude``.
    @inlinable
    public static func y(latitude: Double) -> Double {
        let phi = min(max(latitude, -maxLatitude), maxLatitude) * .pi / 180
        let y = (1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2
        return min(max(y, 0), 1)
    }

    /// The longitude in degrees of a normalized x.
    @inlinable
    public static func longitude(x: Double) -> Double {
        x * 360 - 180
    }

    /// The latitude in degrees of a normalized y.
    @inlinable
    public static func latitude(y: Double) -> Double {
        atan(sinh(.pi * (1 - 2 * y))) * 180 / .pi
    }

    /// The box seen by a viewport of `width` × `height` pixels (256-px tiles) centred on
    /// `center` at `zoom`. The box is clamped to the Mercator square north and south and
    /// may cross the antimeridian.
    public static func viewport(center: Coordinate, zoom: Double, width: Int, height: Int) -> BoundingBox {
        let worldPixels = 256 * pow(2, zoom)
        let cx = x(longitude: center.longitude), cy = y(latitude: center.latitude)
        let halfW = Double(width) / 2 / worldPixels, halfH = Double(height) / 2 / worldPixels
        let north = latitude(y: max(cy - halfH, 0)), south = latitude(y: min(cy + halfH, 1))
        if halfW >= 0.5 {
            return BoundingBox(unchecked: -180, south, 180, north)
        }
        var west = longitude(x: cx - halfW), east = longitude(x: cx + halfW)
        if west < -180 { west += 360 }
        if east > 180 { east -= 360 }
        return BoundingBox(unchecked: west, south, east, north)
    }
}

/// A tile of the XYZ grid (256-px tiles, y growing southwards, as in OSM and Google).
public struct TileID: Sendable, Hashable, CustomStringConvertible {
    public let z: Int
    public let x: Int
    public let y: Int

    /// The highest zoom of the grid this service answers.
    public static let maxZoom = 24

    /// Creates a tile, rejecting zooms outside 0...`maxZoom` and x or y outside 0..<2^z.
    public init(z: Int, x: Int, y: Int) throws(ValidationError) {
        guard (0...Self.maxZoom).contains(z) else {
            throw ValidationError(field: "z", "zoom must be from 0 to \(Self.maxZoom), got \(z)")
        }
        let n = 1 << z
        guard (0..<n).contains(x) else { throw ValidationError(field: "x", "must be from 0 to \(n - 1) at zoom \(z), got \(x)") }
        guard (0..<n).contains(y) else { throw ValidationError(field: "y", "must be from 0 to \(n - 1) at zoom \(z), got \(y)") }
        self.z = z
        self.x = x
        self.y = y
    }

    /// The tile's extent in degrees (edges shared with the neighbours).
    public var bounds: BoundingBox {
        let n = Double(1 << z)
        return BoundingBox(
            unchecked: WebMercator.longitude(x: Double(x) / n),
            WebMercator.latitude(y: Double(y + 1) / n),
            WebMercator.longitude(x: Double(x + 1) / n),
            WebMercator.latitude(y: Double(y) / n))
    }

    public var description: String { "\(z)/\(x)/\(y)" }
}
