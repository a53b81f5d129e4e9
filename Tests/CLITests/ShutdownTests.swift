import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// `posterwatch serve` on SIGTERM, as systemd and `make run` stop it.
@Suite("Graceful shutdown")
struct ShutdownTests {
    @Test("SIGTERM: a request in flight is still answered, a change stream is ended, new connections are refused, the process exits 0 with the log folded into the database")
    func sigterm() async throws {
        let cli = try CLI()
        try cli.addInspector(db: "t.sqlite")
        let server = try await cli.serve(db: "t.sqlite")
        let token = try await CrashTests.signIn(server.base)
        let port = try #require(Int(server.base.split(separator: ":").last ?? ""))

        // A change stream, which never ends on its own: the shutdown must end it (or it
        // would outlast --shutdown-timeout, and the process exit 1).
        let stream = try RawConnection(port: port)
        stream.send("GET /v1/changes/stream HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await stream.read(until: ": live").contains("200 OK"))
        // A filing whose body is half sent when the signal comes.
        let body = Array(CrashTests.report(7))
        let connection = try RawConnection(port: port)
        connection.send(bytes: Array("POST /v1/reports HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body.prefix(20))
        try await connection.waitUntilRead()
        kill(server.process.processIdentifier, SIGTERM)
        // The listener closes: a new client is refused while the filing is still open.
        try await eventually { (try? RawConnection(port: port)) == nil }
        connection.send(bytes: Array(body.dropFirst(20)))
        let answer = await connection.readToClose().text
        #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(200))")
        #expect(await stream.readToClose().closed)
        server.process.waitUntilExit()
        #expect(server.process.terminationStatus == 0 && server.process.terminationReason == .exit)
        let wal = (try? FileManager.default.attributesOfItem(atPath: cli.path("t.sqlite-wal"))[.size] as? Int) ?? 0
        #expect(wal == 0, "the log was folded into the database")
        let log = try String(contentsOfFile: cli.path("serve.log"), encoding: .utf8)
        #expect(log.contains("stopped"))

        // The filing answered during the shutdown is there.
        let id = try #require(answer.split(separator: "\r\n").first { $0.hasPrefix("Location: ") }.map { $0.dropFirst("Location: /v1/reports/".count) })
        let restarted = try await cli.serve(db: "t.sqlite")
        defer { restarted.process.terminate() }
        let (_, response) = try await URLSession.shared.data(from: URL(string: restarted.base + "/v1/reports/\(id)")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
    }
}
