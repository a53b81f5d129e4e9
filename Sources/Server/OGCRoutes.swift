import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import ReportModel
import ReportService
import ReportStore

/// OGC API – Features, Part 1 (core and GeoJSON), rooted at `/ogc`, for GIS clients:
/// QGIS's "WFS / OGC API – Features" layer and GDAL's OAPIF driver page through the one
/// collection, `reports`, by following `next` links (an id cursor, stable under inserts).
struct OGCRoutes {
    let service: ReportService

    static let collectionID = "reports"
    static let crs84 = "http://www.opengis.net/def/crs/OGC/1.3/CRS84"

    func register(on router: Router<BasicRequestContext>) {
        router.get(RouterPath(Endpoint.ogcLanding.routerPath)) { request, _ in
            _ = try QueryParameters(request, endpoint: .ogcLanding)
            let base = Self.base(request)
            return try Self.json([
                "title": "PosterWatch", "description": "Reports of illegally placed posters, as OGC API – Features.",
                "links": [
                    Self.link(base + "/ogc", "self", "application/json", "this document"),
                    Self.link(base + "/openapi.json", "service-desc", "application/vnd.oai.openapi+json;version=3.1", "the API definition"),
                    Self.link(base + "/ogc/conformance", "conformance", "application/json", "conformance classes"),
                    Self.link(base + "/ogc/collections", "data", "application/json", "the collections"),
                ],
            ])
        }
        router.get(RouterPath(Endpoint.ogcConformance.routerPath)) { request, _ in
            _ = try QueryParameters(request, endpoint: .ogcConformance)
            return try Self.json(["conformsTo": [
                "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
                "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
                "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
            ]])
        }
        router.get(RouterPath(Endpoint.ogcCollections.routerPath)) { request, _ in
            _ = try QueryParameters(request, endpoint: .ogcCollections)
            let base = Self.base(request)
            return try Self.json([
                "collections": [try collection(base)],
                "links": [Self.link(base + "/ogc/collections", "self", "application/json", "the collections")],
            ])
        }
        router.get(RouterPath(Endpoint.ogcCollection.routerPath)) { request, context in
            _ = try QueryParameters(request, endpoint: .ogcCollection)
            try Self.checkCollection(context)
            return try Self.json(try collection(Self.base(request)))
        }
        router.get(RouterPath(Endpoint.ogcItems.routerPath)) { request, context in
            let query = try QueryParameters(request, endpoint: .ogcItems)
            try Self.checkCollection(context)
            _ = try ExportRoutes.checkFormat(query["f"], field: "f")
            let filter = try ReportRoutes(service: service).reportFilter(query)
            let limit = min(try query.integer("limit", in: 1...Int.max, default: 10)!, ReportRoutes.maxPage)
            let after = try query.integer("after", in: 0...Int(ReportLimits.maxID), default: nil).map(Int64.init)
            let page = filter.isBoxOnly
                ? try service.store.page(in: filter.box ?? .world, after: after, limit: limit)
                : try service.store.reports(matching: filter, after: after ?? 0, limit: limit)
            let matched = try service.store.count(matching: filter)
            let base = Self.base(request) + "/ogc/collections/reports/items"
            var kept = ""
            for name in ["bbox", "datetime", "status"] { if let v = query[name] { kept += "&\(name)=\(URLText.encode(v))" } }
            var links: [Any] = [
                Self.link(base + "?limit=\(limit)" + (after.map { "&after=\($0)" } ?? "") + kept, "self", "application/geo+json", "this page"),
                Self.link(Self.base(request) + "/ogc/collections/reports", "collection", "application/json", "the collection"),
            ]
            if page.count == limit, let last = page.last {
                links.append(Self.link(base + "?limit=\(limit)&after=\(last.id)" + kept, "next", "application/geo+json", "the next page"))
            }
            let linksJSON = String(decoding: try JSONSerialization.data(withJSONObject: links, options: [.withoutEscapingSlashes]), as: UTF8.self)
            return Responses.geoJSON(Responses.featureCollection(page, members: [
                ("numberMatched", "\(matched)"), ("numberReturned", "\(page.count)"),
                ("timeStamp", GeoJSON.string(RFC3339.string(from: Date()))), ("links", linksJSON),
            ]))
        }
        router.get(RouterPath(Endpoint.ogcItem.routerPath)) { request, context in
            _ = try QueryParameters(request, endpoint: .ogcItem)
            try Self.checkCollection(context)
            let text = context.parameters.get("featureId") ?? ""
            guard let id = Int64(text), (1...ReportLimits.maxID).contains(id) else {
                throw ValidationError(field: "featureId", "must be a report number from 1 to \(ReportLimits.maxID), got \"\(text.prefix(40))\"")
            }
            guard let report = try service.store.report(id: id) else {
                throw APIError(.notFound, code: "not_found", message: "report \(id) does not exist", field: "featureId")
            }
            return Responses.geoJSON(Array(GeoJSON.feature(report).utf8) + [0x0A])
        }
    }

    private func collection(_ base: String) throws -> [String: Any] {
        let stats = try service.store.statistics()
        let box = stats.extent ?? .world
        let times: [Any] = [stats.created.map { RFC3339.string(from: $0.lowerBound) } as Any? ?? NSNull(),
                            stats.created.map { RFC3339.string(from: $0.upperBound) } as Any? ?? NSNull()]
        return [
            "id": Self.collectionID, "title": "Poster reports", "itemType": "feature",
            "description": "Geolocated reports of illegally placed posters: address, object, balance holder, violator, phones, status, times.",
            "extent": [
                "spatial": ["bbox": [[box.west, box.south, box.east, box.north]], "crs": Self.crs84],
                "temporal": ["interval": [times], "trs": "http://www.opengis.net/def/uom/ISO-8601/0/Gregorian"],
            ],
            "crs": [Self.crs84], "storageCrs": Self.crs84,
            "links": [
                Self.link(base + "/ogc/collections/reports", "self", "application/json", "this collection"),
                Self.link(base + "/ogc/collections/reports/items", "items", "application/geo+json", "the reports"),
            ],
        ]
    }

    private static func checkCollection(_ context: BasicRequestContext) throws {
        let id = context.parameters.get("collectionId") ?? ""
        guard id == collectionID else {
            throw APIError(.notFound, code: "not_found", message: "there is no collection \"\(id.prefix(40))\"; the one collection is \"reports\"", field: "collectionId")
        }
    }

    /// `http://host` from the request's `Host`, so links work for the client that asked.
    static func base(_ request: Request) -> String {
        guard let host = request.head.authority, !host.isEmpty else { return "" }
        return "http://\(host)"
    }

    static func link(_ href: String, _ rel: String, _ type: String, _ title: String) -> [String: Any] {
        ["href": href, "rel": rel, "type": type, "title": title]
    }

    static func json(_ object: [String: Any]) throws -> Response {
        Responses.body(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) + [0x0A], type: "application/json")
    }
}
