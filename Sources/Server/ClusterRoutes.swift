import Clustering
import Hummingbird
import Interchange
import ReportService

/// `/v1/clusters`: what the map shows for an area at a zoom, and what is inside a cluster.
struct ClusterRoutes {
    let service: ReportService

    /// Largest page of a cluster's reports, and most reports `children` lists at the deepest zoom.
    static let maxLeaves = 10_000
    /// The most cells one request may cover, so that none can ask for a million lone
    /// reports (a continent at zoom 20); a 4K screen of 32-px cells is about 8,200.
    static let maxCells = 16_384

    func register(on router: Router<AppRequestContext>) {
        // GET /v1/clusters?bbox=W,S,E,N&zoom=Z[&status=a,b][&datetime=…]
        router.read(.clusters) { request, query, _ in
            let box = try query.required("bbox", query.bbox())
            let zoom = try query.required("zoom", query.integer("zoom", in: 0...service.maxZoom))
            let answer = try await service.clusters(in: box, zoom: zoom, filter: query.clusterFilter(service), maxCells: Self.maxCells)
            return Responses.geoJSON(ClusterGeoJSON.featureCollection(answer.items, reports: answer.reports, statusCodes: service.statusCodes, members: [
                ("bbox", "[\(box.west),\(box.south),\(box.east),\(box.north)]"), ("zoom", "\(zoom)"),
            ]))
        }
        // GET /v1/clusters/{id}: one cluster as a Feature.
        router.read(.cluster) { request, query, context in
            let cluster = try service.cluster(try clusterID(context), filter: query.clusterFilter(service))
            var out: [UInt8] = []
            ClusterGeoJSON.appendFeature(cluster, statusCodes: service.statusCodes, to: &out)
            return Responses.geoJSON(out)
        }
        // GET /v1/clusters/{id}/children: the clusters and reports one zoom deeper.
        router.read(.children) { request, query, context in
            let answer = try await service.children(of: try clusterID(context), filter: query.clusterFilter(service), limit: Self.maxLeaves)
            return Responses.geoJSON(ClusterGeoJSON.featureCollection(answer.items, reports: answer.reports, statusCodes: service.statusCodes))
        }
        // GET /v1/clusters/{id}/leaves?limit=&offset=: the reports inside, paged.
        router.read(.leaves) { request, query, context in
            let limit = try query.integer("limit", in: 1...Self.maxLeaves, default: 100)!
            let offset = try query.integer("offset", in: 0...Int(Int32.max), default: 0)!
            let id = try clusterID(context)
            let page = try await service.leaves(of: id, limit: limit, offset: offset, filter: query.clusterFilter(service))
            var members: [(String, String)] = [("numberMatched", "\(page.total)"), ("numberReturned", "\(page.reports.count)")]
            if offset + page.listed < page.total {
                let next = "/v1/clusters/\(id)/leaves?limit=\(limit)&offset=\(offset + page.listed)" + query.carried(["status", "datetime"])
                members.append(Responses.nextLink(next))
            }
            return Responses.geoJSON(Responses.featureCollection(page.reports, members: members))
        }
    }

    private func clusterID(_ context: AppRequestContext) throws -> ClusterID {
        try ClusterID(parsing: Substring(context.parameters.get("id") ?? ""))
    }
}
