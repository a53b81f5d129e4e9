import Accounts
import ChangeFeed
import Clustering
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Photos
import ReportService
import ReportStore
import ServiceLifecycle
import Tiles
import Webhooks

/// How the server runs.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// The `Cache-Control` of read responses (errors are `no-store`).
    public var cacheControl = "public, max-age=0, must-revalidate"
    public var logLevel: Logger.Level = .info
    /// The URL clients reach the server at (e.g. `https://posterwatch.example` behind a TLS
    /// proxy), for absolute links; nil: `http://` and the request's `Host`.
    public var publicURL: String?
    /// The most memory the cache of encoded tiles may take, in bytes (0: no cache).
    public var tileCacheBytes = 64 << 20
    /// The `Cache-Control` of tiles. Writes invalidate the server's cache at once; a client
    /// that keeps a tile for `max-age` may show it that much out of date.
    public var tileCacheControl = "public, max-age=0, must-revalidate"
    /// A base-map tile URL template for the map page (`https://…/{z}/{x}/{y}.png`) and its
    /// attribution; nil: a neutral background, as the server assumes no internet.
    public var baseMapURL: String?
    public var baseMapAttribution: String?
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    public var leafletDirectory = "/usr/share/javascript/leaflet"
    /// Idle and header timeouts and the connection limit.
    public var limits = ConnectionLimits()
    /// How the change stream follows the database and keeps its subscribers.
    public var changes = ChangeStreamSettings()
    /// Where photos are stored (`serve` puts them beside the database, in `photos/`).
    public var photosDirectory = NSTemporaryDirectory() + "posterwatch-photos"
    /// Photo uploads taken at once; more are answered 503 with `Retry-After`.
    public var maxPhotoUploads = 16
    /// The origins (`https://host[:port]`) whose pages may write through the API from a
    /// browser, beside the server's own; reads are open to every origin.
    public var writeOrigins: Set<String> = []
    /// The calls of each kind a client may make (sign-ins, registrations, writes), and the
    /// proxies whose `X-Forwarded-For` names the client.
    public var rateLimits = RateLimits()
    /// What the server counts and times (`GET /metrics`); nil: nothing.
    public var metrics: ServerMetrics? = ServerMetrics()
    /// Whether `GET /metrics` is served beside the API; false when it has a listener of its
    /// own (``makeMetricsApplication(_:host:port:)``).
    public var metricsOnMainPort = true
    /// The text of `/v1/about` (`serve` reads `data/about.json`); nil: none.
    public var about: AboutText?
    /// How often the account events of other processes on the database (logouts, disabled
    /// accounts, role changes) are followed: what they end holds here within this much.
    public var accountFollowInterval: Duration = .milliseconds(250)
    /// How webhooks are sent; nil: this process sends none (another on the database may).
    public var webhooks: WebhookSettings? = WebhookSettings()

    public init(
        host: String = "127.0.0.1", port: Int = 8080, cacheControl: String = "public, max-age=0, must-revalidate",
        logLevel: Logger.Level = .info, publicURL: String? = nil
    ) {
        self.host = host
        self.port = port
        self.cacheControl = cacheControl
        self.logLevel = logLevel
        self.publicURL = publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }
}

/// The HTTP API over a ``ReportService``: routes, and the middleware every answer passes
/// through (request ids and access logs, CORS, JSON errors, methods, ETags and gzip).
///
/// Handlers are thin: they read checked parameters (``QueryParameters``), call the
/// service, and write GeoJSON or JSON. The request path for "clusters in this area" is
/// `ClusterRoutes.swift` → `ReportService.clusters` → `ClusterIndex`.
public func makeRouter(service: ReportService, accounts: AccountService, configuration: ServerConfiguration = ServerConfiguration()) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: AccessLogMiddleware(metrics: configuration.metrics))
    router.add(middleware: CommonHeadersMiddleware())
    router.add(middleware: CORSMiddleware(writeOrigins: configuration.writeOrigins.union(configuration.publicURL.flatMap(origin).map { [$0] } ?? [])))
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: MethodMiddleware())
    router.add(middleware: ReadResponseMiddleware(cacheControl: configuration.cacheControl))
    let limiter = RateLimiter(configuration.rateLimits)
    router.add(middleware: ClientMiddleware(limiter: limiter))
    router.add(middleware: AuthenticationMiddleware(accounts: accounts))
    // The one place the server holds the index itself: the tiles draw from it. They only
    // read; writes go through the service, whose observer below drops the tiles they touch.
    let tiles = TileCache(renderer: TileRenderer(index: service.index), byteLimit: configuration.tileCacheBytes, tag: { $0.withUnsafeBytes(ETag.of) })
    service.onWrite { touched in tiles.invalidate(touched) }
    service.onReplace { tiles.invalidateAll() }
    router.read(.health) { _, _, _ in
        let cache = tiles.statistics
        let body = #"{"status":"ok","reports":\#(service.reportCount),"tile_cache":{"tiles":\#(cache.tiles),"bytes":\#(cache.bytes),"#
            + #""hits":\#(cache.hits),"misses":\#(cache.misses),"evictions":\#(cache.evictions),"invalidations":\#(cache.invalidations)}}"#
        var response = Responses.body(Array(body.utf8), type: "application/json")
        response.headers[.cacheControl] = "no-store"
        return response
    }
    ClusterRoutes(service: service).register(on: router)
    TileRoutes(service: service, cache: tiles, cacheControl: configuration.tileCacheControl, publicURL: configuration.publicURL).register(on: router)
    MapRoutes(configuration: configuration, statusCodes: service.statusCodes, style: tiles.renderer.style).register(on: router)
    let views = ReportViews(service: service, accounts: accounts)
    ReportWriteRoutes(service: service, views: views).register(on: router)
    ReportRoutes(service: service).register(on: router, views: views)
    ExportRoutes(service: service).register(on: router)
    let hub = ChangeHub(
        feed: ChangeFeed(store: service.store), pollInterval: configuration.changes.pollInterval,
        batchWindow: configuration.changes.batchWindow, heartbeatInterval: configuration.changes.heartbeatInterval, queueLimit: configuration.changes.queueLimit,
        beforeStaffDelivery: { try? await accounts.followAccountEvents() })
    ChangeRoutes(hub: hub, accounts: accounts, unsentLimit: configuration.changes.unsentLimit).register(on: router)
    if configuration.changes.ringOnCommit { service.onWrite { _ in hub.nudge() } }
    NotificationRoutes(store: service.store).register(on: router)
    OGCRoutes(service: service, publicURL: configuration.publicURL).register(on: router)
    ReferenceRoutes(reference: service.reference).register(on: router)
    AccountRoutes(accounts: accounts).register(on: router)
    let webhooks = WebhookStore(service.store)
    WebhookRoutes(store: webhooks).register(on: router)
    PhoneRoutes(service: service).register(on: router)
    StatsRoutes(service: service).register(on: router)
    AboutRoutes(service: service, text: configuration.about).register(on: router)
    if let metrics = configuration.metrics {
        service.commits.onBatch { metrics.batch($0) }
        metrics.read { metrics in
            let cache = tiles.statistics
            metrics.gauge("tile_cache_tiles", cache.tiles)
            metrics.gauge("tile_cache_bytes", cache.bytes)
            metrics.total("tile_cache_hits_total", cache.hits)
            metrics.total("tile_cache_misses_total", cache.misses)
            metrics.gauge("cluster_index_reports", service.reportCount)
            if let bytes = ReportStore.sqliteHeapBytes { metrics.gauge("sqlite_heap_bytes", bytes) }
            metrics.gauge("change_stream_subscribers", hub.subscriberCount)
            metrics.total("change_stream_cut_off_total", hub.cutOff.load(ordering: .relaxed))
            let refused = limiter.refused.withLock { $0 }
            for kind in Endpoint.RateClass.allCases {
                metrics.total("rate_limit_refusals_total", refused[kind] ?? 0, [("kind", kind.rawValue)])
            }
            if let backlog = try? webhooks.backlog() { metrics.gauge("webhook_outbox_backlog", backlog) }
        }
        if configuration.metricsOnMainPort { router.get("/metrics") { _, _ in MetricsRoute.response(metrics) } }
    }
    if let files = try? PhotoFiles(root: URL(fileURLWithPath: configuration.photosDirectory)) {
        PhotoRoutes(service: service, files: files, maxInFlight: configuration.maxPhotoUploads).register(on: router)
    }
    return router
}

/// The origin (`scheme://host[:port]`) of a URL, as browsers send it in `Origin`.
func origin(_ url: String) -> String? {
    guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased() else { return nil }
    return scheme + "://" + host + (components.port.map { ":\($0)" } ?? "")
}

/// What answers requests: the router, behind the decoding of percent-encoded paths.
public func makeResponder(
    service: ReportService, accounts: AccountService, configuration: ServerConfiguration = ServerConfiguration()
) -> some HTTPResponder<AppRequestContext> {
    PathDecodingResponder(base: makeRouter(service: service, accounts: accounts, configuration: configuration).buildResponder())
}

/// The application `posterwatch serve` runs: HTTP/1.1 with the connection rules and
/// limits of `ConnectionGuard.swift`. It raises the process's descriptor limit first.
public func makeApplication(
    service: ReportService, accounts: AccountService, configuration: ServerConfiguration = ServerConfiguration()
) -> some ApplicationProtocol {
    var logger = Logger(label: "posterwatch")
    logger.logLevel = configuration.logLevel
    let maxConnections = configuration.limits.connectionCap(descriptorLimit: ConnectionLimits.raiseDescriptorLimit())
    let open = OpenConnections()
    var app = Application(
        responder: makeResponder(service: service, accounts: accounts, configuration: configuration),
        server: HTTPServerBuilder { responder in
            GuardedHTTP1Channel(responder: responder, limits: configuration.limits, maxConnections: maxConnections, open: open)
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "PosterWatch"),
        logger: logger)
    app.addServices(ChangeFollowing(service: service, interval: configuration.changes.followInterval))
    app.addServices(AccountFollowing(accounts: accounts, interval: configuration.accountFollowInterval))
    if let settings = configuration.webhooks {
        let dispatcher = WebhookDispatcher(store: service.store, settings: settings, logger: logger)
        service.onWrite { _ in dispatcher.nudge() }
        app.addServices(dispatcher)
    }
    return app
}

/// One log line per request, once it is answered: its method, the route it took (the
/// endpoint's template, `/v1/phones/{number}`: never the values in the path, which may
/// be a phone number), the names of its query parameters (never their values, nor a name
/// that is not a plain word: a client may paste a token anywhere in a URL), the status,
/// the time to answer and the caller's account. The request id is in every line.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let metrics: ServerMetrics?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var status = 500
        defer { log(request, context, status: status, took: ContinuousClock.now - started) }
        let response = try await next(request, context)
        status = response.status.code
        return response
    }

    private func log(_ request: Request, _ context: Context, status: Int, took: Duration) {
        let names = QueryParameters.pairs(request.uri.query ?? "").map { pair in
            pair.name.count <= 32 && pair.name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) ? pair.name : "…"
        }
        var metadata: Logger.Metadata = [
            "hb.request.method": .string(request.method.rawValue), "route": .string(context.endpointPath ?? "unmatched"),
            "hb.request.query": .string(names.joined(separator: ",")), "status": .stringConvertible(status),
            "duration_ms": .stringConvertible((took / .microseconds(1)).rounded() / 1_000),
        ]
        if let account = context.facts.accountID { metadata["user_id"] = .stringConvertible(account) }
        context.logger.info("request", metadata: metadata)
        metrics?.request(method: request.method.rawValue, route: context.endpointPath ?? "unmatched", status: status, took: took)
    }
}

/// What every answer carries: its request id (`hb.request.id` in the logs) as
/// `X-Request-Id`, and `X-Content-Type-Options: nosniff`, so that a browser never takes
/// an answer (an uploaded photo, a CSV export, an error) for another type than it says.
struct CommonHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.requestID] = context.id
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-Id")!
}

/// How `GET /v1/changes/stream` follows the changes table and keeps its subscribers.
public struct ChangeStreamSettings: Sendable {
    /// How often the table is read while anyone subscribes (so also how soon another
    /// process's writes reach subscribers).
    public var pollInterval: Duration = .milliseconds(20)
    /// The least time between two reads of the table: this process's commits are read at
    /// once, but each read writes to every subscriber's socket, so reads closer than this
    /// are merged.
    public var batchWindow: Duration = .milliseconds(5)
    /// Whether this process's commits ring the reader at once (false: they wait for the
    /// poll too). Off: with 1,000 subscribers the bench measured the ring slower at every
    /// batch window (BENCHMARKS.md, the change stream).
    public var ringOnCommit = false
    /// A comment line this often keeps quiet streams open through proxies.
    public var heartbeatInterval: Duration = .seconds(15)
    /// A subscriber this many reads of the table behind (each brings it one chunk) before
    /// its catch-up is written is disconnected.
    public var queueLimit = 1_024
    /// A subscriber whose connection holds more bytes than this that its client has not
    /// taken, beyond the kernel's buffers, is disconnected.
    public var unsentLimit = 1 << 20
    /// How often the cluster index and the tile cache catch up with other processes' writes.
    public var followInterval: Duration = .milliseconds(250)

    public init() {}
}

/// Applies the account events that other processes write (``AccountService/followAccountEvents()``)
/// until the server shuts down.
struct AccountFollowing: Service {
    let accounts: AccountService
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown { await accounts.followAccountEvents(every: interval) }
    }
}

/// Keeps the cluster index and the tile cache in step with the writes other processes
/// make to the database (``ReportService/catchUp()``), until the server shuts down.
struct ChangeFollowing: Service {
    let service: ReportService
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown { await service.followChanges(every: interval) }
    }
}
