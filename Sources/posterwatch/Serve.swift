import ArgumentParser
import Clustering
import Foundation
import ReportService
import ReportStore
import Server

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API (clusters, tiles, reports, search, reference data) and the map page over the database.",
        discussion: "The cluster index is built from the database at start-up. Restart the server after writing to its database by other means (e.g. posterwatch import).")

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

    @Option(help: ArgumentHelp("Where Leaflet is installed (Debian's libjs-leaflet).", valueName: "path"))
    var leafletDir = "/usr/share/javascript/leaflet"

    @OptionGroup var store: StoreOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, got \(port).") }
        guard (0...65_536).contains(tileCacheMb) else { throw ValidationError("--tile-cache-mb must be from 0 to 65536, got \(tileCacheMb).") }
    }

    func run() async throws {
        let started = Date()
        let service = try ReportService(store: ReportStore(path: store.db))
        Console.error("indexed \(Format.count(service.index.count)) reports from \(store.db) in \(Format.seconds(Date().timeIntervalSince(started))); serving http://\(host):\(port)/")
        var configuration = ServerConfiguration(host: host, port: port, cacheControl: cacheControl, publicURL: publicURL)
        configuration.tileCacheBytes = tileCacheMb << 20
        configuration.tileCacheControl = tileCacheControl
        configuration.baseMapURL = baseMapURL
        configuration.baseMapAttribution = baseMapAttribution
        configuration.leafletDirectory = leafletDir
        let app = makeApplication(service: service, configuration: configuration)
        try await app.runService()
    }
}
