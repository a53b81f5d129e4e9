import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import TestSupport

/// Webhooks from `posterwatch serve` to receivers that check them with PyPI's
/// `standardwebhooks` (`make test` installs it): an implementation of the specification
/// independent of ours.
@Suite("Webhooks end to end", .serialized)
struct WebhookTests {
    /// `webhook_receiver.py` on a port of its own, writing a line per request it gets.
    struct Receiver {
        let process: Process
        let out: String
        let url: String

        /// Starts a receiver at `port` that checks signatures against `secret`, failing the
        /// first `failFirst` attempts of each message, or answering every one with `status`.
        init(_ cli: CLI, name: String, port: Int, secret: String, failFirst: Int = 0, status: Int? = nil) async throws {
            out = cli.path(name + ".jsonl")
            url = "http://127.0.0.1:\(port)/\(name)"
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("webhook_receiver.py").path
            process.arguments = ["python3", script, secret, out, String(port), String(failFirst)] + (status.map { [String($0)] } ?? [])
            try process.run()
            try await eventually { FileManager.default.fileExists(atPath: out) }
            #expect(FileManager.default.fileExists(atPath: out), "the receiver did not start")
        }

        /// The requests received so far.
        func requests() -> [[String: Any]] {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }

        /// The report ids of the deliveries answered 204, by message id.
        func delivered() -> [String: Int] {
            var found: [String: Int] = [:]
            for request in requests() where request["status"] as? Int == 204 {
                found[request["id"] as! String] = Self.reportID(request)
            }
            return found
        }

        static func reportID(_ request: [String: Any]) -> Int? {
            let body = (request["body"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            return (body?["data"] as? [String: Any])?["id"] as? Int
        }

        func stop() {
            // SIGKILL: a child of the test runner may have SIGTERM ignored.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Files `count` reports from `first` on, returning their ids.
    static func file(_ base: String, token: String, from first: Int, count: Int) async throws -> [Int] {
        var ids: [Int] = []
        for n in first..<(first + count) {
            let (data, response) = try await URLSession.shared.data(
                for: CrashTests.request(base, "/v1/reports", method: "POST", token: token, body: CrashTests.report(n)))
            #expect((response as? HTTPURLResponse)?.statusCode == 201)
            if let id = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? Int { ids.append(id) }
        }
        return ids
    }

    func add(_ cli: CLI, url: String, events: String) throws -> String {
        let added = try cli.run("webhook", "add", url, "--events", events, "--description", "end to end", "--db", "w.sqlite")
        #expect(added.status == 0, "\(added.stderr)")
        let secret = added.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(secret.hasPrefix("whsec_"))
        return secret
    }

    @Test("every delivery verifies with standardwebhooks; a receiver failing 3 times gets the same body on the 4th; a 410 disables its endpoint; kill -9 with deliveries pending loses none")
    func endToEnd() async throws {
        let cli = try CLI()
        try cli.addInspector(db: "w.sqlite")
        let port = CLI.freePort()
        let secret = try add(cli, url: "http://127.0.0.1:\(port)/flaky", events: "report.created,report.status_changed")
        let gonePort = CLI.freePort()
        let goneSecret = try add(cli, url: "http://127.0.0.1:\(gonePort)/gone", events: "report.created")
        let flaky = try await Receiver(cli, name: "flaky", port: port, secret: secret, failFirst: 3)
        let gone = try await Receiver(cli, name: "gone", port: gonePort, secret: goneSecret, status: 410)
        defer { gone.stop() }
        // An attempt's timeout far above what the receiver takes, however loaded the machine:
        // an attempt timed out would be one more in the counts below.
        let options = ["--webhook-first-retry", "0.1", "--webhook-timeout", "30"]
        let server = try await cli.serve(db: "w.sqlite", options: options)
        let token = try await CrashTests.signIn(server.base)

        let first = try await Self.file(server.base, token: token, from: 0, count: 5)
        try await eventually { flaky.delivered().count == 5 }
        #expect(Set(flaky.delivered().values) == Set(first), "each report's creation is delivered")
        let requests = flaky.requests()
        #expect(requests.allSatisfy { $0["verified"] as? Bool == true }, "standardwebhooks verifies every signature")
        for (message, _) in flaky.delivered() {
            let attempts = requests.filter { $0["id"] as? String == message }
            #expect(attempts.map { $0["status"] as? Int } == [500, 500, 500, 204], "three failures, then the fourth attempt")
            #expect(Set(attempts.compactMap { $0["body"] as? String }).count == 1, "every attempt of \(message) sends the same body")
            let body = try JSONSerialization.jsonObject(with: Data((attempts[0]["body"] as! String).utf8)) as! [String: Any]
            #expect(body["type"] as? String == "report.created" && body["timestamp"] is String && body["data"] is [String: Any])
        }

        // The 410 endpoint: disabled after its first answer; later changes are not sent to it.
        try await eventually { (try? cli.run("webhook", "list", "--db", "w.sqlite").stdout.contains("disabled")) == true }
        let listed = try cli.run("webhook", "list", "--db", "w.sqlite").stdout
        #expect(listed.contains("disabled (the endpoint answered 410 Gone"), "\(listed)")
        let goneSeen = gone.requests().count
        #expect((1...5).contains(goneSeen) && gone.requests().allSatisfy { $0["verified"] as? Bool == true })

        // The flaky receiver goes away; reports filed now wait in the outbox, failing, when
        // the server is killed. A new receiver and a restart: every one arrives.
        flaky.stop()
        let second = try await Self.file(server.base, token: token, from: 100, count: 5)
        try await Task.sleep(for: .milliseconds(300))
        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()
        let back = try await Receiver(cli, name: "back", port: port, secret: secret)
        defer { back.stop() }
        let restarted = try await cli.serve(db: "w.sqlite", options: options)
        defer { kill(restarted.process.processIdentifier, SIGKILL) }
        try await eventually { Set(back.delivered().values).isSuperset(of: second) }
        #expect(Set(back.delivered().values).isSuperset(of: second), "every pending delivery survives kill -9")
        #expect(back.requests().allSatisfy { $0["verified"] as? Bool == true })
        // Requests sent to it before the 410 was recorded may still be logged after goneSeen.
        #expect(!gone.requests().contains { Receiver.reportID($0).map(second.contains) ?? false }, "a disabled endpoint receives nothing more")
    }

    /// A port that takes connections and never answers on them; how many it took.
    final class Silent: @unchecked Sendable {
        let port = CLI.freePort()
        private let socket: Int32
        private let taken = Mutex<[Int32]>([])

        init() throws {
            socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard bound == 0, listen(socket, 1024) == 0 else { throw CocoaError(.fileWriteUnknown) }
            Thread.detachNewThread { [self] in
                while case let connection = accept(socket, nil, nil), connection >= 0 { taken.withLock { $0.append(connection) } }
            }
        }

        var connections: Int { taken.withLock { $0.count } }

        func stop() {
            shutdown(socket, Int32(SHUT_RDWR))
            close(socket)
            for connection in taken.withLock({ $0 }) { close(connection) }
        }
    }

    @Test("an endpoint that never answers holds its share of the attempts in flight, no more: another endpoint's deliveries all arrive meanwhile")
    func silentEndpoint() async throws {
        let cli = try CLI()
        try cli.addInspector(db: "w.sqlite")
        let silent = try Silent()
        defer { silent.stop() }
        _ = try add(cli, url: "http://127.0.0.1:\(silent.port)/silent", events: "report.created")
        let port = CLI.freePort()
        let secret = try add(cli, url: "http://127.0.0.1:\(port)/fine", events: "report.created")
        let fine = try await Receiver(cli, name: "fine", port: port, secret: secret)
        defer { fine.stop() }
        // Attempts to the silent endpoint end only after 300 s: every one that starts stays in flight.
        let server = try await cli.serve(db: "w.sqlite", options: ["--webhook-timeout", "300"])
        defer { kill(server.process.processIdentifier, SIGKILL) }
        let token = try await CrashTests.signIn(server.base)

        // More filings than a dispatcher has attempts in flight (128): had the silent
        // endpoint taken them all, the rest of the fine one's would wait out its timeout.
        let filed = try await Self.file(server.base, token: token, from: 0, count: 200)
        try await eventually { fine.delivered().count == filed.count }
        #expect(Set(fine.delivered().values) == Set(filed))
        #expect(silent.connections >= 1, "the silent endpoint was tried")
    }
}
