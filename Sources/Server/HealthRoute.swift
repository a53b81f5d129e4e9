import Hummingbird
import ReportService
import Tiles

/// `GET /health`: that the server answers, how many reports it serves, and what its tile
/// cache holds (for monitoring, load balancers and the soak test). While a start builds
/// the index in the background it answers 503 with `"status": "starting"`: a load
/// balancer sends the map's requests to a replica that can answer them.
struct HealthRoute {
    let service: ReportService
    let tiles: TileCache

    struct Health: Encodable {
        struct TileCacheFigures: Encodable {
            var tiles, bytes, hits, misses, evictions, invalidations: Int
        }
        var status: String
        var reports: Int
        var tileCache: TileCacheFigures

        enum CodingKeys: String, CodingKey { case status, reports, tileCache = "tile_cache" }
    }

    func register(on router: Router<AppRequestContext>) {
        router.read(.health) { [service, tiles] _, _, _ in
            let cache = tiles.statistics
            let ready = service.indexReady
            var response = try Responses.json(Health(
                status: ready ? "ok" : "starting", reports: service.reportCount,
                tileCache: .init(
                    tiles: cache.tiles, bytes: cache.bytes, hits: cache.hits, misses: cache.misses, evictions: cache.evictions,
                    invalidations: cache.invalidations)))
            response.headers[.cacheControl] = "no-store"
            if !ready { response.status = .serviceUnavailable }
            return response
        }
    }
}
