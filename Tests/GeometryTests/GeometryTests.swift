import Foundation
import Geometry
import Testing

@Suite("Bounding boxes")
struct BoundingBoxTests {
    @Test("parses W,S,E,N and splits antimeridian boxes")
    func parse() throws {
        let box = try BoundingBox(parsing: " 30.1, 50.2 ,30.9,50.6")
        #expect(box == (try BoundingBox(west: 30.1, south: 50.2, east: 30.9, north: 50.6)))
        #expect(box.parts == [box])
        let pacific = try BoundingBox(parsing: "170,-10,-170,10")
        #expect(pacific.crossesAntimeridian)
        #expect(pacific.parts == [try BoundingBox(west: 170, south: -10, east: 180, north: 10),
                                  try BoundingBox(west: -180, south: -10, east: -170, north: 10)])
    }

    @Test("rejects malformed and out-of-range boxes, naming the rule",
          arguments: [
            ("1,2,3", "must be four numbers west,south,east,north; got 3 item(s) in \"1,2,3\""),
            ("1,2,3,4,5", "must be four numbers west,south,east,north; got 5 item(s) in \"1,2,3,4,5\""),
            ("a,2,3,4", "\"a\" is not a number; expected west,south,east,north in degrees"),
            ("nan,2,3,4", "\"nan\" is not a number; expected west,south,east,north in degrees"),
            ("1,,3,4", "\"\" is not a number; expected west,south,east,north in degrees"),
            ("-181,0,1,1", "west must be a longitude from -180 to 180, got -181.0"),
            ("0,-91,1,1", "south must be a latitude from -90 to 90, got -91.0"),
            ("0,0,180.5,1", "east must be a longitude from -180 to 180, got 180.5"),
            ("0,0,1,90.01", "north must be a latitude from -90 to 90, got 90.01"),
            ("0,5,1,4", "south (5.0) must not be greater than north (4.0)"),
          ])
    func rejects(text: String, message: String) {
        #expect(throws: ValidationError(field: "bbox", message)) { try BoundingBox(parsing: text) }
    }

    @Test("contains includes edges and handles the antimeridian")
    func contains() throws {
        let box = try BoundingBox(west: 10, south: 20, east: 30, north: 40)
        for (lon, lat, inside) in [(10.0, 20.0, true), (30, 40, true), (20, 30, true), (30.000001, 30, false), (20, 19.999999, false)] {
            #expect(box.contains(Coordinate(longitude: lon, latitude: lat)) == inside)
        }
        let pacific = try BoundingBox(west: 170, south: -10, east: -170, north: 10)
        for (lon, inside) in [(180.0, true), (-180, true), (175, true), (-175, true), (0, false), (169.9, false), (-169.9, false)] {
            #expect(pacific.contains(Coordinate(longitude: lon, latitude: 0)) == inside)
        }
    }

    @Test("coordinates outside WGS84 are rejected")
    func coordinates() {
        #expect(throws: ValidationError.self) { try Coordinate(longitude: 0, latitude: 90.5).validated() }
        #expect(throws: ValidationError.self) { try Coordinate(longitude: .infinity, latitude: 0).validated() }
        #expect(throws: ValidationError.self) { try Coordinate(longitude: .nan, latitude: 0).validated() }
        #expect((try? Coordinate(longitude: -180, latitude: -90).validated()) != nil)
    }
}

@Suite("Web Mercator and tiles")
struct WebMercatorTests {
    @Test("projects the corners, the equator and the clamped poles")
    func corners() {
        #expect(WebMercator.x(longitude: -180) == 0)
        #expect(WebMercator.x(longitude: 180) == 1)
        #expect(WebMercator.x(longitude: 0) == 0.5)
        #expect(abs(WebMercator.y(latitude: 0) - 0.5) < 1e-15)
        #expect(abs(WebMercator.y(latitude: WebMercator.maxLatitude)) < 1e-9)
        #expect(abs(WebMercator.y(latitude: -WebMercator.maxLatitude) - 1) < 1e-9)
        #expect(WebMercator.y(latitude: 90) == WebMercator.y(latitude: 89))   // clamped
        #expect(WebMercator.y(latitude: -90) == WebMercator.y(latitude: -86))
        #expect(WebMercator.y(latitude: 90).isFinite && WebMercator.y(latitude: -90).isFinite)
    }

    @Test("latitude(y:) inverts y(latitude:)")
    func roundTrip() {
        for lat in stride(from: -85.0, through: 85.0, by: 2.5) {
            #expect(abs(WebMercator.latitude(y: WebMercator.y(latitude: lat)) - lat) < 1e-9)
        }
    }

    @Test("tiles: bounds and range checks")
    func tiles() throws {
        let root = try TileID(z: 0, x: 0, y: 0)
        #expect(abs(root.bounds.north - WebMercator.maxLatitude) < 1e-8 && root.bounds.west == -180 && root.bounds.east == 180)
        let kyiv = try TileID(z: 12, x: 2395, y: 1381)
        #expect(kyiv.bounds.contains(Coordinate(longitude: 30.5234, latitude: 50.4501)))
        #expect(throws: ValidationError(field: "x", "must be from 0 to 3 at zoom 2, got 4")) { try TileID(z: 2, x: 4, y: 0) }
        #expect(throws: ValidationError(field: "y", "must be from 0 to 3 at zoom 2, got -1")) { try TileID(z: 2, x: 0, y: -1) }
        #expect(throws: ValidationError.self) { try TileID(z: 25, x: 0, y: 0) }
    }

    @Test("a viewport spans its pixels at its zoom, crossing the antimeridian when it must")
    func viewport() {
        let box = WebMercator.viewport(center: Coordinate(longitude: 30.5234, latitude: 50.4501), zoom: 12, width: 1280, height: 800)
        #expect(abs((box.east - box.west) - 1280.0 / (256 * 4096) * 360) < 1e-9)
        #expect(box.contains(Coordinate(longitude: 30.5234, latitude: 50.4501)))
        let pacific = WebMercator.viewport(center: Coordinate(longitude: 179.9, latitude: 0), zoom: 8, width: 1280, height: 800)
        #expect(pacific.crossesAntimeridian)
        let world = WebMercator.viewport(center: Coordinate(longitude: 0, latitude: 0), zoom: 0, width: 1280, height: 800)
        #expect(world.west == -180 && world.east == 180 && abs(world.north - WebMercator.maxLatitude) < 1e-8)
    }
}

@Suite("Morton codes")
struct MortonTests {
    @Test("interleaves bits and inverts")
    func roundTrip() {
        #expect(Morton.code(x: 5, y: 3) == 27)
        #expect(Morton.code(x: .max, y: 0) == 0x5555_5555_5555_5555)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<1_000 {
            let x = UInt32.random(in: .min ... .max, using: &rng), y = UInt32.random(in: .min ... .max, using: &rng)
            #expect(Morton.cell(Morton.code(x: x, y: y)) == (x, y))
        }
    }

    @Test("a cell at zoom z is the range of its four children at z+1, and the poles clamp")
    func hierarchy() {
        let c = Coordinate(longitude: 30.5234, latitude: 50.4501)
        for z in 0..<20 {
            #expect(Morton.code(of: c, zoom: z + 1) >> 2 == Morton.code(of: c, zoom: z))
        }
        #expect(Morton.code(of: Coordinate(longitude: 180, latitude: -90), zoom: 16) == Morton.code(x: 65535, y: 65535))
        #expect(Morton.code(of: Coordinate(longitude: -180, latitude: 90), zoom: 16) == 0)
    }
}
