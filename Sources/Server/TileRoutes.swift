import Clustering
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import Offloading
import ReportService
import Tiles

/// `/v1/tiles`: PNG tiles of the clustered markers, from an in-memory cache that every
/// write through the service invalidates exactly (see ``TileCache``), and their TileJSON.
struct TileRoutes {
    let service: ReportService
    let cache: TileCache
    /// The `Cache-Control` of tiles (and of 204 empty tiles).
    let cacheControl: String
    let publicURL: String?

    func register(on router: Router<AppRequestContext>) {
        // GET /v1/tiles/{z}/{x}/{y}.png and {y}@2x.png [?status=…][&datetime=…]
        // A cached tile is answered on the spot; a miss is drawn on a thread of its own.
        router.get(RouterPath(Endpoint.tile.path)) { request, context in
            let query = try QueryParameters(request, endpoint: .tile)
            let key = try key(context, query)
            try service.requireIndex()
            if let tile = cache.cached(key) { return response(tile) }
            let tile = try await Blocking.run { try cache.tile(key) }
            return response(tile)
        }
        // GET /v1/tiles.json[?status=…][&datetime=…]: TileJSON 3.0.0, filters carried into the URL template.
        router.read(.tileJSON) { request, query, _ in
            let filter = try query.clusterFilter(service)
            let kept = query.carried(["status", "datetime"])
            let base = OGCRoutes.base(request, publicURL: publicURL)
            let box = try service.extent(filter: filter) ?? Self.mercatorWorld
            let zooms = cache.renderer.zooms
            let document: JSONValue = [
                "tilejson": "3.0.0",
                "name": "PosterWatch reports",
                "description": "Clusters of poster reports and single reports coloured by status, as transparent 256-px PNG tiles (512 px: {y}@2x.png); an empty tile is a 204.",
                "version": "1.0.0",
                "attribution": "PosterWatch",
                "scheme": "xyz",
                "tiles": [.string(base + "/v1/tiles/{z}/{x}/{y}.png" + (kept.isEmpty ? "" : "?" + kept.dropFirst()))],
                "minzoom": .int(zooms.lowerBound),
                "maxzoom": .int(zooms.upperBound),
                "bounds": [.number(box.west), .number(box.south), .number(box.east), .number(box.north)],
                "center": [.number((box.west + box.east) / 2), .number((box.south + box.north) / 2), .int(min(11, zooms.upperBound))],
            ]
            return Responses.body(Array((document.text + "\n").utf8), type: "application/json")
        }
    }

    /// TileJSON's default bounds: the square world of Web Mercator.
    static let mercatorWorld = try! TileID(z: 0, x: 0, y: 0).bounds

    /// The tile a request names: `{z}`, `{x}`, and `{y}` or `{y}@2x` before `.png`.
    private func key(_ context: AppRequestContext, _ query: QueryParameters) throws -> TileCache.Key {
        func integer(_ name: String, _ text: Substring) throws(ValidationError) -> Int {
            guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int(text) else {
                throw ValidationError(field: name, "must be a whole number, got \"\(text.prefix(40))\"")
            }
            return value
        }
        let row = context.parameters.get("y") ?? ""
        let (rowText, scale): (Substring, Int) = row.hasSuffix("@2x") ? (row.dropLast(3), 2) : (row[...], 1)
        guard !rowText.contains("@") else {
            throw ValidationError(field: "y", "must be a row number, or one followed by @2x for a 512-px tile; got \"\(row.prefix(40))\"")
        }
        let tile = try cache.check(
            z: try integer("z", (context.parameters.get("z") ?? "")[...]), x: try integer("x", (context.parameters.get("x") ?? "")[...]),
            y: try integer("y", rowText), scale: scale)
        return TileCache.Key(tile: tile, scale: scale, filter: try query.clusterFilter(service))
    }

    private func response(_ tile: TileCache.Tile) -> Response {
        guard let png = tile.png else {
            return Response(status: .noContent, headers: [.cacheControl: cacheControl, .eTag: tile.tag])
        }
        return Response(
            status: .ok, headers: [.contentType: "image/png", .eTag: tile.tag, .cacheControl: cacheControl],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: png)))
    }
}
