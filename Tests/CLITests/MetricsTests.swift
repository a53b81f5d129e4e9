import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// `GET /metrics` read by Prometheus's own Python client, and `--log-format json`.
@Suite("Metrics and JSON logs")
struct MetricsTests {
    /// The samples of a Prometheus text page as PyPI's `prometheus-client` parses it:
    /// `name{label="value",…}` → value, labels sorted.
    static func parse(_ text: String) throws -> [String: Double] {
        let script = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            out = {}
            for family in text_string_to_metric_families(sys.stdin.read()):
                for s in family.samples:
                    labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
                    out[s.name + "{" + labels + "}"] = s.value
            print(json.dumps(out))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe.unshared(), output = Pipe.unshared(), errors = Pipe.unshared()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let problem = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: problem]) }
        return try JSONDecoder().decode([String: Double].self, from: data)
    }

    @Test("requests by route and status, writes and batches, the tile cache, the index, the outbox, subscribers and refusals; on a port of their own")
    func metrics() async throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "300", "--seed", "6", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        try cli.addInspector(db: "t.sqlite")
        let metricsPort = CLI.freePort()
        let server = try await cli.serve(db: "t.sqlite", options: ["--write-rate", "1", "--metrics-address", "127.0.0.1:\(metricsPort)", "--log-format", "json"])
        defer { server.process.terminate() }
        let token = try await CrashTests.signIn(server.base)
        for _ in 0..<3 { _ = try await URLSession.shared.data(from: URL(string: server.base + "/health")!) }
        _ = try await URLSession.shared.data(from: URL(string: server.base + "/v1/tiles/12/2394/1385.png")!)
        _ = try await URLSession.shared.data(from: URL(string: server.base + "/v1/tiles/12/2394/1385.png")!)
        // A burst of six at one write a second: 40 filings at once, on connections of their
        // own, so that they meet the limit together however slowly each is written (one
        // after another, a loaded machine took over a second a filing and never met it).
        let burst = 40
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = burst
        let session = URLSession(configuration: configuration)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<burst {
                group.addTask {
                    let (_, response) = try await session.data(for: CrashTests.request(server.base, "/v1/reports", method: "POST", token: token, body: CrashTests.report(n)))
                    return (response as? HTTPURLResponse)?.statusCode ?? 0
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let filed = statuses.filter { $0 == 201 }.count, refused = statuses.filter { $0 == 429 }.count
        #expect(filed >= 6 && refused >= 1 && filed + refused == burst, "\(statuses)")

        let (main, mainResponse) = try await URLSession.shared.data(from: URL(string: server.base + "/metrics")!)
        #expect((mainResponse as? HTTPURLResponse)?.statusCode == 404, "not beside the API when it has a port of its own: \(main.count)")
        let (page, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(metricsPort)/metrics")!)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let samples = try Self.parse(String(decoding: page, as: UTF8.self))
        // `serve` was asked for /health until it answered: at least the three here.
        #expect((samples[#"http_requests_total{method="GET",route="/health",status="200"}"#] ?? 0) >= 3)
        #expect(samples[#"http_requests_total{method="POST",route="/v1/reports",status="201"}"#] == Double(filed))
        #expect(samples[#"http_requests_total{method="POST",route="/v1/reports",status="429"}"#] == Double(refused))
        #expect(samples[#"http_request_duration_seconds_count{method="POST",route="/v1/reports"}"#] == Double(burst))
        #expect(samples[#"rate_limit_refusals_total{kind="write"}"#] == Double(refused) && samples[#"rate_limit_refusals_total{kind="login"}"#] == 0)
        #expect((samples["writes_total{}"] ?? 0) >= Double(filed) && (samples["group_commit_batch_size_count{}"] ?? 0) >= 1)
        #expect(samples["group_commit_batch_size_count{}"] == samples["group_commit_transactions_total{}"])
        #expect(samples["cluster_index_reports{}"] == Double(300 + filed))
        #expect(samples["tile_cache_misses_total{}"] == 1 && samples["tile_cache_hits_total{}"] == 1 && samples["tile_cache_tiles{}"] == 1)
        #expect(samples["change_stream_subscribers{}"] == 0 && samples["webhook_outbox_backlog{}"] == 0)
        #expect(samples["sqlite_heap_bytes{}"] == nil)  // counted only when asked: it costs a lock

        // The log: one JSON object a line, each request with its id, route, status, time and
        // caller; never the token.
        server.process.terminate()
        server.process.waitUntilExit()
        let lines = try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("{") }
        let records = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let requests = records.filter { $0["message"] as? String == "request" }
        #expect(requests.count >= 13)
        #expect(requests.allSatisfy { $0["request_id"] is String && $0["route"] is String && $0["status"] is Int && $0["duration_ms"] is Double })
        let filings = requests.filter { $0["route"] as? String == "/v1/reports" }
        #expect(filings.count == burst && filings.allSatisfy { $0["user_id"] as? Int != nil })
        #expect(!lines.contains { $0.contains(token) || $0.contains(CLI.inspectorPassword) })
    }
}
