import Accounts
import ChangeFeed
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReportModel
import ReportService
import SQLiteStore
import Generator
@testable import Server
import Testing
import TestSupport
import Webhooks

/// A server whose start could not use a saved index serves meanwhile: what needs the
/// index answers 503 with `Retry-After` (and `/health` says "starting"), the rest answers.
@Suite("Serving while the index is built")
struct StartingTests {
    @Test("while the index is built: clusters, tiles and counts 503 with Retry-After, /health 503 starting; a report, search and the districts answer; then 200s")
    func servesMeanwhile() async throws {
        var rng = SplitMix64(state: 91)
        let temporary = try TemporaryStore(
            inserting: (0..<3_000).map { _ in Drafts.make(Coordinate(longitude: 30.3 + 0.5 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit()), using: &rng) })
        let store = temporary.store
        // No saved index there: built in the background, held until the test opens the gate.
        let gate = Gate()
        let service = try await ReportService(storage: store, start: .saved(path: temporary.directory.path("none.index")), buildWaits: gate.wait)
        let backend = Backend(
            service: service, accounts: try await AccountService(storage: SQLiteAccounts(store), passwords: Passwords(cost: 4)),
            webhooks: WebhookService(storage: SQLiteWebhooks(store)), feed: ChangeFeed(storage: store))
        var configuration = ServerConfiguration()
        configuration.photosDirectory = temporary.directory.path("photos")
        let app = Application(responder: makeResponder(backend, configuration: configuration))
        try await app.test(.router) { client in
            let clusters = try await client.get("/v1/clusters?bbox=30.2,50.2,30.9,50.7&zoom=10")
            #expect(clusters.status == .serviceUnavailable && clusters.headers[.retryAfter] == "5", "\(clusters.bodyText)")
            #expect(clusters.error?["code"] as? String == "starting")
            let tile = try await client.get("/v1/tiles/10/598/345.png")
            #expect(tile.status == .serviceUnavailable)
            let health = try await client.get("/health")
            #expect(health.status == .serviceUnavailable && health.json["status"] as? String == "starting")
            #expect(try await client.get("/v1/reports/1").status == .ok)
            #expect(try await client.get("/v1/search?q=067&limit=3").status == .ok)
            #expect(try await client.get("/v1/districts").status == .ok)
            gate.open()
            try await eventually("the background build", every: .milliseconds(20)) { service.indexReady }
            #expect(try await client.get("/v1/clusters?bbox=30.2,50.2,30.9,50.7&zoom=10").status == .ok)
            #expect(try await client.get("/v1/tiles/10/598/345.png").status == .ok)
            let ready = try await client.get("/health")
            #expect(ready.status == .ok && ready.json["reports"] as? Int == 3_000)
        }
    }
}
