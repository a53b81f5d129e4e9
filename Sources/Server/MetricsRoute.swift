import Hummingbird
import NIOCore

/// `GET /metrics`: the Prometheus text format, on the API's port or a listener of its own.
enum MetricsRoute {
    static func response(_ metrics: ServerMetrics) async -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: await metrics.scrape())))
    }
}

/// A listener for `GET /metrics` alone (`serve --metrics-address`), so that metrics can be
/// kept off the public port.
public func makeMetricsApplication(_ metrics: ServerMetrics, host: String, port: Int) -> some ApplicationProtocol {
    let router = Router()
    router.get("/metrics") { _, _ in await MetricsRoute.response(metrics) }
    return Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: "PosterWatch metrics"))
}
