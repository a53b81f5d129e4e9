import Foundation
import Geometry
import HummingbirdTesting
import ReportModel
@testable import Server
import Testing
import Generator
import TestSupport

/// The document and the server agree: a value the document's schema refuses, the server
/// refuses, and one it takes, the server takes. (schemathesis checks this at large in
/// `make test`; these are the cases found by hand, and the edges of each pattern.)
@Suite("/openapi.json against the server")
struct DocumentTests {
    /// A parameter's schema as the served document has it.
    static func schema(_ document: [String: Any], _ path: String, _ name: String) throws -> [String: Any] {
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        let parameters = try #require((paths[path]?["get"] as? [String: Any])?["parameters"] as? [[String: Any]])
        return try #require(parameters.first { $0["name"] as? String == name }?["schema"] as? [String: Any], "\(path) \(name)")
    }

    /// Whether a value (as a query or path string) is valid under the schema's pattern,
    /// bounds, length and enumeration: the keywords this document uses.
    static func accepts(_ schema: [String: Any], _ value: String) throws -> Bool {
        if let pattern = schema["pattern"] as? String, value.firstMatch(of: try Regex(pattern)) == nil { return false }
        if let maxLength = schema["maxLength"] as? Int, value.unicodeScalars.count > maxLength { return false }
        if let options = schema["enum"] as? [String], !options.contains(value) { return false }
        if schema["type"] as? String == "integer" {
            guard value.allSatisfy(\.isASCII), let n = Int(value) else { return false }
            if let minimum = schema["minimum"] as? Int, n < minimum { return false }
            if let maximum = schema["maximum"] as? Int, n > maximum { return false }
        }
        return true
    }

    @Test("each value found refused though documented is now refused by both, and its neighbours taken by both", arguments: [
        // (path in the document, parameter, value, the URL that sends it, taken?)
        ("/ogc/collections/{collectionId}/items/{featureId}", "featureId", "125778351427", "/ogc/collections/reports/items/125778351427", false),
        ("/ogc/collections/{collectionId}/items/{featureId}", "featureId", "2147483647", "/ogc/collections/reports/items/2147483647", true),
        ("/v1/search", "q", "", "/v1/search?q=", false),
        ("/v1/search", "q", "abc", "/v1/search?q=abc", false),
        ("/v1/search", "q", String(repeating: "1", count: 65), "/v1/search?q=" + String(repeating: "1", count: 65), false),
        ("/v1/search", "q", "#12", "/v1/search?q=%2312", true),
        ("/v1/tiles.json", "datetime", "", "/v1/tiles.json?datetime=", false),
        ("/v1/tiles.json", "datetime", "2026-02-29T00:00:00Z", "/v1/tiles.json?datetime=2026-02-29T00:00:00Z", false),
        ("/v1/tiles.json", "datetime", "2024-02-29T00:00:00Z", "/v1/tiles.json?datetime=2024-02-29T00:00:00Z", true),
        ("/v1/tiles.json", "datetime", "../..", "/v1/tiles.json?datetime=../..", false),
        ("/v1/tiles.json", "datetime", "../2026-01-01T00:00:00.5+02:00", "/v1/tiles.json?datetime=../2026-01-01T00:00:00.5%2B02:00", true),
        ("/v1/export", "crs", "", "/v1/export?bbox=0,0,0,0&crs=", false),
        ("/v1/export", "crs", " epsg:3857 ", "/v1/export?bbox=0,0,0,0&crs=%20epsg:3857%20", true),
        ("/v1/reports", "bbox", "a,b,c,d", "/v1/reports?bbox=a,b,c,d", false),
        ("/v1/reports", "bbox", " 30.2,50.3 ,+30.8,5.06e1", "/v1/reports?bbox=%2030.2,50.3%20,%2B30.8,5.06e1", true),
        ("/ogc/collections/{collectionId}/items", "datetime", "garbage", "/ogc/collections/reports/items?datetime=garbage", false),
        ("/v1/reports", "status", "new, verifying", "/v1/reports?status=new,%20verifying", true),
        ("/v1/reports", "status", "new,\tverifying", "/v1/reports?status=new,%09verifying", false),
        ("/v1/reports", "after", "2147483648", "/v1/reports?after=2147483648", false),
        ("/leaflet/images/{file}", "file", "layers.png", "/leaflet/images/layers.png", true),
        ("/leaflet/images/{file}", "file", "..png", "/leaflet/images/..png", false),
    ])
    func agree(path: String, name: String, value: String, url: String, taken: Bool) async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let document = try await client.get("/openapi.json").json
            #expect(try Self.accepts(try Self.schema(document, path, name), value) == taken, "the document on \(name)=\(value.debugDescription)")
            let answer = try await client.get(url)
            // Taken: answered (a well-formed id of nothing is a 404); refused: a 400, or a 404 for a file name.
            let refused = answer.status == .badRequest || (answer.status == .notFound && name == "file")
            #expect(refused == !taken && answer.status.code < 500, "the server on \(url): \(answer.status) \(answer.error ?? [:])")
        }
    }

    @Test("the phone number's pattern takes exactly what the server's normalization takes")
    func phonePattern() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let document = try await client.get("/openapi.json").json
            let schema = try Self.schema(document, "/v1/phones/{number}", "number")
            var rng = SplitMix64(state: 40)
            let alphabet = Array("0123456789+ -().8030x")
            var inputs = ["+380 67 123 45 67", "067-123-45-67", "(067)1234567", "80671234567", "671234567", "+48 22 123 45 67", "+1 (212) 555-0100",
                          "+3801234567", "+38012345678901", "0671234567 ", "++380671234567", "067+1234567", "", "0", String(repeating: "0", count: 41)]
            for _ in 0..<3_000 {
                let length = 1 + rng.below(18)
                inputs.append(String((0..<length).map { _ in alphabet[rng.below(alphabet.count)] }))
                let digits = (0..<(8 + rng.below(8))).map { _ in String(rng.below(10)) }.joined()
                inputs.append(["+", "", "+3", "3", "+38", "0", "80", "380", "+380"][rng.below(9)] + digits)
            }
            for input in inputs {
                let taken = (try? Phone.normalize(input)) != nil
                #expect(try Self.accepts(schema, input) == taken, "\(input.debugDescription): the server \(taken ? "takes" : "refuses") it")
            }
        }
    }

    @Test("the cell limit of /v1/clusters, which no schema can state, is in its description")
    func cellLimit() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let document = try await client.get("/openapi.json").json
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            let parameters = try #require((paths["/v1/clusters"]?["get"] as? [String: Any])?["parameters"] as? [[String: Any]])
            let bbox = try #require(parameters.first { $0["name"] as? String == "bbox" })
            #expect((bbox["description"] as? String)?.contains("At most 16384 grid cells") == true)
            let refused = try await client.get("/v1/clusters?bbox=30.2,50.3,30.8,50.6&zoom=19")
            #expect(refused.status == .badRequest && (refused.error?["message"] as? String)?.contains("at most 16384") == true)
        }
    }

    @Test("every documented media type is one the route sends, and every one it sends is documented")
    func mediaTypes() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let document = try await client.get("/openapi.json").json
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            func documented(_ path: String) throws -> Set<String> {
                let ok = try #require(((paths[path]?["get"] as? [String: Any])?["responses"] as? [String: Any])?["200"] as? [String: Any])
                return Set(try #require(ok["content"] as? [String: Any]).keys)
            }
            var sent: [String: Set<String>] = [:]
            for (path, url) in [
                ("/v1/export", "/v1/export?format=geojson"), ("/v1/export", "/v1/export?format=csv"), ("/v1/export", "/v1/export?format=geojsonseq"),
                ("/leaflet/{file}", "/leaflet/leaflet.js"), ("/leaflet/{file}", "/leaflet/leaflet.css"), ("/", "/"), ("/v1/tiles.json", "/v1/tiles.json"),
            ] {
                let answer = try await client.get(url)
                #expect(answer.status == .ok, "\(url)")
                let type = String(try #require(answer.headers[.contentType]).split(separator: ";")[0])
                sent[path, default: []].insert(type)
            }
            for (path, types) in sent { #expect(try documented(path) == types, "\(path)") }
        }
    }

    @Test("an export of a box holds exactly the box's reports in id order, empty boxes and filters included")
    func exportOfBox() async throws {
        let fixture = try await Fixture()
        let boxes = [
            try BoundingBox(west: 10, south: 10, east: 10.001, north: 10.001), try BoundingBox(west: 30.50, south: 50.43, east: 30.53, north: 50.46),
            try BoundingBox(west: 30.2, south: 50.3, east: 30.8, north: 50.6), .world,
        ]
        try await fixture.test { client in
            for box in boxes {
                for status in [nil, "new,confirmed"] {
                    let url = "/v1/export?format=geojsonseq&bbox=\(box.west),\(box.south),\(box.east),\(box.north)" + (status.map { "&status=" + $0 } ?? "")
                    let answer = try await client.get(url)
                    #expect(answer.status == .ok)
                    let ids = String(decoding: answer.body, as: UTF8.self).split(separator: "\n").compactMap { line -> Int? in
                        let json = try? JSONSerialization.jsonObject(with: Data(line.drop { $0 == "\u{1E}" }.utf8)) as? [String: Any]
                        return json?["id"] as? Int
                    }
                    let expected = fixture.reports.filter { box.contains($0.coordinate) && (status?.split(separator: ",").contains(Substring($0.status)) ?? true) }
                        .map { Int($0.id) }.sorted()
                    #expect(ids == expected, "\(url)")
                }
            }
        }
    }
}
