import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// `serve --autodial-trunk` end to end: a supervisor starts a campaign over HTTP, the
/// server's dialer calls the number through baresip, sipp answers on loopback and the
/// test's socket hears the message; the call log, `/metrics` and the logs say so, and the
/// trunk's password is nowhere.
@Suite("Autodial in serve")
struct AutodialServeTests {
    static let password = "Trunk-pa55-zq"

    @Test("a campaign started over HTTP is called over SIP: answered, the message heard, logged and counted; the password in no log line")
    func campaignCalls() async throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "30", "--seed", "8", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        let added = try cli.run(
            ["user", "add", "--name", "Наглядач", "--email", "boss@example.org", "--phone", "067 000 00 02", "--role", "supervisor", "--db", "t.sqlite"],
            input: CLI.inspectorPassword + "\n")
        #expect(added.status == 0, "\(added.stderr)")
        let first = try #require(String(contentsOfFile: cli.path("r.geojsonl"), encoding: .utf8).split(separator: "\n").first)
        let properties = try #require((try cli.json(String(first))["properties"]) as? [String: Any])
        let number = try #require((properties["phones"] as? [String])?.first).filter(\.isNumber)

        // Every hour lawful, one channel: the call goes out at once.
        try Data("""
            {"time_zone": "Europe/Kyiv", "interval_minutes": 60, "hours": {"every_day": ["00:00", "24:00"]}, "max_concurrent_calls": 1,
             "ring_seconds": 10, "message": {"uk": "Увага! Реклама з вашим номером розміщена незаконно."}}
            """.utf8).write(to: URL(fileURLWithPath: cli.path("autodial.json")))
        try Data((Self.password + "\n").utf8).write(to: URL(fileURLWithPath: cli.path("sip-password")))
        let ear = try RTPEar()
        let peer = try SIPPeer("digest-answer.xml", keys: ["rtp_port": "\(ear.port)", "auth_user": "city", "auth_password": Self.password])
        let server = try await cli.serve(db: "t.sqlite", options: [
            "--autodial-trunk", peer.address, "--autodial-user", "city", "--autodial-password-file", "sip-password",
            "--autodial-rules", "autodial.json", "--autodial-listen", "127.0.0.1",
        ])
        defer { server.process.terminate() }

        let login = try JSONSerialization.data(withJSONObject: ["login": "boss@example.org", "password": CLI.inspectorPassword])
        let (tokens, _) = try await URLSession.shared.data(for: CrashTests.request(server.base, "/v1/auth/login", method: "POST", body: login))
        let token = try #require((try JSONSerialization.jsonObject(with: tokens) as? [String: Any])?["access_token"] as? String)
        func send(_ path: String, _ body: [String: Any]?) async throws -> (Int, [String: Any]) {
            let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
            let (answer, response) = try await URLSession.shared.data(for: CrashTests.request(server.base, path, method: body == nil ? "GET" : "POST", token: token, body: data))
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: answer) as? [String: Any]) ?? [:])
        }
        #expect(try await send("/v1/phones/\(number)/verification", ["outcome": "violator"]).0 == 200)
        #expect(try await send("/v1/phones/\(number)/autodial", ["note": "e2e"]).0 == 201)

        var calls: [[String: Any]] = []
        for _ in 0..<300 where calls.first?["outcome"] as? String != "answered" {
            try await Task.sleep(for: .milliseconds(100))
            calls = try await send("/v1/phones/\(number)/calls", nil).1["calls"] as? [[String: Any]] ?? []
        }
        #expect(calls.count == 1 && calls.first?["outcome"] as? String == "answered" && calls.first?["sip_code"] as? Int == 200, "\(calls)")
        #expect(await peer.status() == 0, "sipp challenged, was answered, then got the dialer's BYE")
        let samples = await ear.samples()
        let played = try #require(calls.first?["seconds_played"] as? Double)
        #expect(abs(Double(samples.count) / 8_000 - played) < 1 && RTPEar.rms(samples) > 50, "heard \(samples.count) samples; played \(played) s")

        let (page, _) = try await URLSession.shared.data(from: URL(string: server.base + "/metrics")!)
        let metrics = try MetricsTests.parse(String(decoding: page, as: UTF8.self))
        #expect(metrics[#"autodial_calls_total{outcome="answered"}"#] == 1 && metrics["autodial_calls_placed_total{}"] == 1)
        #expect(metrics[#"autodial_calls_total{outcome="busy"}"#] == 0)
        server.process.terminate()
        server.process.waitUntilExit()
        let log = try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8)
        #expect(log.contains("autodial: 1 channel(s)") && log.contains("outcome=answered"))
        #expect(!log.contains(Self.password), "the trunk's password in no log line")
    }
}
