import ChangeFeed
import ReportModel
import ReportService
import StorePorts
import Tiles
import Webhooks

/// What `GET /metrics` reads from the server's parts beside the request counters: the
/// group commit's batches, the tile cache, the cluster index, the store's gauges, the change
/// stream, the rate limits' refusals and the webhook outbox.
struct ServerMetricsSources {
    let service: ReportService
    let tiles: TileCache
    let hub: ChangeHub
    let limiter: RateLimiter
    let webhooks: WebhookService

    func attach(to metrics: ServerMetrics) {
        service.onBatch { metrics.batch($0) }
        metrics.read { [self] metrics in
            let cache = tiles.statistics
            metrics.gauge("tile_cache_tiles", cache.tiles)
            metrics.gauge("tile_cache_bytes", cache.bytes)
            metrics.total("tile_cache_hits_total", cache.hits)
            metrics.total("tile_cache_misses_total", cache.misses)
            metrics.gauge("cluster_index_reports", service.reportCount)
            for (name, value) in service.storeGauges.sorted(by: { $0.key < $1.key }) { metrics.gauge(name, value) }
            metrics.gauge("change_stream_subscribers", hub.subscriberCount)
            metrics.total("change_stream_cut_off_total", hub.cutOff.load(ordering: .relaxed))
            let refused = limiter.refused.withLock { $0 }
            for kind in Endpoint.RateClass.allCases {
                metrics.total("rate_limit_refusals_total", refused[kind] ?? 0, [("kind", kind.rawValue)])
            }
            if let backlog = try? await webhooks.backlog() { metrics.gauge("webhook_outbox_backlog", backlog) }
        }
    }
}
