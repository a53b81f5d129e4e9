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

    /// A database of 30 reports with a supervisor, and the first report's number.
    static func city(_ cli: CLI) throws -> String {
        #expect(try cli.run("generate", "--count", "30", "--seed", "8", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        let added = try cli.run(
            ["user", "add", "--name", "Наглядач", "--email", "boss@example.org", "--phone", "067 000 00 02", "--role", "supervisor", "--db", "t.sqlite"],
            input: CLI.inspectorPassword + "\n")
        #expect(added.status == 0, "\(added.stderr)")
        let first = try #require(String(contentsOfFile: cli.path("r.geojsonl"), encoding: .utf8).split(separator: "\n").first)
        let properties = try #require((try cli.json(String(first))["properties"]) as? [String: Any])
        return try #require((properties["phones"] as? [String])?.first).filter(\.isNumber)
    }

    /// The supervisor's requests to a server: (status, JSON object).
    struct Supervisor {
        let base: String
        let token: String

        init(_ base: String) async throws {
            self.base = base
            let login = try JSONSerialization.data(withJSONObject: ["login": "boss@example.org", "password": CLI.inspectorPassword])
            let (tokens, _) = try await URLSession.shared.data(for: CrashTests.request(base, "/v1/auth/login", method: "POST", body: login))
            token = try #require((try JSONSerialization.jsonObject(with: tokens) as? [String: Any])?["access_token"] as? String)
        }

        func send(_ path: String, _ body: [String: Any]?) async throws -> (Int, [String: Any]) {
            let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
            let (answer, response) = try await URLSession.shared.data(for: CrashTests.request(base, path, method: body == nil ? "GET" : "POST", token: token, body: data))
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: answer) as? [String: Any]) ?? [:])
        }

        func calls(_ number: String) async throws -> [[String: Any]] {
            try await send("/v1/phones/\(number)/calls", nil).1["calls"] as? [[String: Any]] ?? []
        }
    }

    @Test("a campaign started over HTTP is called over SIP: answered, the message heard, logged and counted; the password in no log line")
    func campaignCalls() async throws {
        let cli = try CLI()
        let number = try Self.city(cli)

        // Every hour lawful, one channel: the call goes out at once.
        try Data("""
            {"time_zone": "Europe/Kyiv", "interval_minutes": 60, "hours": {"every_day": ["00:00", "24:00"]}, "max_concurrent_calls": 1,
             "ring_seconds": 10, "message": {"uk": "Увага! Реклама з вашим номером розміщена незаконно."}}
            """.utf8).write(to: URL(fileURLWithPath: cli.path("autodial.json")))
        try Data((Self.password + "\n").utf8).write(to: URL(fileURLWithPath: cli.path("sip-password")))
        let ear = try RTPEar()
        let peer = try await SIPPeer("digest-answer.xml", keys: ["rtp_port": "\(ear.port)", "auth_user": "city", "auth_password": Self.password])
        let server = try await cli.serve(db: "t.sqlite", options: [
            "--autodial-trunk", peer.address, "--autodial-user", "city", "--autodial-password-file", "sip-password",
            "--autodial-rules", "autodial.json", "--autodial-listen", "127.0.0.1",
        ])
        defer { server.process.terminate() }

        let boss = try await Supervisor(server.base)
        #expect(try await boss.send("/v1/phones/\(number)/verification", ["outcome": "violator"]).0 == 200)
        #expect(try await boss.send("/v1/phones/\(number)/autodial", ["note": "e2e"]).0 == 201)

        var calls: [[String: Any]] = []
        try await eventually("the call to be answered") {
            calls = try await boss.calls(number)
            return calls.first?["outcome"] as? String == "answered"
        }
        #expect(calls.count == 1 && calls.first?["outcome"] as? String == "answered" && calls.first?["sip_code"] as? Int == 200, "\(calls)")
        #expect(await peer.status() == 0, "sipp challenged, was answered, then got the dialer's BYE")
        let samples = await ear.samples()
        let played = try #require(calls.first?["seconds_played"] as? Double)
        // The dialer's seconds played run between two events read from baresip's socket, which
        // a busy machine delivers late, so they may fall short of what was sent, never above:
        // all of them were heard, and more than half a second of sound.
        let heard = Double(samples.count) / 8_000
        #expect(heard + 1 > played && heard > 0.5 && RTPEar.rms(samples) > 50, "heard \(samples.count) samples; played \(played) s")

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

    @Test("serve killed (SIGKILL) mid-call and started again: the lost call is never placed again; it holds its channel until its lease ends, then is interrupted, and the next call follows")
    func killedMidCall() async throws {
        let cli = try CLI()
        let number = try Self.city(cli)
        // One channel; a call may ring 10 s (time to see it and kill the server while it
        // rings, on a busy machine) with a message of at most 3 s: a claim holds 43 s.
        let options = { (peer: SIPPeer) in
            ["--autodial-trunk", peer.address, "--autodial-rules", "autodial.json", "--autodial-listen", "127.0.0.1"]
        }
        let ringing = try await SIPPeer("no-answer.xml")
        let (server, calls0) = try await Self.ringing(cli, number, intervalMinutes: 0.25, ringSeconds: 10, options: options(ringing))
        var calls = calls0
        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()
        ringing.stop()
        #expect(calls.count == 1 && calls.first?["outcome"] as? String == "placing", "killed while ringing: \(calls)")

        let busy = try await SIPPeer("busy.xml")
        let again = try await cli.serve(db: "t.sqlite", options: options(busy))
        defer { again.process.terminate() }
        let boss2 = try await Supervisor(again.base)
        try await eventually("a second call, ended") {
            calls = try await boss2.calls(number)
            return calls.count >= 2 && calls.first?["outcome"] as? String != "placing"
        }
        #expect(calls.map { $0["outcome"] as? String } == ["busy", "interrupted"], "\(calls)")
        let placed = calls.compactMap { ($0["placed_at"] as? String).flatMap { try? Date($0, strategy: .iso8601) } }
        #expect(placed.count == 2 && placed[0].timeIntervalSince(placed[1]) >= 43, "the lost call held the one channel for its lease: \(placed)")
        #expect(calls.last?["reason"] as? String == "the dialer stopped before the call ended")
        #expect(await busy.status() == 0)
        let (page, _) = try await URLSession.shared.data(from: URL(string: again.base + "/metrics")!)
        let metrics = try MetricsTests.parse(String(decoding: page, as: UTF8.self))
        #expect(metrics[#"autodial_calls_total{outcome="interrupted"}"#] == 1 && metrics[#"autodial_calls_total{outcome="busy"}"#] == 1, "the lapsed call counted by the server that marked it")
        // Stopped, the server stops its baresips too.
        let pid = again.process.processIdentifier
        again.process.terminate()
        again.process.waitUntilExit()
        try await eventually("the server's baresips to exit") { try Self.baresips(of: pid).isEmpty }
    }

    @Test("serve stopped (SIGTERM) mid-call hangs up: the call is recorded interrupted by the stop, not left to ring out its minute")
    func stoppedMidCall() async throws {
        let cli = try CLI()
        let number = try Self.city(cli)
        let ringing = try await SIPPeer("no-answer.xml")
        defer { ringing.stop() }
        let (server, calls) = try await Self.ringing(
            cli, number, intervalMinutes: 1.1, ringSeconds: 60,
            options: ["--autodial-trunk", ringing.address, "--autodial-rules", "autodial.json", "--autodial-listen", "127.0.0.1"])
        #expect(calls.first?["outcome"] as? String == "placing")
        let pid = server.process.processIdentifier
        server.process.terminate()
        server.process.waitUntilExit()
        #expect(server.process.terminationStatus == 0)
        try await eventually("the server's baresips to exit") { try Self.baresips(of: pid).isEmpty }
        let again = try await cli.serve(db: "t.sqlite", options: [])
        defer { again.process.terminate() }
        let recorded = try await Supervisor(again.base).calls(number)
        #expect(recorded.count == 1 && recorded[0]["outcome"] as? String == "interrupted" && recorded[0]["reason"] as? String == "hung up: the server is stopping", "\(recorded)")
    }

    /// A server with one channel whose campaign on `number` has a call ringing (its rules
    /// written to autodial.json), and the calls it lists then.
    static func ringing(
        _ cli: CLI, _ number: String, intervalMinutes: Double, ringSeconds: Int, options: [String]
    ) async throws -> (server: (process: Process, base: String), calls: [[String: Any]]) {
        try Data("""
            {"time_zone": "Europe/Kyiv", "interval_minutes": \(intervalMinutes), "hours": {"every_day": ["00:00", "24:00"]}, "max_concurrent_calls": 1,
             "ring_seconds": \(ringSeconds), "max_message_seconds": 3, "message": {"uk": "Увага."}}
            """.utf8).write(to: URL(fileURLWithPath: cli.path("autodial.json")))
        let server = try await cli.serve(db: "t.sqlite", options: options)
        let boss = try await Supervisor(server.base)
        #expect(try await boss.send("/v1/phones/\(number)/verification", ["outcome": "violator"]).0 == 200)
        #expect(try await boss.send("/v1/phones/\(number)/autodial", [:]).0 == 201)
        var calls: [[String: Any]] = []
        try await eventually("the call to be placed", every: .milliseconds(50)) {
            calls = try await boss.calls(number)
            return !calls.isEmpty
        }
        return (server, calls)
    }

    /// The baresip processes a server started (their config directory names its pid).
    static func baresips(of server: Int32) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap { entry -> String? in
            guard Int32(entry) != nil, let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            let line = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\0", with: " ")
            return line.contains("baresip") && line.contains("posterwatch-autodial-\(server)-") ? line : nil
        }
    }
}
