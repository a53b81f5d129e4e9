import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import ReportModel
import ReportService

/// OGC API – Features, Part 1 (core and GeoJSON), rooted at `/ogc`, for GIS clients:
/// QGIS's "WFS / OGC API – Features" layer and GDAL's OAPIF driver page through the one
/// collection, `reports`, by following `next` links (an id cursor, stable under inserts).
struct OGCRoutes {
    let service: ReportService
    /// The server's public URL without a trailing slash, when configured.
    let publicURL: String?

    static let collectionID = "reports"
    static let crs84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"

    func register(on router: Router<AppRequestContext>) {
        router.read(.ogcLanding) { request, _, _ in
            let base = base(request)
            return try Responses.json(OGC.Landing(
                title: "PosterWatch", description: "Reports of illegally placed posters, as OGC API – Features.",
                links: [
                    OGC.Link(base + "/ogc", "self", "application/json", "this document"),
                    OGC.Link(base + "/openapi.json", "service-desc", "application/vnd.oai.openapi+json;version=3.1", "the API definition"),
                    OGC.Link(base + "/ogc/conformance", "conformance", "application/json", "conformance classes"),
                    OGC.Link(base + "/ogc/collections", "data", "application/json", "the collections"),
                ]))
        }
        router.read(.ogcConformance) { _, _, _ in
            return try Responses.json(OGC.Conformance(conformsTo: [
                "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
                "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
                "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
            ]))
        }
        router.read(.ogcCollections) { request, _, _ in
            let base = base(request)
            return try await Responses.json(OGC.Collections(
                collections: [try collection(base)], links: [OGC.Link(base + "/ogc/collections", "self", "application/json", "the collections")]))
        }
        router.read(.ogcCollection) { request, _, context in
            try Self.checkCollection(context)
            return try await Responses.json(try collection(base(request)))
        }
        router.read(.ogcItems) { request, query, context in
            try Self.checkCollection(context)
            try Self.checkFormat(query["f"])
            let page = try await ReportRoutes(service: service).page(query, defaultLimit: 10)
            let base = base(request)
            let items = base + "/ogc/collections/reports/items"
            var links = [
                OGC.Link(items + "?limit=\(page.limit)" + query.carried(["after"]) + page.kept, "self", "application/geo+json", "this page"),
                OGC.Link(base + "/ogc/collections/reports", "collection", "application/json", "the collection"),
            ]
            if let after = page.nextAfter {
                links.append(OGC.Link(items + "?limit=\(page.limit)&after=\(after)" + page.kept, "next", "application/geo+json", "the next page"))
            }
            // No timeStamp: it would change the body, and so the ETag, every second.
            return Responses.geoJSON(Responses.featureCollection(page.reports, members: [
                ("numberMatched", "\(page.matched)"), ("numberReturned", "\(page.reports.count)"),
                ("links", String(decoding: try Responses.jsonBytes(links), as: UTF8.self)),
            ]))
        }
        router.read(.ogcItem) { request, query, context in
            try Self.checkCollection(context)
            try Self.checkFormat(query["f"])
            return try await ReportRoutes.feature(service, context, parameter: "featureId")
        }
    }

    private func collection(_ base: String) async throws -> OGC.Collection {
        // The extent from the cluster index's aggregates, the times from the created_at
        // index: both current and cheap, so never cached.
        let box = try service.extent() ?? .world
        let created = try await service.createdRange()
        return OGC.Collection(
            id: Self.collectionID, title: "Poster reports",
            description: "Geolocated reports of illegally placed posters: address, object, balance holder, violator, phones, status, times.",
            itemType: "feature",
            extent: OGC.Extent(
                spatial: .init(bbox: [[box.west, box.south, box.east, box.north]], crs: Self.crs84),
                temporal: .init(
                    interval: [[created.map { RFC3339.string(from: $0.lowerBound) }, created.map { RFC3339.string(from: $0.upperBound) }]],
                    trs: "http://www.opengis.net/def/uom/ISO-8601/0/Gregorian")),
            crs: [Self.crs84], storageCrs: Self.crs84,
            links: [
                OGC.Link(base + "/ogc/collections/reports", "self", "application/json", "this collection"),
                OGC.Link(base + "/ogc/collections/reports/items", "items", "application/geo+json", "the reports"),
            ])
    }

    private static func checkCollection(_ context: AppRequestContext) throws {
        let id = context.parameters.get("collectionId") ?? ""
        guard id == collectionID else {
            throw APIError(.notFound, code: "not_found", message: "there is no collection \"\(id.prefix(40))\"; the one collection is \"reports\"", field: "collectionId")
        }
    }

    /// Where links point: the configured public URL (e.g. `https://posterwatch.example`
    /// behind a TLS proxy), else `http://` and the request's `Host`, so that links work for
    /// the client that asked (GDAL wants absolute links); relative without either.
    func base(_ request: Request) -> String { Self.base(request, publicURL: publicURL) }

    static func base(_ request: Request, publicURL: String?) -> String {
        if let publicURL { return publicURL }
        guard let host = request.head.authority, !host.isEmpty else { return "" }
        return "http://\(host)"
    }

    /// `f` of OGC API requests: only GeoJSON is offered.
    static func checkFormat(_ text: String?) throws(ValidationError) {
        guard let text, !["json", "geojson"].contains(text) else { return }
        throw ValidationError(field: "f", "only GeoJSON is offered (json or geojson), got \"\(text.prefix(40))\"")
    }
}
