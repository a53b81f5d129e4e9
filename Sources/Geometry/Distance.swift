import Foundation

extension Coordinate {
    /// The mean Earth radius (IUGG), in metres.
    public static let earthRadius = 6_371_008.8

    /// The great-circle distance to `other` in metres (haversine; within 0.5 % of the
    /// ellipsoid, far below what a phone's position is worth).
    public func distance(to other: Coordinate) -> Double {
        let rad = Double.pi / 180
        let dLat = (other.latitude - latitude) * rad, dLon = (other.longitude - longitude) * rad
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(latitude * rad) * cos(other.latitude * rad) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * Self.earthRadius * asin(min(1, a.squareRoot()))
    }

    /// A box holding every point within `metres` of this one (clamped to the poles; its
    /// longitudes may cross the antimeridian).
    public func box(radius metres: Double) -> BoundingBox {
        let dLat = metres / Self.earthRadius * 180 / .pi
        let cosLat = cos(latitude * .pi / 180)
        let dLon = cosLat < 1e-9 ? 180 : min(180, dLat / cosLat)
        var west = longitude - dLon, east = longitude + dLon
        if dLon >= 180 { (west, east) = (-180, 180) }
        if west < -180 { west += 360 }
        if east > 180 { east -= 360 }
        return (try? BoundingBox(west: west, south: max(-90, latitude - dLat), east: east, north: min(90, latitude + dLat))) ?? .world
    }
}
