import ArgumentParser
import Clustering
import Foundation
import ReportService
import ReportStore
import Server

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API (clusters, reports, search, reference data) over the database.",
        discussion: "The cluster index is built from the database at start-up. Restart the server after writing to its database by other means (e.g. posterwatch import).")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on.")
    var port = 8080

    @Option(help: ArgumentHelp("The Cache-Control header of read responses.", valueName: "value"))
    var cacheControl = "public, max-age=0, must-revalidate"

    @Option(help: ArgumentHelp("The URL clients reach the server at, for absolute links (e.g. behind a TLS proxy).", valueName: "url"))
    var publicURL: String?

    @OptionGroup var store: StoreOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535, got \(port).") }
    }

    func run() async throws {
        let started = Date()
        let service = try ReportService(store: ReportStore(path: store.db))
        Console.error("indexed \(Format.count(service.index.count)) reports from \(store.db) in \(Format.seconds(Date().timeIntervalSince(started))); serving http://\(host):\(port)/")
        let app = makeApplication(service: service, configuration: ServerConfiguration(host: host, port: port, cacheControl: cacheControl, publicURL: publicURL))
        try await app.runService()
    }
}
