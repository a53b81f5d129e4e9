import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// Several processes on one database: what one writes, a running server shows without a
/// restart (its index and tiles follow the changes table).
@Suite("Two processes, one database", .serialized)
struct TwoProcessTests {
    /// The reports `/health` and the world's clusters at zoom 0 count on `base`.
    static func counts(_ base: String) async throws -> (health: Int, clusters: Int) {
        let (health, _) = try await URLSession.shared.data(from: URL(string: base + "/health")!)
        let reports = (try JSONSerialization.jsonObject(with: health) as? [String: Any])?["reports"] as? Int ?? -1
        let (page, _) = try await URLSession.shared.data(from: URL(string: base + "/v1/clusters?bbox=-180,-85,180,85&zoom=0")!)
        let features = (try JSONSerialization.jsonObject(with: page) as? [String: Any])?["features"] as? [[String: Any]] ?? []
        let clustered = features.map { $0["properties"] as! [String: Any] }.reduce(0) { $0 + ($1["cluster"] as? Bool == true ? $1["count"] as! Int : 1) }
        return (reports, clustered)
    }

    @Test("an import into a served database, and a filing through a second server, show in /health and /v1/clusters without a restart")
    func importWhileServing() async throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "300", "--seed", "5", "--out", "r.geojsonl").status == 0)
        try cli.addInspector(db: "s.sqlite")
        let server = try await cli.serve(db: "s.sqlite")
        defer { server.process.terminate() }
        #expect(try await Self.counts(server.base) == (0, 0))

        let imported = try cli.run("import", "r.geojsonl", "--db", "s.sqlite")
        #expect(imported.status == 0, "\(imported.stderr)")
        try await CLI.eventually { (try? await Self.counts(server.base)) ?? (0, 0) == (300, 300) }
        #expect(try await Self.counts(server.base) == (300, 300))

        let second = try await cli.serve(db: "s.sqlite")
        defer { second.process.terminate() }
        let token = try await CrashTests.signIn(second.base)
        _ = try await WebhookTests.file(second.base, token: token, from: 7, count: 1)
        try await CLI.eventually { (try? await Self.counts(server.base)) ?? (0, 0) == (301, 301) }
        #expect(try await Self.counts(server.base) == (301, 301), "the first server shows the second's filing")
    }
}
