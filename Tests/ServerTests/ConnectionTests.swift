import Foundation
import Hummingbird
import HummingbirdTesting
@testable import Server
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

extension Fixture {
    /// The real server (`makeApplication`) on a port of the kernel's choosing.
    func live(configuration: ServerConfiguration = ServerConfiguration(), _ body: @Sendable (_ port: Int, any TestClientProtocol) async throws -> Void) async throws {
        var configuration = own(configuration)
        configuration.port = 0
        configuration.logLevel = .critical
        // The test client keeps one connection and does not open another when the server
        // closes it: a test that pauses past the default idle minute under load lost it.
        if configuration.limits.idleTimeout == ServerConfiguration().limits.idleTimeout { configuration.limits.idleTimeout = patience }
        try await makeApplication(try await backend(), configuration: configuration).test(.live) { client in
            try await body(try #require(client.port), client)
        }
    }
}

/// The head of a raw HTTP answer: the status line and the header fields, names lowercased.
func head(of answer: String) -> (status: String, fields: [String: String]) {
    let lines = answer.components(separatedBy: "\r\n\r\n").first?.components(separatedBy: "\r\n") ?? []
    var fields: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return (lines.first ?? "", fields)
}

@Suite("Connections over a real socket", .serialized)
struct ConnectionTests {
    @Test("an HTTP/1.0 request gets an HTTP/1.0 answer and the connection is closed")
    func http10Closes() async throws {
        try await Fixture().live { port, _ in
            let connection = try RawConnection(port: port)
            connection.send("GET /health HTTP/1.0\r\n\r\n")
            let (text, closed) = await connection.readToClose()
            #expect(closed)
            #expect(head(of: text).status == "HTTP/1.0 200 OK")
            #expect(head(of: text).fields["connection"] == "close")
            #expect(text.contains(#""status":"ok""#))
            // A streamed answer to HTTP/1.0 is not chunked: the close ends it.
            let export = try RawConnection(port: port)
            export.send("GET /v1/export?format=csv HTTP/1.0\r\n\r\n")
            let exported = await export.readToClose()
            #expect(exported.closed)
            #expect(head(of: exported.text).fields["transfer-encoding"] == nil)
            #expect(exported.text.components(separatedBy: "\r\n\r\n").dropFirst().joined().split(separator: "\r\n").count == 401)
        }
    }

    @Test("HTTP/1.1 keeps the connection unless told to close; without Host it is a 400")
    func http11() async throws {
        try await Fixture().live { port, _ in
            let kept = try RawConnection(port: port)
            kept.send("GET /health HTTP/1.1\r\nHost: test\r\n\r\n")
            #expect(await kept.read(until: "}}").contains("200 OK"))
            kept.send("GET /v1/statuses HTTP/1.1\r\nHost: test\r\n\r\n")
            #expect(await kept.read(until: "]").contains("200 OK"))

            let closing = try RawConnection(port: port)
            closing.send("GET /health HTTP/1.1\r\nHost: test\r\nConnection: Close\r\n\r\n")
            let (text, closed) = await closing.readToClose()
            #expect(closed && text.contains("200 OK"))

            let hostless = try RawConnection(port: port)
            hostless.send("GET /health HTTP/1.1\r\n\r\n")
            let refused = await hostless.readToClose()
            #expect(refused.closed)
            #expect(head(of: refused.text).status == "HTTP/1.1 400 Bad Request")
            #expect(refused.text.contains(#""field":"Host""#))
        }
    }

    @Test("a request head not complete in time gets a 408; an idle connection is closed")
    func timeouts() async throws {
        var configuration = ServerConfiguration()
        configuration.limits.headerTimeout = .seconds(1)
        configuration.limits.idleTimeout = .seconds(3)  // after the header timeout, on the same event loop
        try await Fixture().live(configuration: configuration) { port, _ in
            let slow = try RawConnection(port: port)
            slow.send("GET /health HTTP/1.1\r\nHo")
            let (text, closed) = await slow.readToClose()
            #expect(closed)
            #expect(head(of: text).status == "HTTP/1.1 408 Request Timeout")

            let idle = try RawConnection(port: port)
            idle.send("GET /health HTTP/1.1\r\nHost: test\r\n\r\n")
            let answered = await idle.readToClose()
            #expect(answered.closed && answered.text.contains("200 OK"))
        }
    }

    @Test("connections past the limit get a 503 and are closed; the others keep working")
    func connectionLimit() async throws {
        var configuration = ServerConfiguration()
        configuration.limits.maxConnections = 3
        try await Fixture().live(configuration: configuration) { port, client in
            // The test client holds one connection; two more reach the limit.
            _ = try await client.get("/health")
            // Each answered, so that each is surely counted before the next one comes.
            let held = try (0..<2).map { _ in try RawConnection(port: port) }
            for connection in held {
                connection.send("GET /health HTTP/1.1\r\nHost: test\r\n\r\n")
                #expect(await connection.read(until: "}}").contains("200 OK"))
            }
            let extra = try RawConnection(port: port)
            let (text, closed) = await extra.readToClose()
            #expect(closed)
            #expect(head(of: text).status == "HTTP/1.1 503 Service Unavailable")
            #expect(head(of: text).fields["retry-after"] == "1")
            #expect(try await client.get("/health").status == .ok)
        }
    }

    @Test("HEAD of the streamed export sends GET's headers and no false Content-Length")
    func headOfExport() async throws {
        try await Fixture().live { port, _ in
            for format in ["geojson", "csv", "geojsonseq"] {
                let target = "/v1/export?format=\(format)&bbox=30.2,50.3,30.8,50.6"
                let get = try RawConnection(port: port)
                get.send("GET \(target) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                let getHead = head(of: await get.readToClose().text)
                let headRequest = try RawConnection(port: port)
                headRequest.send("HEAD \(target) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                let (text, closed) = await headRequest.readToClose()
                #expect(closed)
                let headHead = head(of: text)
                #expect(headHead.status == "HTTP/1.1 200 OK")
                #expect(headHead.fields["content-length"] == nil)
                for name in ["content-type", "content-disposition", "transfer-encoding"] {
                    #expect(headHead.fields[name] == getHead.fields[name], "\(format): \(name)")
                }
                #expect(text.hasSuffix("\r\n\r\n"), "no body after the head")
            }
        }
    }
}

@Suite("Percent-encoded paths")
struct PathDecodingTests {
    @Test("octets of printable ASCII are decoded in the path only; /, ?, #, % and the rest stay encoded")
    func decode() {
        let cases: [(String, String?)] = [
            ("/v1/reports/%31", "/v1/reports/1"),
            ("/v1/tiles/10/598/346%402x.png", "/v1/tiles/10/598/346@2x.png"),
            ("/v1/tiles/10/598/346%40%32%78.png", "/v1/tiles/10/598/346@2x.png"),
            ("/a%41?x=%41", "/aA?x=%41"),
            ("/a?x=%41", nil),
            ("/a", nil),
            ("/a%2Fb%2fc", "/a%2Fb%2fc"),
            ("/a%25%3F%23", "/a%25%3F%23"),
            ("/a%20b%00c%7F%C3%A9", "/a%20b%00c%7F%C3%A9"),
            ("/a%4", "/a%4"),
            ("/a%zz%4g", "/a%zz%4g"),
            ("/a%", "/a%"),
            ("/a%4?1", "/a%4?1"),
            ("/%7e%7E", "/~~"),
        ]
        for (target, expected) in cases {
            #expect(PathDecodingResponder<CallbackResponder<AppRequestContext>>.decode(target) == expected, "\(target)")
        }
    }

    @Test("encoded paths answer as their decoded forms; an encoded / stays inside its segment")
    func routes() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            for (encoded, plain) in [
                ("/v1/tiles/10/598/346%402x.png", "/v1/tiles/10/598/346@2x.png"), ("/v1/reports/%31", "/v1/reports/1"),
                ("/v1/reports/%31%30", "/v1/reports/10"), ("/%761/statuses", "/v1/statuses"),
                ("/ogc/collections/%72eports/items/%32", "/ogc/collections/reports/items/2"),
            ] {
                let a = try await client.get(encoded), b = try await client.get(plain)
                #expect(a.status == b.status && a.body == b.body, "\(encoded)")
                #expect(a.status == .ok || a.status == .noContent, "\(encoded)")
            }
            let slash = try await client.get("/v1/reports/1%2F2")
            #expect(slash.status == .badRequest)
            #expect(slash.error?["field"] as? String == "id")
        }
    }
}

@Suite("Connection limits")
struct ConnectionLimitTests {
    @Test("the descriptor limit is raised to the hard limit (at most 2^20), and connections capped at half of it")
    func descriptors() {
        var before = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &before)
        let soft = ConnectionLimits.raiseDescriptorLimit()
        #expect(soft == Int(min(before.rlim_max, 1 << 20)) || soft == Int(before.rlim_cur))
        #expect(soft >= Int(before.rlim_cur))
        var limits = ConnectionLimits()
        #expect(limits.connectionCap(descriptorLimit: 128) == 64)
        #expect(limits.connectionCap(descriptorLimit: 1 << 20) == 4_096)
        limits.maxConnections = 10
        #expect(limits.connectionCap(descriptorLimit: 1 << 20) == 10)
        #expect(limits.connectionCap(descriptorLimit: 1) == 1)
    }
}
