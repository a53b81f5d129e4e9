import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// `posterwatch serve` on SIGTERM, as systemd and `make run` stop it.
@Suite("Graceful shutdown")
struct ShutdownTests {
    /// A blocking TCP connection to the server on loopback.
    struct Connection {
        let fd: Int32

        init?(port: Int) {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            var wait = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            guard fd >= 0, connected == 0 else {
                close(fd)
                return nil
            }
        }

        func send(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Everything until the server closes the connection (or 30 s of silence).
        func readToClose() -> String {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { break }
                received += buffer[..<n]
            }
            close(fd)
            return String(decoding: received, as: UTF8.self)
        }
    }

    @Test("SIGTERM: a request in flight is still answered, new connections are refused, the process exits 0 with the log folded into the database")
    func sigterm() async throws {
        let cli = try CLI()
        try cli.addInspector(db: "t.sqlite")
        let server = try await cli.serve(db: "t.sqlite")
        let token = try await CrashTests.signIn(server.base)
        let port = try #require(Int(server.base.split(separator: ":").last ?? ""))

        // A filing whose body is half sent when the signal comes.
        let body = Array(CrashTests.report(7))
        let connection = try #require(Connection(port: port))
        connection.send(Array("POST /v1/reports HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer \(token)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body.prefix(20))
        try await Task.sleep(for: .milliseconds(200))
        kill(server.process.processIdentifier, SIGTERM)
        // The listener closes: a new client is refused while the filing is still open.
        try await CLI.eventually { Connection(port: port) == nil }
        connection.send(Array(body.dropFirst(20)))
        let answer = connection.readToClose()
        #expect(answer.hasPrefix("HTTP/1.1 201"), "\(answer.prefix(200))")
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
