import Foundation
import Generator
import Geometry
import PostgresStore
import ReportModel
import StorePorts
import Testing
import TestSupport

/// The view GIS staff open straight from PostGIS (`public_report`), read by GDAL as QGIS
/// would: every public report at its exact position, none hidden or deleted, no filer.
@Suite("PostGIS: the public reports' view, read by GDAL", .enabled(if: TestPostgres.url != nil))
struct PostgresGISViewTests {
    /// GDAL's connection string for a database of the test cluster.
    static func gdalSource(_ name: String) throws -> String {
        let parts = try #require(URLComponents(string: TestPostgres.url(of: name)))
        return "PG:host=\(parts.host!) port=\(parts.port!) user=\(parts.user!) dbname=\(name)"
    }

    static func run(_ tool: String, _ arguments: [String]) async throws -> String {
        let run = try await ToolRun.run("/usr/bin/\(tool)", arguments)
        #expect(run.status == 0, "\(tool) \(arguments.joined(separator: " ")): \(run.errors)")
        return run.text
    }

    @Test("ogrinfo names the layer with its point geometry in WGS 84; ogr2ogr reads the public reports exactly, hidden and deleted ones left out, and no filer")
    func view() async throws {
        let database = try await TestPostgres.fresh()
        let storage = PostgresReports(database.database)
        let filer = try await PostgresAccounts(database.database).createAccount(AccountStorageConformance.new(1), now: ReportStorageConformance.t0).id
        var model = try ReportStorageConformance.seed(storage, count: 120, seed: 51)
        var rng = SplitMix64(state: 52)
        let filed = try ReportStorageConformance.one(storage) { t in
            try t.insert(
                storage.reference.validate(Drafts.make(Coordinate(longitude: 30.5234567891, latitude: 50.4501234567), using: &rng)),
                filer: filer, author: Author(accountID: filer, apiKeyID: nil), now: ReportStorageConformance.t0)
        }
        model.reports[filed.id] = filed

        let source = try Self.gdalSource(database.name)
        let info = try await Self.run("ogrinfo", ["-ro", "-so", source, "public_report"])
        #expect(info.contains("Geometry: Point") && info.contains("Feature Count: \(model.reports.count)") && info.contains("WGS 84"), "\(info)")
        #expect(!info.contains("filer") && !info.contains("account"), "no column names who filed")

        let lines = try await Self.run("ogr2ogr", ["-f", "GeoJSONSeq", "-lco", "COORDINATE_PRECISION=17", "/vsistdout/", source, "public_report"]).split(whereSeparator: \.isNewline)
        var read: [Int64: (Double, Double)] = [:]
        for line in lines {
            let feature = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let id = try #require((feature["properties"] as? [String: Any])?["id"] as? Int)
            let c = try #require((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double])
            read[Int64(id)] = (c[0], c[1])
        }
        #expect(Set(read.keys) == Set(model.reports.keys), "the public reports, and only they")
        // GDAL's text is read back by JSONSerialization, which may round a 17-digit number
        // by an ulp: within a nanodegree here; the exact values are checked in the view itself.
        for (id, report) in model.reports {
            let c = report.coordinate
            #expect(read[id].map { abs($0.0 - c.longitude) < 1e-9 && abs($0.1 - c.latitude) < 1e-9 } == true, "report \(id) at \(c), read \(String(describing: read[id]))")
        }
        // PostgreSQL prints float8 in its shortest exact form, as Swift does.
        let exact = try TestPostgres.psql("SELECT id || ' ' || ST_X(position) || ' ' || ST_Y(position) FROM public_report", database: database.name).map { line in
            let parts = line.split(separator: " ")  // Swift's parse of a decimal is exact
            return "\(parts[0]) \(Double(parts[1])!) \(Double(parts[2])!)"
        }
        #expect(Set(exact) == Set(model.reports.values.map { "\($0.id) \($0.coordinate.longitude) \($0.coordinate.latitude)" }), "the view's points are the reports' doubles")
        _ = database
    }
}
