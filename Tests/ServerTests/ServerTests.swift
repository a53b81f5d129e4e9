import Accounts
import ChangeFeed
import Foundation
import Generator
import Geometry
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Interchange
import ReportModel
import ReportService
import SQLiteStore
@testable import Server
import Testing
import TestSupport
import Webhooks

/// A service over 400 generated Kyiv reports in a temporary database.
final class Fixture: Sendable {
    let database: TemporaryStore
    let service: ReportService
    let reports: [Report]

    /// The fixture's database itself, for what a test checks in its rows.
    var store: SQLiteReports { database.store }

    /// A folder of the fixture's own, for files a test serves.
    var directory: URL { database.directory.url }

    init() async throws {
        database = try TemporaryStore()
        let store = database.store
        let reference = store.reference
        let drafts = ReportGenerator(count: 400, seed: 21, distribution: .kyiv, reference: reference).map {
            ReportDraft(filing: $0, status: $0.status, keepingTimes: true)
        }
        reports = try store.insert(drafts)
        service = try await ReportService(storage: store)
    }

    func test(
        configuration: ServerConfiguration = ServerConfiguration(), _ body: @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = Application(responder: makeResponder(try await backend(), configuration: own(configuration)))
        try await app.test(.router, body)
    }

    /// The configuration with the fixture's own photo folder (the default is one shared
    /// folder under the temporary directory, which tests run at once would share).
    func own(_ configuration: ServerConfiguration) -> ServerConfiguration {
        var configuration = configuration
        configuration.photosDirectory = directory.appendingPathComponent("photos").path
        return configuration
    }

    /// The account service over the fixture's database (bcrypt at cost 4, for speed).
    func accounts() async throws -> AccountService {
        try await AccountService(storage: SQLiteAccounts(store), passwords: Passwords(cost: 4))
    }

    /// The server's services over the fixture's database, with `accounts` (by default ``accounts()``).
    func backend(accounts: AccountService? = nil) async throws -> Backend {
        let accounts = if let accounts { accounts } else { try await self.accounts() }
        return Backend(service: service, accounts: accounts, webhooks: WebhookService(storage: SQLiteWebhooks(store)), feed: ChangeFeed(storage: store))
    }
}

struct Answer {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    /// The body parsed, when it is JSON.
    var json: [String: Any]
    var body: Data

    var features: [[String: Any]] { json["features"] as? [[String: Any]] ?? [] }
    var error: [String: Any]? { json["error"] as? [String: Any] }
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

extension TestClientProtocol {
    func get(_ uri: String, headers: HTTPFields = [:]) async throws -> Answer {
        try await execute(uri: uri, method: .get, headers: headers) { response in
            let body = Data(buffer: response.body)
            let type = response.headers[.contentType] ?? ""
            let isJSON = type.contains("json") && !type.contains("json-seq") && !body.isEmpty
            let json = !isJSON ? [:] : (try JSONSerialization.jsonObject(with: body) as? [String: Any] ?? ["array": try JSONSerialization.jsonObject(with: body)])
            return Answer(status: response.status, headers: response.headers, json: json, body: body)
        }
    }
}

/// Reports counted by an answer of clusters: cluster counts plus lone reports.
func counted(_ features: [[String: Any]]) -> Int {
    features.reduce(0) { n, f in
        let p = f["properties"] as! [String: Any]
        return n + (p["cluster"] as? Bool == true ? p["count"] as! Int : 1)
    }
}

@Suite("The HTTP API")
struct ServerTests {
    @Test("health says ok and how many reports are indexed")
    func health() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let answer = try await client.get("/health")
            #expect(answer.status == .ok)
            #expect(answer.json["status"] as? String == "ok")
            #expect(answer.json["reports"] as? Int == 400)
            #expect(answer.headers[HTTPField.Name("X-Request-Id")!] != nil)
        }
    }

    @Test("clusters of a tile count every report in it once, at every zoom")
    func clusters() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            for zoom in [8, 11, 13, 15, 18] {
                let n = Double(1 << zoom)
                let x = Int(WebMercator.x(longitude: 30.52) * n), y = Int(WebMercator.y(latitude: 50.45) * n)
                let tile = try TileID(z: zoom, x: x, y: y)
                let inTile = fixture.reports.filter { r in
                    Int(WebMercator.x(longitude: r.coordinate.longitude) * n) == x && Int(WebMercator.y(latitude: r.coordinate.latitude) * n) == y
                }
                let b = tile.bounds
                let answer = try await client.get("/v1/clusters?bbox=\(b.west),\(b.south),\(b.east),\(b.north)&zoom=\(zoom)")
                #expect(answer.status == .ok)
                #expect(answer.headers[.contentType] == "application/geo+json")
                #expect(counted(answer.features) == inTile.count, "zoom \(zoom)")
                for f in answer.features {
                    let p = f["properties"] as! [String: Any]
                    if p["cluster"] as? Bool == true {
                        #expect((p["expansion_zoom"] as! Int) > zoom)
                        #expect((p["statuses"] as! [String: Int]).values.reduce(0, +) == p["count"] as! Int)
                        #expect((f["bbox"] as! [Double]).count == 4)
                    } else {
                        #expect(p["phones"] != nil && p["address"] != nil)
                    }
                }
            }
            let open = try await client.get("/v1/clusters?bbox=-180,-90,180,90&zoom=3&status=new,verifying")
            #expect(counted(open.features) == fixture.reports.filter { ["new", "verifying"].contains($0.status) }.count)
        }
    }

    @Test("a cluster's leaves page through every member once, and its children add up to it")
    func leavesAndChildren() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let top = try await client.get("/v1/clusters?bbox=29.5,49.5,31.5,51.5&zoom=9")
            func count(_ f: [String: Any]) -> Int { (f["properties"] as! [String: Any])["count"] as? Int ?? 1 }
            let biggest = top.features.filter { ($0["properties"] as! [String: Any])["cluster"] as? Bool == true }
                .max { count($0) < count($1) }!
            let id = biggest["id"] as! Int
            let count = (biggest["properties"] as! [String: Any])["count"] as! Int
            var seen: [Int] = []
            var next: String? = "/v1/clusters/\(id)/leaves?limit=7"
            while let uri = next {
                let page = try await client.get(uri)
                #expect(page.status == .ok)
                #expect(page.json["numberMatched"] as? Int == count)
                seen += page.features.map { $0["id"] as! Int }
                next = (page.json["links"] as? [[String: Any]])?.first { $0["rel"] as? String == "next" }?["href"] as? String
            }
            #expect(seen.count == count && Set(seen).count == count)
            let children = try await client.get("/v1/clusters/\(id)/children")
            #expect(counted(children.features) == count)
            let one = try await client.get("/v1/clusters/\(id)")
            #expect((one.json["properties"] as? [String: Any])?["count"] as? Int == count)
        }
    }

    @Test("reports in an area page through next links, each once")
    func reportPaging() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            var ids: [Int] = []
            var next: String? = "/v1/reports?bbox=30.2,50.2,30.9,50.7&limit=37"
            while let uri = next {
                let page = try await client.get(uri)
                #expect(page.status == .ok)
                ids += page.features.map { $0["id"] as! Int }
                next = (page.json["links"] as? [[String: Any]])?.first?["href"] as? String
            }
            let expected = fixture.reports.filter { (30.2...30.9).contains($0.coordinate.longitude) && (50.2...50.7).contains($0.coordinate.latitude) }
            #expect(ids == expected.map { Int($0.id) }.sorted())
            let one = try await client.get("/v1/reports/17")
            #expect(one.json["id"] as? Int == 17)
        }
    }

    @Test("reports filtered by status and time page through next links, each once")
    func filteredReportPaging() async throws {
        let fixture = try await Fixture()
        let from = fixture.reports.map(\.createdAt).sorted()[100]
        let expected = fixture.reports.filter { ["new", "confirmed"].contains($0.status) && $0.createdAt >= from }.map { Int($0.id) }
        try await fixture.test { client in
            var ids: [Int] = []
            var next: String? = "/v1/reports?status=new,confirmed&datetime=\(URLText.encode(RFC3339.string(from: from)))/..&limit=9"
            while let uri = next {
                let page = try await client.get(uri)
                #expect(page.status == .ok, "\(uri): \(page.json)")
                #expect(page.json["numberMatched"] as? Int == expected.count)
                ids += page.features.map { $0["id"] as! Int }
                next = (page.json["links"] as? [[String: Any]])?.first?["href"] as? String
            }
            #expect(ids == expected)
        }
    }

    @Test("limits past the maximum are clamped, however many digits; status lists may have spaces")
    func clamping() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            for limit in ["10001", "99999999999999999999"] {
                let page = try await client.get("/v1/reports?limit=\(limit)")
                #expect(page.status == .ok && page.features.count == 400, "limit=\(limit)")
            }
            let spaced = try await client.get("/v1/clusters?bbox=-180,-90,180,90&zoom=2&status=new,%20verifying")
            #expect(spaced.status == .ok)
            #expect(counted(spaced.features) == fixture.reports.filter { ["new", "verifying"].contains($0.status) }.count)
        }
    }

    @Test("export streams every matching report in each format")
    func export() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let all = try await client.execute(uri: "/v1/export", method: .get) { ($0.headers, Data(buffer: $0.body)) }
            #expect(all.0[.contentType] == "application/geo+json")
            let collection = try JSONSerialization.jsonObject(with: all.1) as! [String: Any]
            let features = collection["features"] as! [[String: Any]]
            #expect(features.map { $0["id"] as! Int } == fixture.reports.map { Int($0.id) })
            for (f, r) in zip(features, fixture.reports) {
                let c = (f["geometry"] as! [String: Any])["coordinates"] as! [Double]
                #expect(abs(c[0] - r.coordinate.longitude) <= 5e-7 && abs(c[1] - r.coordinate.latitude) <= 5e-7)
            }
            let lines = try await client.execute(uri: "/v1/export?format=geojsonseq&status=new", method: .get) { String(buffer: $0.body) }
            #expect(lines.split(separator: "\n").count == fixture.reports.filter { $0.status == "new" }.count)
            let csv = try await client.execute(uri: "/v1/export?format=csv&bbox=30.4,50.4,30.6,50.5", method: .get) { String(buffer: $0.body) }
            let rows = csv.split(separator: "\r\n")
            #expect(rows.first?.hasPrefix("id,longitude,latitude,") == true)
            #expect(rows.count - 1 == fixture.reports.filter { (30.4...30.6).contains($0.coordinate.longitude) && (50.4...50.5).contains($0.coordinate.latitude) }.count)
        }
    }

    @Test("export reprojects through PROJ and names the CRS")
    func exportCRS() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let (headers, body) = try await client.execute(uri: "/v1/export?crs=EPSG:3857", method: .get) { ($0.headers, Data(buffer: $0.body)) }
            #expect(headers[HTTPField.Name("Content-Crs")!] == "<http://www.opengis.net/def/crs/EPSG/0/3857>")
            let collection = try JSONSerialization.jsonObject(with: body) as! [String: Any]
            #expect(((collection["crs"] as? [String: Any])?["properties"] as? [String: Any])?["name"] as? String == "urn:ogc:def:crs:EPSG::3857")
            let features = collection["features"] as! [[String: Any]]
            #expect(features.count == fixture.reports.count)
            let r = 6_378_137.0
            for (f, report) in zip(features, fixture.reports) {
                let c = (f["geometry"] as! [String: Any])["coordinates"] as! [Double]
                let x = r * report.coordinate.longitude * .pi / 180
                let y = r * log(tan(.pi / 4 + report.coordinate.latitude * .pi / 360))
                #expect(abs(c[0] - x) < 0.001 && abs(c[1] - y) < 0.001, "\(c) vs \(x), \(y)")
            }
            let csv = try await client.execute(uri: "/v1/export?format=csv&crs=EPSG:32636", method: .get) { String(buffer: $0.body) }
            #expect(csv.hasPrefix("id,x,y,"))
            let wgs = try await client.execute(uri: "/v1/export?crs=OGC:CRS84", method: .get) { $0.headers[HTTPField.Name("Content-Crs")!] }
            #expect(wgs == "<http://www.opengis.net/def/crs/OGC/1.3/CRS84>")
        }
    }

    @Test("OGC API – Features: landing page, conformance, the collection, items paged by next links, one item")
    func ogc() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let landing = try await client.get("/ogc")
            let rels = (landing.json["links"] as! [[String: Any]]).map { $0["rel"] as! String }
            #expect(Set(rels).isSuperset(of: ["self", "service-desc", "conformance", "data"]))
            let conformance = try await client.get("/ogc/conformance").json["conformsTo"] as! [String]
            #expect(conformance.contains("http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core"))
            let collections = try await client.get("/ogc/collections").json["collections"] as! [[String: Any]]
            #expect(collections.map { $0["id"] as! String } == ["reports"])
            let collection = try await client.get("/ogc/collections/reports").json
            let extent = ((collection["extent"] as! [String: Any])["spatial"] as! [String: Any])["bbox"] as! [[Double]]
            let longitudes = fixture.reports.map(\.coordinate.longitude), latitudes = fixture.reports.map(\.coordinate.latitude)
            let tight = [longitudes.min()!, latitudes.min()!, longitudes.max()!, latitudes.max()!]
            #expect(extent[0].count == 4 && zip(extent[0], tight).allSatisfy { abs($0 - $1) < 1e-6 }, "the reports' own box, from the index")
            let interval = ((collection["extent"] as! [String: Any])["temporal"] as! [String: Any])["interval"] as! [[String]]
            let created = fixture.reports.map(\.createdAt)
            #expect(interval == [[RFC3339.string(from: created.min()!), RFC3339.string(from: created.max()!)]])
            var ids: [Int] = []
            var next: String? = "/ogc/collections/reports/items?limit=33&bbox=30.3,50.3,30.7,50.6"
            while let uri = next {
                let page = try await client.get(uri)
                #expect(page.status == .ok && page.json["numberReturned"] as? Int == page.features.count)
                ids += page.features.map { $0["id"] as! Int }
                next = (page.json["links"] as! [[String: Any]]).first { $0["rel"] as? String == "next" }?["href"] as? String
            }
            #expect(ids == fixture.reports.filter { (30.3...30.7).contains($0.coordinate.longitude) && (50.3...50.6).contains($0.coordinate.latitude) }.map { Int($0.id) })
            #expect(try await client.get("/ogc/collections/reports/items/5").json["id"] as? Int == 5)
            #expect(try await client.get("/ogc/collections/posters/items").status == .notFound)
            #expect(try await client.get("/ogc/collections/reports/items?f=xml").error?["field"] as? String == "f")
        }
    }

    @Test("search finds by phone fragment and by id; nothing found is a 200 with no features")
    func search() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let phone = fixture.reports[41].phones[0]
            let fragment = String(phone.suffix(7))
            let found = try await client.get("/v1/search?q=\(fragment)")
            #expect(found.status == .ok)
            #expect(found.features.contains { $0["id"] as? Int == Int(fixture.reports[41].id) })
            let byID = try await client.get("/v1/search?q=%2342&limit=1")
            #expect(byID.features.first?["id"] as? Int == 42)
            let none = try await client.get("/v1/search?q=000000000000")
            #expect(none.status == .ok)
            #expect(none.features.isEmpty && none.json["numberMatched"] as? Int == 0)
            // Longer than any number or id: nothing, where a fragment worth more than 2^63 once stopped the process.
            for long in [String(repeating: "9", count: 20), "12345678901234567890", String(repeating: "1", count: 64)] {
                let answer = try await client.get("/v1/search?q=\(long)")
                #expect(answer.status == .ok && answer.features.isEmpty && answer.json["numberMatched"] as? Int == 0, "\(long.count) digits")
            }
            #expect(try await client.get("/v1/search?q=\(fragment)").status == .ok, "the server still answers")
        }
    }

    @Test("reference data for the app's forms")
    func reference() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let districts = try await client.get("/v1/districts").json["array"] as! [[String: Any]]
            #expect(districts.count == 10 && districts.allSatisfy { $0["name_uk"] != nil && $0["name_en"] != nil })
            let types = try await client.get("/v1/object-types").json["array"] as! [[String: Any]]
            #expect(types.count == 8 && types.allSatisfy { !($0["balance_holders"] as! [Any]).isEmpty })
            let statuses = try await client.get("/v1/statuses").json["array"] as! [[String: Any]]
            #expect(statuses.map { $0["code"] as! String }.contains("phone_blocked"))
        }
    }

    @Test("a strong ETag, and 304 when the client has it")
    func etag() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let first = try await client.get("/v1/clusters?bbox=30,50,31,51&zoom=10")
            let tag = try #require(first.headers[.eTag])
            #expect(tag.hasPrefix("\"") && first.headers[.cacheControl] != nil)
            let again = try await client.get("/v1/clusters?bbox=30,50,31,51&zoom=10", headers: [.ifNoneMatch: tag])
            #expect(again.status == .notModified)
            let other = try await client.get("/v1/clusters?bbox=30,50,31,51&zoom=11", headers: [.ifNoneMatch: tag])
            #expect(other.status == .ok)
            let listed = try await client.get("/v1/clusters?bbox=30,50,31,51&zoom=10", headers: [.ifNoneMatch: "\"0\", W/\(tag)"])
            #expect(listed.status == .notModified)
        }
    }

    @Test("gzip for clients that accept it, with its own ETag; HEAD without a body")
    func gzipAndHead() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let uri = "/v1/reports?limit=50"
            let (plain, plainTag) = try await client.execute(uri: uri, method: .get) { (Data(buffer: $0.body), $0.headers[.eTag]) }
            let (zipped, encoding, zippedTag) = try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "br;q=1, gzip;q=0.8"]) {
                (Data(buffer: $0.body), $0.headers[.contentEncoding], $0.headers[.eTag])
            }
            #expect(encoding == "gzip")
            #expect(zipped.count < plain.count / 2)
            #expect(zipped.prefix(2) == Data([0x1F, 0x8B]))
            #expect(plainTag != nil && zippedTag != nil && plainTag != zippedTag)
            let refused = try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "gzip;q=0"]) { $0.headers[.contentEncoding] }
            #expect(refused == nil)
            let notModified = try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "gzip", .ifNoneMatch: zippedTag!]) { $0.status }
            #expect(notModified == .notModified)
            let head = try await client.execute(uri: uri, method: .head) { ($0.status, $0.body.readableBytes, $0.headers[.eTag]) }
            #expect(head.0 == .ok, "\(head.0)")
            #expect(head.1 == 0)
            #expect(head.2 == plainTag)
        }
    }

    @Test("CORS: browsers on other origins may read the answers and their ETag")
    func cors() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let headers = try await client.execute(uri: "/v1/statuses", method: .get, headers: [.origin: "https://map.example"]) { $0.headers }
            #expect(headers[.accessControlAllowOrigin] == "*")
            #expect(headers[.accessControlExposeHeaders]?.contains("ETag") == true)
            let preflight = try await client.execute(
                uri: "/v1/clusters", method: .options,
                headers: [.origin: "https://map.example", .accessControlRequestMethod: "GET"]) { ($0.status, $0.headers) }
            #expect(preflight.0.code < 300 && preflight.1[.accessControlAllowMethods] == "GET, HEAD, OPTIONS")
            let me = try await client.execute(
                uri: "/v1/me", method: .options, headers: [.origin: "https://map.example", .accessControlRequestMethod: "GET"]) { $0.headers }
            #expect(me[.accessControlAllowMethods] == "GET, HEAD, PATCH, OPTIONS" && me[.accessControlAllowHeaders]?.contains("Authorization") == true)
            #expect(try await client.execute(uri: "/v1/auth/login", method: .options) { $0.headers[.allow] } == "POST, OPTIONS")
            #expect(try await client.execute(uri: "/v1/nothing", method: .options) { $0.status } == .notFound)
            // Errors keep their status and JSON body for cross-origin clients too.
            let (status, allowed, body) = try await client.execute(uri: "/v1/clusters?zoom=99", method: .get, headers: [.origin: "https://map.example"]) {
                ($0.status, $0.headers[.accessControlAllowOrigin], String(buffer: $0.body))
            }
            #expect(status == .badRequest && allowed == "*" && body.contains("\"field\":\"bbox\""))
        }
    }

    @Test("other methods are a 405 with Allow; an overlong URI is a 414")
    func methodsAndLimits() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            for method in [HTTPRequest.Method.post, .put, .delete, .patch] {
                let (status, allow) = try await client.execute(uri: "/v1/clusters", method: method) { ($0.status, $0.headers[.allow]) }
                #expect(status == .methodNotAllowed && allow == "GET, HEAD, OPTIONS")
            }
            let long = try await client.get("/v1/search?q=" + String(repeating: "1", count: 9_000))
            #expect(long.status == .uriTooLong && long.error?["code"] as? String == "too_long")
        }
    }

    @Test("/openapi.json documents every route, and every route takes exactly the parameters documented")
    func openAPI() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let document = try await client.get("/openapi.json").json
            #expect(document["openapi"] as? String == "3.1.0")
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            #expect(Set(paths.keys) == Set(Endpoint.all.map(\.path)))
            let someCluster = try await client.get("/v1/clusters?bbox=-180,-90,180,90&zoom=2").features.first!["id"] as! Int
            for (path, item) in paths {
                let concrete = path.replacingOccurrences(of: "{id}", with: path.hasPrefix("/v1/clusters") ? "\(someCluster)" : "1")
                    .replacingOccurrences(of: "{collectionId}", with: "reports").replacingOccurrences(of: "{featureId}", with: "1")
                    .replacingOccurrences(of: "{z}/{x}/{y}", with: "1/1/1")
                    .replacingOccurrences(of: "images/{file}", with: "images/layers.png").replacingOccurrences(of: "{file}", with: "leaflet.js")
                    .replacingOccurrences(of: "{service_code}", with: fixture.service.reference.objectTypes[0].code)
                    .replacingOccurrences(of: "{service_request_id}", with: "\(fixture.reports[0].id)")
                for method in item.keys where method != "get" {
                    let status = try await client.execute(uri: concrete, method: try #require(HTTPRequest.Method(method.uppercased()))) { $0.status }
                    #expect(![404, 405].contains(status.code), "\(method) \(path) is documented but not served")
                }
                guard let get = item["get"] as? [String: Any] else { continue }
                let parameters = get["parameters"] as! [[String: Any]]
                // An event stream does not end: each request to it names a change past the
                // last, which is a 410 once its parameters are read.
                let ending = path.hasSuffix("/stream") ? "&since=999999999" : ""
                let bare = try await client.get(concrete + (ending.isEmpty ? "" : "?" + ending.dropFirst()))
                #expect(![404, 405].contains(bare.status.code), "\(path) is documented but not served")
                for p in parameters where p["in"] as? String == "query" {
                    let schema = p["schema"] as! [String: Any]
                    let value = (schema["example"] as? String).map { URLText.encode($0) } ?? "\(schema["default"] as? Int ?? 1)"
                    let name = p["name"] as! String
                    let answer = try await client.get(concrete + "?\(name)=\(value)" + ending)
                    let message = answer.error?["message"] as? String ?? ""
                    #expect(!message.contains("unknown parameter"), "\(path): \(name) documented but refused")
                }
                let undocumented = try await client.get(concrete + "?undocumented=1" + ending)
                // Open311's errors are the standard's: `[{code, description}]`, each naming its field first.
                let named = path.hasPrefix("/open311/")
                    ? undocumented.bodyText.contains(path.hasSuffix(".xml") ? "<description>undocumented: " : #""description":"undocumented: "#)
                    : undocumented.error?["field"] as? String == "undocumented"
                #expect(undocumented.status == .badRequest && named, "\(path) takes a parameter it does not document")
            }
        }
    }

    @Test("bad input is a 4xx with a JSON error naming the field and the rule", arguments: [
        ("/v1/clusters?zoom=3", 400, "bbox", "is required"),
        ("/v1/clusters?bbox=1,2,3&zoom=3", 400, "bbox", "four numbers"),
        ("/v1/clusters?bbox=0,0,1,1&zoom=21", 400, "zoom", "from 0 to 20"),
        ("/v1/clusters?bbox=0,0,1,1&zoom=x", 400, "zoom", "integer"),
        ("/v1/clusters?bbox=0,0,1,1&zoom=3&colour=red", 400, "colour", "unknown parameter"),
        ("/v1/clusters?bbox=0,0,1,1&zoom=3&zoom=4", 400, "zoom", "more than once"),
        ("/v1/clusters?bbox=0,0,1,1&zoom=3&status=lost", 400, "status", "unknown status"),
        ("/v1/clusters?bbox=0,0,1,1&zoom=3&datetime=yesterday", 400, "datetime", "RFC 3339"),
        ("/v1/clusters/abc/leaves", 400, "id", "cluster id"),
        ("/v1/clusters/3/children", 404, "id", "not a cluster id"),
        ("/v1/clusters/1", 404, "id", "not a cluster id"),
        ("/v1/clusters/1/leaves", 404, "id", "not a cluster id"),
        ("/v1/clusters/16/leaves?limit=0", 400, "limit", "from 1"),
        ("/v1/reports/abc", 400, "id", "report number"),
        ("/v1/reports/99999", 404, "id", "does not exist"),
        ("/v1/reports?limit=-1", 400, "limit", "integer"),
        ("/v1/search", 400, "q", "is required"),
        ("/v1/clusters?bbox=-180,-85,180,85&zoom=20", 400, "bbox", "at most 16384"),
        ("/v1/export?format=shp", 400, "format", "geojson, geojsonseq or csv"),
        ("/v1/export?crs=EPSG:999999", 400, "crs", "999999"),
        ("/v1/export?crs=WGS84", 400, "crs", "must be EPSG:NNNN"),
        ("/v1/reports?status=lost", 400, "status", "unknown status"),
        ("/v1/search?q=abc", 400, "q", "digit"),
        ("/v1/nothing-here", 404, nil, "no such endpoint"),
        // A NUL byte ends no number early: the whole value is refused.
        ("/v1/reports?bbox=30.5%00garbage,50.4,30.6,50.5", 400, "bbox", "without NUL"),
        ("/v1/clusters?bbox=30.5,50.4%00,30.6,50.5&zoom=10", 400, "bbox", "without NUL"),
        ("/ogc/collections/reports/items?bbox=30.5,50.4,30.6%001,50.5", 400, "bbox", "without NUL"),
        ("/v1/export?bbox=30.5,50.4,30.6,50.5%00", 400, "bbox", "without NUL"),
        ("/v1/tiles.json?bbox=1", 400, "bbox", "unknown parameter"),
        ("/v1/reports?limit=5%00", 400, "limit", "without NUL"),
        ("/v1/clusters?bbox=30.5,50.4,30.6,50.5&zoom=1%000", 400, "zoom", "without NUL"),
        ("/v1/reports?datetime=2026-01-01T00:00:00Z%00", 400, "datetime", "without NUL"),
        ("/v1/reports?bbox=inf,50.4,30.6,50.5", 400, "bbox", "is not a number"),
        ("/v1/reports?bbox=0x1p4,50.4,30.6,50.5", 400, "bbox", "is not a number"),
    ])
    func errors(uri: String, status: Int, field: String?, message: String) async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let answer = try await client.get(uri)
            #expect(answer.status.code == status, "\(uri)")
            let error = try #require(answer.error, "\(uri): \(answer.json)")
            #expect(error["field"] as? String == field, "\(uri)")
            #expect((error["message"] as? String ?? "").contains(message), "\(uri): \(error)")
            #expect(error["code"] is String)
        }
    }

    @Test("no query string, however odd, makes the server fail")
    func neverFails() async throws {
        let fixture = try await Fixture()
        var rng = SplitMix64(state: 99)
        let pieces = ["bbox=", "zoom=", "status=", "datetime=", "limit=", "offset=", "after=", "q=", "%", "%zz", "&", "=", ",", "-1", "1e308",
                      "nan", "180", "-90", "99999999999999999999", "..", "/", "%00", "new", "2026-01-01T00:00:00Z", "x"]
        let paths = ["/v1/clusters", "/v1/clusters/16", "/v1/clusters/16/leaves", "/v1/clusters/16/children", "/v1/reports", "/v1/reports/1", "/v1/search"]
        let uris = (0..<300).map { _ in
            paths[rng.below(paths.count)] + "?" + (0..<rng.below(8)).map { _ in pieces[rng.below(pieces.count)] }.joined()
        }
        try await fixture.test { client in
            for uri in uris {
                let answer = try await client.get(uri)
                #expect(answer.status.code < 500, "\(uri)")
            }
        }
    }
}
