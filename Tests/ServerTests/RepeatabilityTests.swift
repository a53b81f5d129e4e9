import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import Server
import Testing

@Suite("Identical requests, identical answers")
struct RepeatabilityTests {
    static let documents = [
        "/ogc", "/ogc/conformance", "/ogc/collections", "/ogc/collections/reports",
        "/ogc/collections/reports/items?limit=3", "/ogc/collections/reports/items?limit=3&bbox=30.2,50.3,30.8,50.6&status=new",
        "/ogc/collections/reports/items/5", "/v1/tiles.json", "/health", "/openapi.json",
    ]

    @Test("every JSON document is the same bytes each time, so its ETag is stable and If-None-Match gets a 304", arguments: documents)
    func stable(path: String) async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let first = try await client.get(path)
            #expect(first.status == .ok)
            let tag = try #require(first.headers[.eTag])
            for _ in 0..<20 {
                let again = try await client.get(path)
                #expect(again.body == first.body, "\(path)")
                #expect(again.headers[.eTag] == tag, "\(path)")
                let cached = try await client.get(path, headers: [.ifNoneMatch: tag])
                #expect(cached.status == .notModified, "\(path)")
            }
        }
    }

    @Test("OGC documents keep their members: links with href, rel, type and title; the extent's open ends are null")
    func ogcShape() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let collection = try await client.get("/ogc/collections/reports").json
            let links = try #require(collection["links"] as? [[String: Any]])
            #expect(links.map { $0["rel"] as? String } == ["self", "items"])
            #expect((links[0]["href"] as? String)?.hasSuffix("/ogc/collections/reports") == true)
            let extent = try #require(collection["extent"] as? [String: Any])
            let interval = try #require((extent["temporal"] as? [String: Any])?["interval"] as? [[Any]])
            #expect(interval.first?.count == 2 && interval.first?.allSatisfy { $0 is String } == true)
            let items = try await client.get("/ogc/collections/reports/items?limit=2").json
            let itemLinks = try #require(items["links"] as? [[String: Any]])
            #expect(itemLinks.map { $0["rel"] as? String } == ["self", "collection", "next"])
            #expect(itemLinks.allSatisfy { Set($0.keys) == ["href", "rel", "type", "title"] })
        }
    }
}
