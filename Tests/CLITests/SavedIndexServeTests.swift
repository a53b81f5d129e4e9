import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// `posterwatch serve` saving its index on a stop and reading it at the next start, as
/// systemd restarts it: the real binary over a real socket.
@Suite("The saved index across restarts")
struct SavedIndexServeTests {
    static func get(_ url: String) async throws -> (status: Int, body: Data) {
        let (body, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
    }

    /// Stops the server as systemd does and waits for it to exit.
    static func stop(_ process: Process) {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    @Test("a stop saves the index (owner-only); the next start reads it and answers as a start from the rows; after another process's write it is refused and the index built")
    func restarts() async throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "3000", "--seed", "12", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        let views = [
            "/v1/clusters?bbox=30.2,50.2,30.9,50.7&zoom=11", "/v1/clusters?bbox=30.45,50.40,30.55,50.47&zoom=15&datetime=2026-01-01T00:00:00Z/..",
            "/v1/clusters?bbox=30.2,50.2,30.9,50.7&zoom=13&status=new", "/v1/search?q=067&limit=5",
        ]

        let fromRows = try await cli.serve(db: "t.sqlite", options: ["--saved-index", "none"])
        var expected: [Data] = []
        for view in views { expected.append(try await Self.get(fromRows.base + view).body) }
        Self.stop(fromRows.process)
        #expect(!FileManager.default.fileExists(atPath: cli.path("t.sqlite.index")), "--saved-index none saves nothing")

        // No saved index yet: built in the background; the stop saves it once it is built.
        let first = try await cli.serve(db: "t.sqlite")
        try await eventually { (try? await Self.get(first.base + "/health").status) == 200 }
        Self.stop(first.process)
        #expect(first.process.terminationStatus == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: cli.path("t.sqlite.index"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8).contains("saved the index at change"))

        let second = try await cli.serve(db: "t.sqlite")
        #expect(try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8).contains("indexed 3,000 reports from the saved index"))
        for (view, body) in zip(views, expected) {
            let answer = try await Self.get(second.base + view)
            #expect(answer.status == 200 && answer.body == body, "\(view): \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
        Self.stop(second.process)

        // Another process writes: the saved index is older than the database now.
        #expect(try cli.run("generate", "--count", "200", "--seed", "13", "--out", "more.geojsonl").status == 0)
        // New reports, not the first file's again: their ids left to the database.
        let more = try String(contentsOfFile: cli.path("more.geojsonl"), encoding: .utf8).replacing(/"id":[0-9]+,/, with: "")
        try more.write(toFile: cli.path("more.geojsonl"), atomically: true, encoding: .utf8)
        let imported = try cli.run("import", "more.geojsonl", "--db", "t.sqlite")
        #expect(imported.status == 0, "\(imported.stderr)")
        let third = try await cli.serve(db: "t.sqlite")
        defer { Self.stop(third.process) }
        #expect(try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8).contains("the saved index was not used: it was saved at change"))
        try await eventually { (try? await Self.get(third.base + "/health").status) == 200 }
        let health = try JSONSerialization.jsonObject(with: try await Self.get(third.base + "/health").body) as? [String: Any]
        #expect(health?["reports"] as? Int == 3_200)
    }

    @Test(
        "a replica on PostgreSQL restarts from its saved index while another files: it reads the filings made meanwhile from the change log before its first answer; a new replica starts from the copy the first shared through the database; with --saved-index-catch-up 0 the same file is refused",
        .enabled(if: TestPostgresDatabase.clusterURL != nil))
    func replicaCatchesUp() async throws {
        let cli = try CLI()
        let database = try TestPostgresDatabase()
        #expect(try cli.run("generate", "--count", "300", "--seed", "14", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run(["import", "r.geojsonl", "--database", database.url], input: nil).status == 0)
        try cli.addInspector(db: database.url)
        let index = ["--saved-index", cli.path("replica.index")]
        let first = try await cli.serve(db: database.url, options: index)
        try await eventually { (try? await Self.get(first.base + "/health").status) == 200 }
        // Built from the rows (it had no file), then shared for new replicas.
        try await eventually { (try? String(contentsOfFile: cli.path("serve.log"), encoding: .utf8))?.contains("shared the index at change") == true }
        Self.stop(first.process)
        #expect(try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8).contains("saved the index at change"))

        let other = try await cli.serve(db: database.url)
        defer { Self.stop(other.process) }
        let token = try await CrashTests.signIn(other.base)
        _ = try await WebhookTests.file(other.base, token: token, from: 20, count: 5)

        let restarted = try await cli.serve(db: database.url, options: index)
        #expect(try await TwoProcessTests.counts(restarted.base) == (305, 305), "the first answers hold the other replica's filings")
        #expect(try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8).contains("indexed 305 reports from the saved index"))
        Self.stop(restarted.process)

        let fresh = try await cli.serve(db: database.url, options: ["--saved-index", cli.path("fresh.index")])
        #expect(try await TwoProcessTests.counts(fresh.base) == (305, 305), "the first answers hold the filings made since the copy")
        #expect(try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8).contains("indexed 305 reports from the database's copy of a saved index"))
        Self.stop(fresh.process)

        _ = try await WebhookTests.file(other.base, token: token, from: 30, count: 1)
        let exact = try await cli.serve(db: database.url, options: index + ["--saved-index-catch-up", "0"])
        defer { Self.stop(exact.process) }
        #expect(try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8).contains("the saved index was not used: it was saved at change"))
        try await eventually { (try? await TwoProcessTests.counts(exact.base)) ?? (0, 0) == (306, 306) }
    }
}
