import Foundation
import Geometry
import Reprojection
import Testing

/// Kyiv, Maidan Nezalezhnosti.
private let kyiv = Coordinate(longitude: 30.5234, latitude: 50.4501)

@Suite("CRS parsing")
struct CRSParsingTests {
    @Test("accepts EPSG codes in every spelling",
          arguments: [
            ("EPSG:3857", 3857), ("epsg:3857", 3857), ("Epsg:6384", 6384), (" EPSG:32636 ", 32636), ("EPSG:04326", 4326),
            ("http://www.opengis.net/def/crs/EPSG/0/3857", 3857), ("HTTP://WWW.OPENGIS.NET/def/crs/EPSG/0/6384", 6384),
          ])
    func epsg(text: String, code: Int) throws {
        let crs = try CRS(parsing: text)
        #expect(crs.epsgCode == code)
        #expect(crs.identifier == "EPSG:\(code)")
        #expect(crs.uri == "http://www.opengis.net/def/crs/EPSG/0/\(code)")
        #expect(crs.isWGS84LonLat == (code == 4326))
        #expect(crs == (try CRS(epsg: code)))
        #expect(try CRS(parsing: crs.uri) == crs)
        #expect(try CRS(parsing: crs.identifier) == crs)
    }

    @Test("accepts OGC CRS84 as WGS84 longitude/latitude",
          arguments: ["OGC:CRS84", "ogc:crs84", "http://www.opengis.net/def/crs/OGC/1.3/CRS84"])
    func crs84(text: String) throws {
        let crs = try CRS(parsing: text)
        #expect(crs == .crs84)
        #expect(crs.epsgCode == nil)
        #expect(crs.isWGS84LonLat)
        #expect(crs.identifier == "OGC:CRS84")
        #expect(crs.uri == "http://www.opengis.net/def/crs/OGC/1.3/CRS84")
        #expect("\(crs)" == "OGC:CRS84")
    }

    @Test("rejects other text on field crs, naming the rule",
          arguments: [
            ("EPSG:", "the EPSG code must be 1 to 9 digits and not 0, got \"\" in \"EPSG:\""),
            ("EPSG:abc", "the EPSG code must be 1 to 9 digits and not 0, got \"abc\" in \"EPSG:abc\""),
            ("EPSG:0", "the EPSG code must be 1 to 9 digits and not 0, got \"0\" in \"EPSG:0\""),
            ("EPSG:-3857", "the EPSG code must be 1 to 9 digits and not 0, got \"-3857\" in \"EPSG:-3857\""),
            ("EPSG:3857.0", "the EPSG code must be 1 to 9 digits and not 0, got \"3857.0\" in \"EPSG:3857.0\""),
            ("EPSG:1234567890", "the EPSG code must be 1 to 9 digits and not 0, got \"1234567890\" in \"EPSG:1234567890\""),
            ("http://www.opengis.net/def/crs/EPSG/0/", "the EPSG code must be 1 to 9 digits and not 0, got \"\" in \"http://www.opengis.net/def/crs/EPSG/0/\""),
            ("foo", "must be EPSG:NNNN, http://www.opengis.net/def/crs/EPSG/0/NNNN, OGC:CRS84 or http://www.opengis.net/def/crs/OGC/1.3/CRS84; got \"foo\""),
            ("", "must be EPSG:NNNN, http://www.opengis.net/def/crs/EPSG/0/NNNN, OGC:CRS84 or http://www.opengis.net/def/crs/OGC/1.3/CRS84; got \"\""),
            ("3857", "must be EPSG:NNNN, http://www.opengis.net/def/crs/EPSG/0/NNNN, OGC:CRS84 or http://www.opengis.net/def/crs/OGC/1.3/CRS84; got \"3857\""),
            ("EPSG::3857", "the EPSG code must be 1 to 9 digits and not 0, got \":3857\" in \"EPSG::3857\""),
            ("CRS84", "must be EPSG:NNNN, http://www.opengis.net/def/crs/EPSG/0/NNNN, OGC:CRS84 or http://www.opengis.net/def/crs/OGC/1.3/CRS84; got \"CRS84\""),
            ("http://www.opengis.net/def/crs/EPSG/9.9.1/3857", "must be EPSG:NNNN, http://www.opengis.net/def/crs/EPSG/0/NNNN, OGC:CRS84 or http://www.opengis.net/def/crs/OGC/1.3/CRS84; got \"http://www.opengis.net/def/crs/EPSG/9.9.1/3857\""),
          ])
    func rejects(text: String, message: String) {
        #expect(throws: ValidationError(field: "crs", message)) { try CRS(parsing: text) }
    }

    @Test("init(epsg:) rejects codes outside 1...999999999")
    func epsgRange() {
        #expect(throws: ValidationError(field: "crs", "the EPSG code must be from 1 to 999999999, got 0")) { try CRS(epsg: 0) }
        #expect(throws: ValidationError(field: "crs", "the EPSG code must be from 1 to 999999999, got 1000000000")) { try CRS(epsg: 1_000_000_000) }
    }
}

@Suite("Reprojection through PROJ")
struct ReprojectorTests {
    @Test("EPSG:3857 matches the closed-form Web Mercator to 1 mm")
    func webMercator() throws {
        let r = try Reprojector(to: .webMercator)
        let radius = 6_378_137.0
        let lambda = kyiv.longitude * .pi / 180, phi = kyiv.latitude * .pi / 180
        let (x, y) = r.project(kyiv)
        #expect(abs(x - radius * lambda) < 0.001)
        #expect(abs(y - radius * log(tan(.pi / 4 + phi / 2))) < 0.001)
        #expect(r.decimals == 3)
        #expect(r.isProjected)
        #expect(r.name == "WGS 84 / Pseudo-Mercator")
    }

    /// Reference values from `cs2cs -d 6 EPSG:4326 <target>` (PROJ 9.1.1 command line,
    /// input "50.4501 30.5234", EPSG axis order), swapped into easting, northing.
    @Test("EPSG:32636 and EPSG:6384 match cs2cs to 1 mm and are easting, northing",
          arguments: [
            (32636, 324182.209429, 5591607.607408, "WGS 84 / UTM zone 36N"),
            (6384, 337290.892459, 5591157.510208, "UCS-2000 / Ukraine TM zone 10"),
            (3857, 3397849.345279, 6524593.221531, "WGS 84 / Pseudo-Mercator"),
          ])
    func cs2cs(code: Int, x: Double, y: Double, name: String) throws {
        let r = try Reprojector(to: CRS(epsg: code))
        let p = r.project(kyiv)
        #expect(abs(p.x - x) < 0.001, "x \(p.x) vs \(x)")
        #expect(abs(p.y - y) < 0.001, "y \(p.y) vs \(y)")
        #expect(r.name == name)
        #expect(r.decimals == 3)
    }

    /// A plain projection inverts to 1e-9° (0.1 mm). Through a datum shift (UCS-2000 and
    /// Pulkovo 1942 are on the Krassowsky ellipsoid) PROJ's geocentric round trip leaves
    /// up to ~9e-9° here, so those get 1e-8° (about 1 mm).
    @Test("the inverse returns the input to 1e-9° (1e-8° through a datum shift)",
          arguments: [(3857, 1e-9), (32636, 1e-9), (2263, 1e-9), (6384, 1e-8), (4284, 1e-8)])
    func roundTrip(code: Int, tolerance: Double) throws {
        let r = try Reprojector(to: CRS(epsg: code))
        let points = code == 2263
            ? [Coordinate(longitude: -73.9857, latitude: 40.7484), Coordinate(longitude: -73.5, latitude: 40.9)]
            : [kyiv, Coordinate(longitude: 24.0316, latitude: 49.8429), Coordinate(longitude: 33.5, latitude: 44.6)]
        for c in points {
            let p = r.project(c)
            #expect(p.x.isFinite && p.y.isFinite)
            let back = r.unproject(x: p.x, y: p.y)
            #expect(abs(back.longitude - c.longitude) < tolerance, "\(back) vs \(c)")
            #expect(abs(back.latitude - c.latitude) < tolerance, "\(back) vs \(c)")
        }
    }

    @Test("a geographic target stays longitude, latitude in degrees with 6 decimals")
    func geographic() throws {
        let r = try Reprojector(to: CRS(epsg: 4284))  // Pulkovo 1942: a datum shift of ~100 m
        let p = r.project(kyiv)
        #expect(!r.isProjected)
        #expect(r.decimals == 6)
        #expect(abs(p.x - kyiv.longitude) < 0.01 && abs(p.y - kyiv.latitude) < 0.01)
        #expect(p.x != kyiv.longitude || p.y != kyiv.latitude)
    }

    @Test("EPSG:4326 and CRS84 pass coordinates through untouched", arguments: [CRS.wgs84, CRS.crs84])
    func identity(crs: CRS) throws {
        let r = try Reprojector(to: crs)
        #expect(r.decimals == 6)
        #expect(!r.isProjected)
        let points = [kyiv, Coordinate(longitude: -180, latitude: -90), Coordinate(longitude: 179.999999999, latitude: 89.5)]
        for c in points {
            let p = r.project(c)
            #expect(p.x == c.longitude && p.y == c.latitude)
            #expect(r.unproject(x: p.x, y: p.y) == c)
        }
        #expect(r.project(points).map { [$0.x, $0.y] } == points.map { [$0.longitude, $0.latitude] })
    }

    @Test("codes PROJ does not know, or that are not 2D CRSs, are refused on field crs",
          arguments: [
            (999_999, "unknown CRS EPSG:999999"),
            (1, "unknown CRS EPSG:1"),
            (4978, "EPSG:4978 is not a projected or geographic CRS; only those can be exported"),
            (5773, "EPSG:5773 is not a projected or geographic CRS; only those can be exported"),
          ])
    func unknown(code: Int, message: String) throws {
        let crs = try CRS(epsg: code)
        #expect(throws: ValidationError(field: "crs", message)) { try Reprojector(to: crs) }
    }

    @Test("unprojectable points become NaN, and the next point is fine")
    func failures() throws {
        let r = try Reprojector(to: CRS(epsg: 32636))
        // 90° from the zone's meridian on the equator: cs2cs answers "* * inf" there too.
        // (PROJ's extended transverse Mercator still answers 87° away, at 50°N.)
        let far = Coordinate(longitude: 123, latitude: 0)
        let p = r.project(far)
        #expect(p.x.isNaN && p.y.isNaN)
        #expect(abs(r.project(kyiv).x - 324182.209429) < 0.001)
        let batch = r.project([kyiv, far, kyiv])
        #expect(batch[1].x.isNaN && batch[1].y.isNaN)
        #expect(batch[0] == r.project(kyiv) && batch[2] == batch[0])
    }

    @Test("the batch form equals the single form, point for point", arguments: [3857, 32636, 6384, 4284, 4326])
    func batch(code: Int) throws {
        let r = try Reprojector(to: CRS(epsg: code))
        // A grid over Ukraine and well beyond it (where EPSG:6384's datum shift changes
        // operation), including points UTM cannot project.
        var points: [Coordinate] = []
        for lon in stride(from: -170.0, through: 170, by: 9.7) {
            for lat in stride(from: -80.0, through: 80, by: 7.3) {
                points.append(Coordinate(longitude: lon, latitude: lat))
            }
        }
        for lon in stride(from: 22.0, through: 40, by: 0.9) {
            for lat in stride(from: 44.0, through: 52.5, by: 0.45) {
                points.append(Coordinate(longitude: lon, latitude: lat))
            }
        }
        points += [Coordinate(longitude: 123, latitude: 0), Coordinate(longitude: -57, latitude: 0)]
        let many = r.project(points)
        #expect(many.count == points.count)
        if code == 32636 { #expect(many.suffix(2).allSatisfy { $0.x.isNaN && $0.y.isNaN }) }
        var mismatches = 0
        for (c, m) in zip(points, many) {
            let one = r.project(c)
            let same = (one.x.isNaN && m.x.isNaN && one.y.isNaN && m.y.isNaN) || (one.x == m.x && one.y == m.y)
            if !same { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(r.project([Coordinate]()).isEmpty)
    }

    @Test("one Reprojector shared by many tasks answers as it does sequentially")
    func concurrent() async throws {
        let r = try Reprojector(to: CRS(epsg: 6384))
        let points = (0..<2_000).map { i in
            Coordinate(longitude: 22 + Double(i % 50) * 0.36, latitude: 44.5 + Double(i / 50) * 0.2)
        }
        let expected = points.map { r.project($0) }
        let results = await withTaskGroup(of: (Int, [(x: Double, y: Double)]).self) { group in
            for task in 0..<16 {
                group.addTask {
                    // Half the tasks use the single form, half the batch form.
                    let answer = task.isMultiple(of: 2) ? points.map { r.project($0) } : r.project(points)
                    return (task, answer)
                }
            }
            var all: [(Int, [(x: Double, y: Double)])] = []
            for await item in group { all.append(item) }
            return all
        }
        #expect(results.count == 16)
        for (task, answer) in results {
            #expect(answer.count == expected.count)
            #expect(zip(answer, expected).allSatisfy { $0 == $1 }, "task \(task)")
        }
    }

    @Test("PROJ reads its database offline from this machine")
    func database() throws {
        let path = try #require(Reprojector.databasePath)
        #expect(path.hasSuffix("proj.db"))
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(Reprojector.projVersion.first?.isNumber == true)
    }
}
