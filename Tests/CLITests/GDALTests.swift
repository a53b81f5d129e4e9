import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// `posterwatch serve` read by GDAL (Debian's gdal-bin, which `make test` installs), as a
/// GIS analyst's QGIS or ogr2ogr would read it.
@Suite("GDAL reads what the server exports", .serialized)
struct GDALTests {
    /// Runs a GDAL tool; its standard output.
    static func gdal(_ tool: String, _ arguments: [String]) async throws -> String {
        let run = try await ToolRun.run("/usr/bin/\(tool)", arguments)
        #expect(run.status == 0, "\(tool) \(arguments.joined(separator: " ")): \(run.errors)")
        return run.text
    }

    /// Reads `source` with ogr2ogr and writes it as GeoJSON text sequences (which GDAL
    /// writes in WGS84 longitude, latitude, reprojecting when the source has another CRS);
    /// report id → position. The id is the feature id, or the `id` column of a CSV.
    static func read(_ source: String, _ options: [String] = []) async throws -> [Int: (Double, Double)] {
        let text = try await gdal("ogr2ogr", ["-f", "GeoJSONSeq", "/vsistdout/", source, "-preserve_fid"] + options)
        var result: [Int: (Double, Double)] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            guard let feature = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let c = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double], c.count >= 2 else { continue }
            let properties = feature["properties"] as? [String: Any] ?? [:]
            guard let id = (properties["id"] as? Int) ?? Int(properties["id"] as? String ?? "") ?? (feature["id"] as? Int) else { continue }
            result[id] = (c[0], c[1])
        }
        return result
    }

    @Test("the GeoJSON, CSV and reprojected exports and the OGC API items read back through GDAL match the database")
    func roundTrip() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/ogr2ogr"), "GDAL is missing: run make test, which installs gdal-bin")
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "240", "--seed", "8", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        let stored = try cli.json(try cli.run("query", "--bbox", "-180,-90,180,90", "--limit", "1000", "--db", "t.sqlite").stdout)["features"] as! [[String: Any]]
        var expected: [Int: (Double, Double)] = [:]
        for f in stored {
            let c = (f["geometry"] as! [String: Any])["coordinates"] as! [Double]
            expected[f["id"] as! Int] = (c[0], c[1])
        }
        #expect(expected.count == 240)

        let server = try await cli.serve(db: "t.sqlite")
        defer { server.process.terminate() }
        let base = server.base

        func same(_ read: [Int: (Double, Double)], _ label: String, tolerance: Double = 1e-6) {
            #expect(read.count == expected.count, "\(label): \(read.count) features read")
            let wrong = expected.filter { id, p in
                guard let q = read[id] else { return true }
                return abs(p.0 - q.0) > tolerance || abs(p.1 - q.1) > tolerance
            }
            let misplaced = wrong.count
            #expect(misplaced == 0, "\(label): \(wrong.count) reports missing or misplaced, e.g. \(wrong.first.map { "\($0.key): stored \($0.value), read \(String(describing: read[$0.key]))" } ?? "")")
        }
        // GDAL fetches the exports itself, over HTTP.
        same(try await Self.read("\(base)/v1/export?format=geojson"), "geojson")
        same(try await Self.read("\(base)/v1/export?format=geojsonseq"), "geojsonseq")
        let (csv, _) = try await URLSession.shared.data(from: URL(string: "\(base)/v1/export?format=csv")!)
        try csv.write(to: URL(fileURLWithPath: cli.path("export.csv")))
        same(try await Self.read(cli.path("export.csv"), ["-oo", "X_POSSIBLE_NAMES=longitude", "-oo", "Y_POSSIBLE_NAMES=latitude", "-a_srs", "EPSG:4326"]), "csv")
        // Reprojected: GDAL sees the CRS, and back in WGS84 the positions are the stored ones.
        let info = try await Self.gdal("ogrinfo", ["-ro", "-so", "-al", "\(base)/v1/export?crs=EPSG:3857"])
        #expect(info.contains("Pseudo-Mercator"), "\(info.prefix(600))")
        same(try await Self.read("\(base)/v1/export?crs=EPSG:3857"), "EPSG:3857 and back")
        same(try await Self.read("\(base)/v1/export?crs=EPSG:6384"), "EPSG:6384 and back")
        // OGC API – Features through GDAL's OAPIF driver, paging by next links (pages of 50).
        same(try await Self.read("OAPIF:\(base)/ogc", ["reports", "-oo", "PAGE_SIZE=50"]), "OAPIF")
    }

    @Test("GDAL reads the map page's offline base layer from the server: rivers and lakes around Kyiv, in WGS 84, the Dnipro through the city centre")
    func baseLayer() async throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "10", "--seed", "8", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        let server = try await cli.serve(db: "t.sqlite")
        defer { server.process.terminate() }
        let info = try await Self.gdal("ogrinfo", ["-ro", "-al", "-so", "\(server.base)/v1/basemap.geojson"])
        #expect(info.contains("WGS 84") && info.contains("kind: String") && info.contains("level: Integer"), "\(info.prefix(800))")
        let lines = try await Self.gdal("ogr2ogr", ["-f", "GeoJSONSeq", "/vsistdout/", "\(server.base)/v1/basemap.geojson"])
            .split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let kinds = lines.compactMap { ($0["properties"] as? [String: Any])?["kind"] as? String }
        #expect(kinds.contains("river") && kinds.contains("lake") && lines.count == kinds.count, "\(kinds)")
        // The Dnipro passes within 1.5 km of the Podil–Left Bank crossing at 50.45° N.
        let points = lines.flatMap { feature -> [[Double]] in
            let geometry = feature["geometry"] as? [String: Any]
            return (geometry?["coordinates"] as? [[Double]]) ?? ((geometry?["coordinates"] as? [[[Double]]])?.flatMap { $0 } ?? [])
        }
        #expect(points.allSatisfy { (29.9...31.3).contains($0[0]) && (50.0...50.9).contains($0[1]) }, "inside the region cut")
        #expect(points.contains { abs($0[1] - 50.45) < 0.01 && abs($0[0] - 30.57) < 0.02 }, "the Dnipro at Kyiv's centre")
    }
}
