import Foundation
import Logging
import ReportService
import StorePorts
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
    /// Whether the map page runs its self-tests that write (register an inspector, file,
    /// verify and block, assign) when a link asks (`?selftest=inspector`): for `make e2e`
    /// only, as anyone could otherwise send a link that makes its visitors' browsers write.
    public var pageSelfTests = false
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    public var leafletDirectory = "/usr/share/javascript/leaflet"
    /// Idle and header timeouts and the connection limit.
    public var limits = ConnectionLimits()
    /// How the change stream follows the database and keeps its subscribers.
    public var changes = ChangeStreamSettings()
    /// Where photos are stored (`serve` puts them beside the database, in `photos/`).
    public var photosDirectory = NSTemporaryDirectory() + "posterwatch-photos"
    /// Where photos are kept instead of ``photosDirectory``: the database's own store
    /// (PostgreSQL's), which every replica reads.
    public var photoStorage: (any PhotoStorage)?
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
    /// The most changes of the log one answer of Open311's `servicerequestupdates` reads
    /// (its page then ends early, with a `Link` to the next).
    public var open311UpdateScan = ReportService.statusUpdateScan

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
    /// How often, at most, the cluster index and the tile cache catch up with other
    /// processes' writes while they come (idle, they catch up at the next change).
    public var followInterval: Duration = .milliseconds(250)
    /// The same for replicas on PostgreSQL, which are told of each commit (LISTEN):
    /// catching up every 20 ms while writes come keeps them within a filing or two of each
    /// other, where SQLite's followers, which poll, catch up every 250 ms.
    public static let postgresFollowInterval = Duration.milliseconds(20)

    public init() {}
}
