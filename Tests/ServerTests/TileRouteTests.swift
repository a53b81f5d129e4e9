import Foundation
import Geometry
import HTTPTypes
import HummingbirdTesting
import ReportModel
import ReportService
@testable import Server
import Testing
import Tiles

/// `/v1/tiles`, `/v1/tiles.json`, the map page and the Leaflet files.
@Suite("Tiles and the map page over HTTP")
struct TileRouteTests {
    /// The zoom-12 tile holding a report.
    static func tile(of report: Report, zoom: Int = 12) -> (x: Int, y: Int) {
        let n = Double(1 << zoom)
        return (Int(WebMercator.x(longitude: report.coordinate.longitude) * n), Int(WebMercator.y(latitude: report.coordinate.latitude) * n))
    }

    /// Width and height from a PNG's IHDR chunk; nil when the bytes are no PNG.
    static func pngSize(_ data: Data) -> (Int, Int)? {
        let bytes = [UInt8](data)
        guard bytes.count > 24, bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        func int(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (int(16), int(20))
    }

    static func draft(from report: Report, at coordinate: Coordinate, status: String? = nil) -> ReportDraft {
        var draft = ReportDraft(filing: report, status: status ?? report.status, keepingTimes: true)
        draft.coordinate = coordinate
        return draft
    }

    @Test("a tile is a PNG of 256 px, 512 px as @2x, with its ETag, the tiles' Cache-Control, a 304 when current, never gzipped")
    func pngTile() async throws {
        let fixture = try await Fixture()
        let (x, y) = Self.tile(of: fixture.reports[0])
        var configuration = ServerConfiguration()
        configuration.tileCacheControl = "public, max-age=30"
        try await fixture.test(configuration: configuration) { client in
            let tile = try await client.get("/v1/tiles/12/\(x)/\(y).png", headers: [.acceptEncoding: "gzip"])
            #expect(tile.status == .ok && tile.headers[.contentType] == "image/png" && tile.headers[.contentEncoding] == nil)
            #expect(Self.pngSize(tile.body).map { [$0.0, $0.1] } == [256, 256])
            #expect(tile.headers[.cacheControl] == "public, max-age=30")
            let expected = try #require(try TileRenderer(clusters: fixture.service.clusterView).render(tile: TileID(z: 12, x: x, y: y)))
            #expect([UInt8](tile.body) == expected.png)
            let tag = try #require(tile.headers[.eTag])
            #expect(try await client.get("/v1/tiles/12/\(x)/\(y).png", headers: [.ifNoneMatch: tag]).status == .notModified)
            let retina = try await client.get("/v1/tiles/12/\(x)/\(y)@2x.png")
            #expect(Self.pngSize(retina.body).map { [$0.0, $0.1] } == [512, 512])
            #expect(retina.headers[.eTag] != tag)
            // The status filter: a tile of only "cancelled" reports differs (or is empty).
            let filtered = try await client.get("/v1/tiles/12/\(x)/\(y).png?status=cancelled")
            #expect(filtered.status == .noContent || filtered.body != tile.body)
        }
    }

    @Test("a tile with nothing on it is a 204 without a body")
    func emptyTile() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let empty = try await client.get("/v1/tiles/5/0/0.png")
            #expect(empty.status == .noContent && empty.body.isEmpty)
        }
    }

    @Test("bad tile requests are 400s naming the part and the rule", arguments: [
        ("/v1/tiles/21/0/0.png", "z", "from 0 to 20"),
        ("/v1/tiles/-1/0/0.png", "z", "whole number"),
        ("/v1/tiles/3/8/0.png", "x", "from 0 to 7"),
        ("/v1/tiles/3/0/8.png", "y", "from 0 to 7"),
        ("/v1/tiles/3/0/zz.png", "y", "whole number"),
        ("/v1/tiles/3/0/1@3x.png", "y", "@2x"),
        ("/v1/tiles/3/0/99999999999999999999999.png", "y", "whole number"),
        ("/v1/tiles/3/0/1.png?status=lost", "status", "unknown status"),
        ("/v1/tiles/3/0/1.png?datetime=soon", "datetime", "RFC 3339"),
        ("/v1/tiles/3/0/1.png?size=9", "size", "unknown parameter"),
        ("/v1/tiles.json?status=lost", "status", "unknown status"),
    ])
    func badTiles(uri: String, field: String, rule: String) async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let answer = try await client.get(uri)
            #expect(answer.status == .badRequest, "\(uri)")
            #expect(answer.error?["field"] as? String == field, "\(uri)")
            let message = answer.error?["message"] as? String ?? ""
            #expect(message.contains(rule), "\(uri): \(message)")
        }
    }

    @Test("writes through the service reach the next tile at once: insert, status change, move, delete; far tiles stay cached")
    func writesInvalidate() async throws {
        let fixture = try await Fixture()
        let report = fixture.reports[0]
        let (x, y) = Self.tile(of: report)
        let renderer = TileRenderer(clusters: fixture.service.clusterView)
        let near = "/v1/tiles/12/\(x)/\(y).png"
        let far = "/v1/tiles/12/\(x)/\(y + 40).png"
        try await fixture.test { client in
            func served() async throws -> [UInt8] { [UInt8](try await client.get(near).body) }
            func fresh() throws -> [UInt8] { try renderer.render(tile: TileID(z: 12, x: x, y: y))?.png ?? [] }
            func hits() async throws -> Int { (try await client.get("/health").json["tile_cache"] as! [String: Any])["hits"] as! Int }
            let before = try await served()
            _ = try await client.get(far)
            let service = fixture.service
            // A new report right where the first one is.
            let added = try service.insert([Self.draft(from: report, at: report.coordinate)])[0]
            var after = try await served()
            var expected = try fresh()
            #expect(after != before && after == expected)
            // Its status changes.
            try service.update(id: added.id, with: Self.draft(from: report, at: report.coordinate, status: report.status == "new" ? "removed" : "new"))
            after = try await served()
            expected = try fresh()
            #expect(after == expected)
            // Moved away, then deleted.
            let away = Coordinate(longitude: report.coordinate.longitude + 0.02, latitude: report.coordinate.latitude)
            try service.update(id: added.id, with: Self.draft(from: report, at: away))
            after = try await served()
            expected = try fresh()
            #expect(after == expected)
            try service.delete(id: added.id)
            after = try await served()
            expected = try fresh()
            #expect(after == expected && after == before)
            // The far tile was never touched: still a hit.
            let hitsBefore = try await hits()
            _ = try await client.get(far)
            #expect(try await hits() == hitsBefore + 1)
        }
    }

    @Test("tiles.json is TileJSON 3.0.0 with the URL template, the zooms and the data's bounds; filters are kept in the template")
    func tileJSON() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let document = try await client.get("/v1/tiles.json")
            #expect(document.json["tilejson"] as? String == "3.0.0")
            #expect((document.json["tiles"] as? [String])?.first?.hasSuffix("/v1/tiles/{z}/{x}/{y}.png") == true)
            #expect(document.json["minzoom"] as? Int == 0 && document.json["maxzoom"] as? Int == 20)
            let bounds = try #require(document.json["bounds"] as? [Double])
            #expect(bounds.count == 4)
            for r in fixture.reports {
                #expect(bounds[0] - 1e-6 <= r.coordinate.longitude && r.coordinate.longitude <= bounds[2] + 1e-6 && bounds[1] - 1e-6 <= r.coordinate.latitude && r.coordinate.latitude <= bounds[3] + 1e-6)
            }
            let longitudes = fixture.reports.map(\.coordinate.longitude), latitudes = fixture.reports.map(\.coordinate.latitude)
            #expect(abs(bounds[0] - longitudes.min()!) < 1e-6 && abs(bounds[2] - longitudes.max()!) < 1e-6)
            #expect(abs(bounds[1] - latitudes.min()!) < 1e-6 && abs(bounds[3] - latitudes.max()!) < 1e-6)
            let filtered = try await client.get("/v1/tiles.json?status=new,verifying")
            #expect((filtered.json["tiles"] as? [String])?.first?.hasSuffix("/v1/tiles/{z}/{x}/{y}.png?status=new,verifying") == true)
        }
    }

    @Test("the map page loads Leaflet from this server, carries the tile colours and the configured base map, escaped")
    func mapPage() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.baseMapURL = "https://tiles.example/{z}/{x}/{y}.png"
        configuration.baseMapAttribution = "© Example </script><script>alert(1)</script>"
        configuration.pageSelfTests = true
        try await fixture.test(configuration: configuration) { client in
            let page = try await client.get("/")
            #expect(String(decoding: page.body, as: UTF8.self).contains(#""selfTests":true"#))
            #expect(page.status == .ok && page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(decoding: page.body, as: UTF8.self)
            #expect(html.contains(#"src="/leaflet/leaflet.js""#) && html.contains(#"href="/leaflet/leaflet.css""#))
            #expect(html.contains(#""url":"https://tiles.example/{z}/{x}/{y}.png""#))
            #expect(!html.contains("</script><script>alert(1)") && html.contains(#"\u003c/script>"#))
            #expect(html.contains(##""new":"#1c7ed6""##) && !html.contains("/*CONFIG*/"))
            #expect(!html.contains("http://") && !html.contains("https://unpkg"), "nothing from the internet but the configured base map")
        }
        try await fixture.test { client in
            let html = String(decoding: try await client.get("/").body, as: UTF8.self)
            #expect(html.contains(#""baseMap":null"#))
            #expect(html.contains(#""selfTests":false"#) && html.contains("config.selfTests &&"), "a link cannot make visitors' browsers write")
            // Without one, the page draws the offline layer it is served.
            let layer = try await client.get("/v1/basemap.geojson")
            #expect(layer.status == .ok && layer.headers[.contentType] == "application/geo+json" && layer.headers[.cacheControl] == "public, max-age=86400")
            #expect(layer.json["type"] as? String == "FeatureCollection" && (layer.json["features"] as? [Any])?.count ?? 0 > 5)
            #expect((layer.json["source"] as? String)?.contains("GSHHG") == true)
            #expect(html.contains("/v1/basemap.geojson") && html.contains("GSHHG"), "the page loads it and credits it")
        }
    }

    @Test("Leaflet's files are served from the install directory; other names are 404s; a missing install says what to install")
    func leafletFiles() async throws {
        let fixture = try await Fixture()
        let directory = fixture.directory.appendingPathComponent("leaflet")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("images"), withIntermediateDirectories: true)
        try Data("L = {};".utf8).write(to: directory.appendingPathComponent("leaflet.js"))
        try Data([0x89, 0x50]).write(to: directory.appendingPathComponent("images/layers.png"))
        var configuration = ServerConfiguration()
        configuration.leafletDirectory = directory.path
        try await fixture.test(configuration: configuration) { client in
            let script = try await client.get("/leaflet/leaflet.js")
            #expect(script.status == .ok && String(decoding: script.body, as: UTF8.self) == "L = {};")
            #expect(script.headers[.contentType] == "application/javascript; charset=utf-8" && script.headers[.cacheControl] == "public, max-age=86400")
            #expect(try await client.get("/leaflet/images/layers.png").headers[.contentType] == "image/png")
            for name in ["/leaflet/leaflet.min.js", "/leaflet/images/..%2Fleaflet.js", "/leaflet/images/nothing.png", "/leaflet/..%2F..%2Fetc%2Fpasswd"] {
                let answer = try await client.get(name)
                #expect(answer.status == .notFound && answer.error?["code"] as? String == "not_found", "\(name)")
            }
            let css = try await client.get("/leaflet/leaflet.css")  // not in this directory
            let message = css.error?["message"] as? String ?? ""
            #expect(css.status == .notFound && message.contains("no file"))
        }
        configuration.leafletDirectory = fixture.directory.appendingPathComponent("none").path
        try await fixture.test(configuration: configuration) { client in
            let missing = try await client.get("/leaflet/leaflet.js")
            #expect(missing.status == .notFound && missing.error?["code"] as? String == "not_installed")
            let message = missing.error?["message"] as? String ?? ""
            #expect(message.contains("libjs-leaflet"))
        }
    }
}
