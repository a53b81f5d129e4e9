/// A WGS84 position, in degrees.
public struct Coordinate: Sendable, Hashable {
    public var longitude: Double
    public var latitude: Double

    public init(longitude: Double, latitude: Double) {
        self.longitude = longitude
        self.latitude = latitude
    }

    /// Checks that the position is a finite WGS84 coordinate. Values closer to 0 than
    /// 1e-30° (far below a nanometre) become 0: 32-bit floats, as in SQLite's R*Tree,
    /// cannot round them outward.
    public func validated() throws(ValidationError) -> Coordinate {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw ValidationError(field: "latitude", "must be a number from -90 to 90, got \(latitude)")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw ValidationError(field: "longitude", "must be a number from -180 to 180, got \(longitude)")
        }
        func flushed(_ x: Double) -> Double { abs(x) < 1e-30 ? 0 : x }
        return Coordinate(longitude: flushed(longitude), latitude: flushed(latitude))
    }
}

/// A box of longitudes and latitudes, edges included.
///
/// A box whose `west` is greater than its `east` crosses the antimeridian: it runs east
/// from `west` to 180° and on from -180° to `east`. ``parts`` splits such a box into the
/// two ordinary boxes that every index query answers.
///
/// ```swift
/// let pacific = try BoundingBox(parsing: "170,-10,-170,10")
/// pacific.parts   // [170,-10,180,10] and [-180,-10,-170,10]
/// ```
public struct BoundingBox: Sendable, Hashable, CustomStringConvertible {
    public let west: Double
    public let south: Double
    public let east: Double
    public let north: Double

    /// Creates a box, rejecting NaN, latitudes outside ±90, longitudes outside ±180 and
    /// a south edge north of the north edge. `field` names the input in the error.
    public init(west: Double, south: Double, east: Double, north: Double, field: String = "bbox") throws(ValidationError) {
        for (name, value, limit) in [("west", west, 180.0), ("south", south, 90), ("east", east, 180), ("north", north, 90)] {
            guard value.isFinite, (-limit...limit).contains(value) else {
                let axis = limit == 90 ? "latitude" : "longitude"
                throw ValidationError(field: field, "\(name) must be a \(axis) from -\(Int(limit)) to \(Int(limit)), got \(value)")
            }
        }
        guard south <= north else {
            throw ValidationError(field: field, "south (\(south)) must not be greater than north (\(north))")
        }
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    /// Parses `W,S,E,N` in degrees, as in a `bbox` query parameter.
    public init(parsing text: Substring, field: String = "bbox") throws(ValidationError) {
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard items.count == 4 else {
            throw ValidationError(field: field, "must be four numbers west,south,east,north; got \(items.count) item(s) in \"\(text.prefix(80))\"")
        }
        var values: [Double] = []
        for item in items {
            let trimmed = item.trimmingSpaces
            guard let value = DecimalNumber.parse(trimmed) else {
                throw ValidationError(field: field, "\"\(trimmed.prefix(40))\" is not a number; expected west,south,east,north in degrees")
            }
            values.append(value)
        }
        try self.init(west: values[0], south: values[1], east: values[2], north: values[3], field: field)
    }

    public init(parsing text: String, field: String = "bbox") throws(ValidationError) {
        try self.init(parsing: text[...], field: field)
    }

    /// The whole world.
    public static let world = try! BoundingBox(west: -180, south: -90, east: 180, north: 90)

    /// Whether the box runs across the 180° meridian (its west edge is east of its east edge).
    public var crossesAntimeridian: Bool { west > east }

    /// One box, or two when it crosses the antimeridian; none of them crosses it.
    public var parts: [BoundingBox] {
        guard crossesAntimeridian else { return [self] }
        return [
            BoundingBox(unchecked: west, south, 180, north),
            BoundingBox(unchecked: -180, south, east, north),
        ]
    }

    /// Whether the position lies in the box, edges included.
    @inlinable
    public func contains(_ c: Coordinate) -> Bool {
        guard c.latitude >= south, c.latitude <= north else { return false }
        if west <= east {
            return c.longitude >= west && c.longitude <= east
        }
        return c.longitude >= west || c.longitude <= east
    }

    public var description: String { "\(west),\(south),\(east),\(north)" }

    /// A box from edges known to be valid (computed from checked values); no checks.
    public init(unchecked west: Double, _ south: Double, _ east: Double, _ north: Double) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }
}

extension Substring {
    /// Without the ASCII spaces at either end (and no other white space: parameters are exact).
    public var trimmingSpaces: Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}
