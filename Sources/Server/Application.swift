import Accounts
import ChangeFeed
import Clustering
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import Photos
import ReportModel
import ReportService
import ServiceLifecycle
import Tiles
import Webhooks

/// The HTTP API over a ``ReportService``: routes, and the middleware every answer passes
/// through (request ids and access logs, CORS, JSON errors, methods, ETags and gzip).
///
/// Handlers are thin: they read checked parameters (``QueryParameters``), call the
/// service, and write GeoJSON or JSON. The request path for "clusters in this area" is
/// `ClusterRoutes.swift` → `ReportService.clusters` → `ClusterIndex`.
public func makeRouter(_ backend: Backend, configuration: ServerConfiguration = ServerConfiguration()) -> Router<AppRequestContext> {
    let (service, accounts, webhooks) = (backend.service, backend.accounts, backend.webhooks)
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
    // The tiles draw from the index, through a view that only reads; writes go through
    // the service, whose observer below drops the tiles they touch.
    let tiles = TileCache(renderer: TileRenderer(clusters: service.clusterView), byteLimit: configuration.tileCacheBytes, tag: { $0.withUnsafeBytes(ETag.of) })
    service.onWrite { touched in tiles.invalidate(touched) }
    service.onReplace { tiles.invalidateAll() }
    HealthRoute(service: service, tiles: tiles).register(on: router)
    ClusterRoutes(service: service).register(on: router)
    TileRoutes(service: service, cache: tiles, cacheControl: configuration.tileCacheControl, publicURL: configuration.publicURL).register(on: router)
    MapRoutes(configuration: configuration, statusCodes: service.statusCodes, style: tiles.renderer.style).register(on: router)
    let views = ReportViews(service: service, accounts: accounts)
    ReportWriteRoutes(service: service, views: views).register(on: router)
    ReportRoutes(service: service).register(on: router, views: views)
    ExportRoutes(service: service).register(on: router)
    let hub = ChangeHub(
        feed: backend.feed, pollInterval: configuration.changes.pollInterval,
        batchWindow: configuration.changes.batchWindow, heartbeatInterval: configuration.changes.heartbeatInterval, queueLimit: configuration.changes.queueLimit,
        beforeStaffDelivery: { try? await accounts.followAccountEvents() })
    ChangeRoutes(hub: hub, accounts: accounts, unsentLimit: configuration.changes.unsentLimit).register(on: router)
    if configuration.changes.ringOnCommit { service.onWrite { _ in hub.nudge() } }
    NotificationRoutes(service: service).register(on: router)
    OGCRoutes(service: service, publicURL: configuration.publicURL).register(on: router)
    ReferenceRoutes(reference: service.reference).register(on: router)
    AccountRoutes(accounts: accounts).register(on: router)
    WebhookRoutes(webhooks: webhooks).register(on: router)
    PhoneRoutes(service: service).register(on: router)
    AutodialRoutes(service: service).register(on: router)
    AssignmentRoutes(service: service, accounts: accounts, views: views).register(on: router)
    StatsRoutes(service: service).register(on: router)
    AboutRoutes(service: service, text: configuration.about).register(on: router)
    Open311Routes(
        service: service, accounts: accounts, publicURL: configuration.publicURL, contact: configuration.about?.en.contacts.first.map(Open311Routes.contact),
        updateScan: configuration.open311UpdateScan
    ).register(on: router)
    if let metrics = configuration.metrics {
        ServerMetricsSources(service: service, tiles: tiles, hub: hub, limiter: limiter, webhooks: webhooks).attach(to: metrics)
        if configuration.metricsOnMainPort { router.get("/metrics") { _, _ in await MetricsRoute.response(metrics) } }
    }
    if let files = configuration.photoStorage ?? (try? PhotoFiles(root: URL(fileURLWithPath: configuration.photosDirectory))) {
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
public func makeResponder(_ backend: Backend, configuration: ServerConfiguration = ServerConfiguration()) -> some HTTPResponder<AppRequestContext> {
    PathDecodingResponder(base: makeRouter(backend, configuration: configuration).buildResponder())
}

/// The application `posterwatch serve` runs: HTTP/1.1 with the connection rules and
/// limits of `ConnectionGuard.swift`. It raises the process's descriptor limit first.
public func makeApplication(_ backend: Backend, configuration: ServerConfiguration = ServerConfiguration()) -> some ApplicationProtocol {
    var logger = Logger(label: "posterwatch")
    logger.logLevel = configuration.logLevel
    let maxConnections = configuration.limits.connectionCap(descriptorLimit: ConnectionLimits.raiseDescriptorLimit())
    let open = OpenConnections()
    var app = Application(
        responder: makeResponder(backend, configuration: configuration),
        server: HTTPServerBuilder { responder in
            GuardedHTTP1Channel(responder: responder, limits: configuration.limits, maxConnections: maxConnections, open: open)
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "PosterWatch"),
        logger: logger)
    app.addServices(ChangeFollowing(service: backend.service, interval: configuration.changes.followInterval))
    app.addServices(AccountFollowing(accounts: backend.accounts, interval: configuration.accountFollowInterval))
    if let settings = configuration.webhooks {
        let dispatcher = WebhookDispatcher(storage: backend.webhooks.storage, feed: backend.feed, settings: settings, logger: logger)
        backend.service.onWrite { _ in dispatcher.nudge() }
        app.addServices(dispatcher)
    }
    return app
}
