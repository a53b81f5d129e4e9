import Accounts
import ArgumentParser
import Clustering
import Foundation
import struct Geometry.BoundingBox
import Logging
import ReportModel
import ReportService
import Server
import ServiceLifecycle
import Webhooks

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API (clusters, tiles, reports, search, reference data) and the map page over the database.",
        discussion: "The cluster index is read at start-up from the copy a clean stop saved (--saved-index) when it is still the database's state, else built from the rows in the background while the rest of the API answers; then it follows the changes table: writes by other processes on the database (posterwatch import, the CLI, a second server) show within a second, without a restart.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on.")
    var port = 8080

    @Option(help: ArgumentHelp("The Cache-Control header of read responses.", valueName: "value"))
    var cacheControl = "public, max-age=0, must-revalidate"

    @Option(help: ArgumentHelp("The URL clients reach the server at, for absolute links (e.g. behind a TLS proxy).", valueName: "url"))
    var publicURL: String?

    @Option(help: ArgumentHelp("The memory for cached tiles, in MiB (0: no cache).", valueName: "MiB"))
    var tileCacheMb = 64

    @Option(help: ArgumentHelp("The Cache-Control header of tiles.", valueName: "value"))
    var tileCacheControl = "public, max-age=0, must-revalidate"

    @Option(help: ArgumentHelp("A base-map tile URL for the map page, e.g. https://tile.example/{z}/{x}/{y}.png (default: a plain background).", valueName: "url"))
    var baseMapURL: String?

    @Option(help: ArgumentHelp("The base map's attribution, shown on the map page.", valueName: "text"))
    var baseMapAttribution: String?

    @Flag(help: "Let the map page run its self-tests that write (?selftest=inspector, supervisor, assignments) when a link asks: for make e2e only.")
    var pageSelfTests = false

    @Option(help: ArgumentHelp("Where Leaflet is installed (Debian's libjs-leaflet).", valueName: "path"))
    var leafletDir = "/usr/share/javascript/leaflet"

    @Option(help: ArgumentHelp("Where reports may be filed: west,south,east,north in degrees (default: the box of the districts with a margin of 0.25°).", valueName: "bbox"))
    var area: String?

    @Option(help: ArgumentHelp("Open reports this close to a new one are hinted as possible duplicates, in metres.", valueName: "metres"))
    var duplicateRadius = 50.0

    @Option(help: ArgumentHelp("Close a connection with no request under way after this many seconds.", valueName: "seconds"))
    var idleTimeout = 60

    @Option(help: ArgumentHelp("Answer 408 and close when a request's head is not complete this many seconds after its first byte.", valueName: "seconds"))
    var headerTimeout = 10

    @Option(help: ArgumentHelp("Refuse connections past this many with a 503 (lowered to half the descriptor limit if need be).", valueName: "count"))
    var maxConnections = 4_096

    @Option(help: ArgumentHelp("Writes a second one client may make, after a burst of six seconds' worth (0: no limit).", valueName: "count"))
    var writeRate = 50

    @Option(help: ArgumentHelp("Sign-ins a minute one client may make, after a burst of as many (0: no limit; token refreshes have a limit of their own).", valueName: "count"))
    var loginRate = 20

    @Option(help: ArgumentHelp("Registrations an hour one client may make, after a burst of a sixth as many (0: no limit).", valueName: "count"))
    var registrationRate = 60

    @Option(help: ArgumentHelp("A reverse proxy whose X-Forwarded-For names the client (repeat for several); from any other peer the header is ignored.", valueName: "address"))
    var trustedProxy: [String] = []

    @Option(help: ArgumentHelp("An origin (https://host[:port]) whose pages may write through the API from a browser, beside this server's own page (repeat for several); reads are open to every origin.", valueName: "origin"))
    var corsOrigin: [String] = []

    @Option(help: ArgumentHelp("Forget changes (GET /v1/changes) older than this many days (default: keep every one).", valueName: "days"))
    var changesRetentionDays: Int?

    @Flag(inversion: .prefixedNo, help: "Send webhooks from this process (one of several on a database may be enough).")
    var webhookDispatch = true

    @Option(help: ArgumentHelp("How long a webhook attempt may take, in seconds; one in flight when the process dies is sent again this much and 5 s later.", valueName: "seconds"))
    var webhookTimeout = 10.0

    @Option(help: ArgumentHelp("The wait before a failed webhook's first retry, in seconds; it doubles with each failure up to 24 h.", valueName: "seconds"))
    var webhookFirstRetry = 5.0

    @Option(help: ArgumentHelp("Where photos are stored (default: photos/ beside the database).", valueName: "dir"))
    var photos: String?

    @Option(help: ArgumentHelp("How many uploaded photos are decoded and encoded at once (default: one less than the cores, at least 1); the rest wait their turn.", valueName: "n"))
    var photoWorkers: Int?

    @Option(help: ArgumentHelp("The text of GET /v1/about: what the service is for, its legal basis and contacts, in Ukrainian and English.", valueName: "path"))
    var about = "data/about.json"

    @Option(help: ArgumentHelp("Serve GET /metrics on this address (host:port) alone instead of beside the API.", valueName: "host:port"))
    var metricsAddress: String?

    enum LogFormat: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(help: ArgumentHelp("How log lines are written to standard error: text, or json (one object a line, for log collectors).", valueName: "format"))
    var logFormat = LogFormat.text

    @Option(help: ArgumentHelp("On SIGTERM or SIGINT, how long requests in flight may take to finish before they are cut off.", valueName: "seconds"))
    var shutdownTimeout = 30

    @Option(help: ArgumentHelp("Where the cluster index and tally are saved on a clean stop, and read at start when still current (default: beside a SQLite database, its name + .index; none for PostgreSQL). \"none\": build them from the rows at every start.", valueName: "path"))
    var savedIndex: String?

    @Option(help: ArgumentHelp("How many changes behind the database the saved index may be and still be read, the changes since then read from the change log before serving (default: 50000 on PostgreSQL, where the other replicas write while one restarts; 0 on SQLite: only an index saved at the last change).", valueName: "changes"))
    var savedIndexCatchUp: Int64?

    @Option(help: ArgumentHelp("How many public report rows to keep in memory for searches and the map's single markers, dropped as writes change them (default: 100000 on PostgreSQL, where each read is a round trip; 0 on SQLite, which reads them in the process).", valueName: "rows"))
    var rowCache: Int?

    @OptionGroup var store: StoreOptions

    @OptionGroup(title: "Autodial") var autodial: AutodialOptions

    func validate() throws {
        if let metricsAddress, Self.hostAndPort(metricsAddress) == nil {
            throw ValidationError("--metrics-address must be host:port, e.g. 127.0.0.1:9100, got \(metricsAddress).")
        }
        _ = try autodial.trunk()
        guard (1...3_600).contains(shutdownTimeout) else { throw ValidationError("--shutdown-timeout must be from 1 to 3600 seconds, got \(shutdownTimeout).") }
        guard (1...86_400).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be from 1 to 86400 seconds, got \(idleTimeout).") }
        guard (1...3_600).contains(headerTimeout) else { throw ValidationError("--header-timeout must be from 1 to 3600 seconds, got \(headerTimeout).") }
        guard (1...1_000_000).contains(maxConnections) else { throw ValidationError("--max-connections must be from 1 to 1000000, got \(maxConnections).") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, got \(port).") }
        guard (1...1_000).contains(duplicateRadius) else { throw ValidationError("--duplicate-radius must be from 1 to 1000 metres, got \(duplicateRadius).") }
        if let area {
            do { _ = try BoundingBox(parsing: area) } catch { throw ValidationError("--area: \(error.message)") }
        }
        if let days = changesRetentionDays, !(1...36_500).contains(days) {
            throw ValidationError("--changes-retention-days must be from 1 to 36500, got \(days).")
        }
        guard (0.1...300).contains(webhookTimeout) else { throw ValidationError("--webhook-timeout must be from 0.1 to 300 seconds, got \(webhookTimeout).") }
        guard (0.01...3_600).contains(webhookFirstRetry) else { throw ValidationError("--webhook-first-retry must be from 0.01 to 3600 seconds, got \(webhookFirstRetry).") }
        guard (0...1_000_000).contains(writeRate) else { throw ValidationError("--write-rate must be from 0 to 1000000 a second, got \(writeRate).") }
        guard (0...1_000_000).contains(loginRate) else { throw ValidationError("--login-rate must be from 0 to 1000000 a minute, got \(loginRate).") }
        guard (0...1_000_000).contains(registrationRate) else { throw ValidationError("--registration-rate must be from 0 to 1000000 an hour, got \(registrationRate).") }
        for address in trustedProxy where !RateLimits.isAddress(address) {
            throw ValidationError("--trusted-proxy must be an IPv4 or IPv6 address, got \(address).")
        }
        for origin in corsOrigin where !RateLimits.isOrigin(origin) {
            throw ValidationError("--cors-origin must be scheme://host[:port] with no path, e.g. https://map.example.org, got \(origin).")
        }
        if let savedIndexCatchUp, !(0...Self.catchUpBound).contains(savedIndexCatchUp) {
            throw ValidationError("--saved-index-catch-up must be from 0 to \(Self.catchUpBound) changes, got \(savedIndexCatchUp).")
        }
        if let rowCache, !(0...10_000_000).contains(rowCache) {
            throw ValidationError("--row-cache must be from 0 to 10000000 rows, got \(rowCache).")
        }
        guard (0...65_536).contains(tileCacheMb) else { throw ValidationError("--tile-cache-mb must be from 0 to 65536, got \(tileCacheMb).") }
    }

    /// The most changes a start may read to bring a saved index up to date: beyond some
    /// millions, building from the rows is the quicker.
    static let catchUpBound: Int64 = 10_000_000

    /// How far behind the database a saved index may be (see --saved-index-catch-up).
    var catchUp: Int64 {
        get throws { try given(savedIndexCatchUp, else: (postgres: 50_000, sqlite: 0)) }
    }

    /// How many rows the service keeps (see --row-cache).
    var rowCacheSize: Int {
        get throws { try given(rowCache, else: (postgres: 100_000, sqlite: 0)) }
    }

    /// An option as given, or else its default for the store opened.
    private func given<T>(_ option: T?, else defaults: (postgres: T, sqlite: T)) throws -> T {
        if let option { return option }
        if case .postgres = try store.location { return defaults.postgres }
        return defaults.sqlite
    }

    /// Where the index is saved, if anywhere.
    var savedIndexPath: String? {
        get throws {
            if let savedIndex { return savedIndex == "none" ? nil : savedIndex }
            if case .sqlite(let path) = try store.location { return path + ".index" }
            return nil
        }
    }

    /// Saves the index for the next start, and returns the change saved at; a failure is
    /// said, and the stop goes on.
    private func save(_ service: ReportService, to path: String) async -> Int64? {
        let started = Date()
        do {
            if let change = try await service.saveIndex(to: path) {
                Console.error("saved the index at change \(change) to \(path) in \(Format.seconds(Date().timeIntervalSince(started)))")
                return change
            } else {
                Console.error("the index was not saved: it was still being built, or other processes kept writing")
            }
        } catch {
            Console.error("the index was not saved to \(path): \(loggable(error))")
        }
        return nil
    }

    /// How often a replica on PostgreSQL looks whether the database's copy of a saved index
    /// has fallen behind (see ``share(_:from:saved:)``).
    static let sharingInterval: Duration = .seconds(600)

    /// Replaces the database's copy of a saved index with this replica's when the copy is
    /// missing or more than half of --saved-index-catch-up behind (a new replica catches up
    /// from it); a failure is said, and the server goes on.
    private func share(_ service: ReportService, from path: String, saved: Int64? = nil) async {
        let started = Date()
        do {
            if let change = try await service.shareIndex(from: path, unlessWithin: try catchUp / 2, saved: saved) {
                Console.error("shared the index at change \(change) with new replicas, through the database, in \(Format.seconds(Date().timeIntervalSince(started)))")
            }
        } catch {
            Console.error("the index was not shared through the database: \(loggable(error))")
        }
    }

    static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port), colon > text.startIndex else { return nil }
        return (String(text[..<colon]), port)
    }

    var rateLimits: RateLimits {
        var limits = RateLimits()
        limits.writes = writeRate == 0 ? .unlimited : .init(burst: Double(writeRate * 6), perSecond: Double(writeRate))
        limits.logins = loginRate == 0 ? .unlimited : .init(burst: Double(loginRate), perSecond: Double(loginRate) / 60)
        limits.registrations = registrationRate == 0 ? .unlimited : .init(burst: max(1, Double(registrationRate) / 6), perSecond: Double(registrationRate) / 3_600)
        limits.trustedProxies = Set(trustedProxy)
        return limits
    }

    func run() async throws {
        MallocSettings.apply()
        if logFormat == .json { LoggingSystem.bootstrap(JSONLogHandler.init) }
        let started = Date()
        let (stores, databasePhotos) = try await store.open()
        var intake = IntakeSettings(reference: stores.reports.reference)
        if let area { intake.area = try BoundingBox(parsing: area) }
        intake.duplicateRadius = duplicateRadius
        if let photoWorkers, photoWorkers < 1 { throw ValidationError("--photo-workers must be at least 1") }
        let savedIndexPath = try self.savedIndexPath
        let backend = try await Backend.open(stores, intake: intake, photoWorkers: photoWorkers, rowCacheSize: try rowCacheSize, start: try savedIndexPath.map { .saved(path: $0, catchUp: try catchUp) } ?? .build)
        let service = backend.service
        if let note = service.indexStartNote {
            Console.error("\(note); building the index from \(store.name) in the background, serving meanwhile: http://\(host):\(port)/")
        } else {
            let source = savedIndexPath == nil ? store.name : service.startedFromSharedIndex ? "the database's copy of a saved index" : "the saved index"
            Console.error(
                "indexed \(Format.count(service.reportCount)) reports from \(source) in \(Format.seconds(Date().timeIntervalSince(started))); serving http://\(host):\(port)/")
        }
        var configuration = ServerConfiguration(host: host, port: port, cacheControl: cacheControl, publicURL: publicURL)
        configuration.tileCacheBytes = tileCacheMb << 20
        configuration.tileCacheControl = tileCacheControl
        configuration.baseMapURL = baseMapURL
        configuration.baseMapAttribution = baseMapAttribution
        configuration.leafletDirectory = leafletDir
        configuration.pageSelfTests = pageSelfTests
        configuration.photosDirectory = photos ?? PhotosCommand.directory(beside: store.db)
        // PostgreSQL keeps the photos itself unless a directory every replica shares is named.
        if photos == nil { configuration.photoStorage = databasePhotos }
        if case .postgres = try store.location { configuration.changes.followInterval = ChangeStreamSettings.postgresFollowInterval }
        if FileManager.default.fileExists(atPath: about) {
            configuration.about = try AboutText.load(about)
        } else {
            Console.error("\(about) is missing: GET /v1/about answers without its text (serve --about names another file)")
        }
        configuration.limits.idleTimeout = .seconds(idleTimeout)
        configuration.limits.headerTimeout = .seconds(headerTimeout)
        configuration.limits.maxConnections = maxConnections
        configuration.rateLimits = rateLimits
        configuration.metricsOnMainPort = metricsAddress == nil
        configuration.writeOrigins = Set(corsOrigin)
        if webhookDispatch {
            var webhooks = WebhookSettings()
            webhooks.requestTimeout = .milliseconds(Int64(webhookTimeout * 1000))
            webhooks.retries.first = .milliseconds(Int64(webhookFirstRetry * 1000))
            configuration.webhooks = webhooks
        } else {
            configuration.webhooks = nil
        }
        let app = makeApplication(backend, configuration: configuration)
        // Idempotency keys are kept 48 hours (the IETF draft asks at least 24), changes as
        // long as asked: forgotten at start and every hour after.
        let retention = changesRetentionDays.map { TimeInterval($0) * 86_400 }
        let forgetting = Task {
            while !Task.isCancelled {
                _ = try? await service.forgetOldIdempotencyKeys()
                if let retention { _ = try? await service.forgetChanges(before: Date().addingTimeInterval(-retention)) }
                try? await Task.sleep(for: .seconds(3600))
            }
        }
        defer { forgetting.cancel() }
        // A replica shares its index once built, then whenever the copy has fallen behind
        // (not with --saved-index-catch-up 0: no new replica could read a copy then).
        let sharesIndex = try service.sharesIndex && catchUp > 0
        let sharing = Task {
            guard let savedIndexPath, sharesIndex else { return }
            while !Task.isCancelled, !service.indexReady { try? await Task.sleep(for: .seconds(1)) }
            while !Task.isCancelled {
                await share(service, from: savedIndexPath)
                try? await Task.sleep(for: Self.sharingInterval)
            }
        }
        defer { sharing.cancel() }
        // SIGTERM (systemd, make run's Ctrl-C as SIGINT): no new connections, the requests
        // in flight finished within --shutdown-timeout, webhook attempts in flight settled
        // and recorded (the others stay in the outbox), then the log folded into the file.
        var services: [any Service] = [app]
        if let dialer = try autodial.dialer(service: service, metrics: configuration.metrics, logger: app.logger) { services.append(dialer) }
        if let metrics = configuration.metrics, let (host, port) = metricsAddress.flatMap(Self.hostAndPort) {
            services.append(makeMetricsApplication(metrics, host: host, port: port))
        }
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger)
        group.maximumGracefulShutdownDuration = .seconds(shutdownTimeout)
        try await ServiceGroup(configuration: group).run()
        // Not two saves at once to one file.
        sharing.cancel()
        await sharing.value
        if let savedIndexPath, let change = await save(service, to: savedIndexPath), sharesIndex {
            await share(service, from: savedIndexPath, saved: change)
        }
        if try await service.shutDown() {
            Console.error("stopped: every request answered, the database checkpointed")
        } else {
            Console.error("stopped: every request answered; a reader kept the write-ahead log, which holds what the database file lacks")
        }
    }
}
