import Foundation
import Hummingbird
import HummingbirdTesting
@testable import Server
import Testing
import TestSupport

/// What a hostile client sends over a real socket: each is refused with a 4xx or cut off,
/// and the server goes on answering everyone else.
@Suite("Hostile connections", .serialized)
struct HostileConnectionTests {
    /// One request on a new connection; its answer's status line.
    static func status(port: Int, _ request: String) async throws -> String {
        let connection = try RawConnection(port: port)
        connection.send(request)
        return head(of: await connection.readToClose().text).status
    }

    static func healthy(_ client: any TestClientProtocol) async throws -> Bool {
        try await client.get("/health").status == .ok
    }

    @Test("a 1 MB query string, a 100 KB header and 10,000 repeated parameters get a 4xx; the server goes on")
    func oversized() async throws {
        try await Fixture().live { port, client in
            let query = try await Self.status(port: port, "GET /v1/search?q=" + String(repeating: "7", count: 1 << 20) + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            #expect(query.hasPrefix("HTTP/1.1 4"), "\(query)")
            let header = try await Self.status(port: port, "GET /health HTTP/1.1\r\nHost: t\r\nX-Junk: " + String(repeating: "a", count: 100_000) + "\r\nConnection: close\r\n\r\n")
            #expect(header.hasPrefix("HTTP/1.1 4"), "\(header)")
            let repeated = Array(repeating: "zoom=3", count: 10_000).joined(separator: "&")
            let parameters = try await Self.status(port: port, "GET /v1/clusters?\(repeated) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            #expect(parameters.hasPrefix("HTTP/1.1 4"), "\(parameters)")
            // Within the URI limit, repeated parameters are named.
            let few = try await client.get("/v1/clusters?bbox=30,50,31,51&zoom=3&zoom=4")
            #expect(few.status == .badRequest && few.error?["field"] as? String == "zoom")
            #expect(try await Self.healthy(client))
        }
    }

    @Test("invalid UTF-8 and %00 in parameters are a 400 naming the parameter")
    func badBytes() async throws {
        try await Fixture().live { port, client in
            for query in ["q=%FF%FE", "q=12%00", "bbox=30,50,31,51%00&zoom=3"] {
                let answer = try await client.get("/v1/search?" + query)
                let field = query.split(separator: "=")[0]
                #expect(answer.status == .badRequest, "\(query)")
                #expect(answer.error?["field"] as? String == String(field), "\(query): \(answer.bodyText)")
            }
            // Raw bytes that are not UTF-8 in the request line itself.
            let connection = try RawConnection(port: port)
            connection.send("GET /v1/search?q=\u{FF}\u{FE} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            #expect(head(of: await connection.readToClose().text).status.hasPrefix("HTTP/1.1 4"))
            #expect(try await Self.healthy(client))
        }
    }

    @Test("pipelined requests are answered in order; HTTP/1.0 too")
    func pipelined() async throws {
        try await Fixture().live { port, _ in
            let connection = try RawConnection(port: port)
            connection.send(
                "GET /health HTTP/1.1\r\nHost: t\r\n\r\nGET /v1/statuses HTTP/1.1\r\nHost: t\r\n\r\nGET /nothing HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let text = await connection.readToClose().text
            // A body is not followed by a line break: the next answer's status line starts right after it.
            let statuses = text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
            #expect(statuses == ["200", "200", "404"])
            #expect(text.range(of: #""status":"ok""#)!.lowerBound < text.range(of: "\"code\"")!.lowerBound)
            let old = try RawConnection(port: port)
            old.send("GET /v1/statuses HTTP/1.0\r\n\r\n")
            #expect(head(of: await old.readToClose().text).status == "HTTP/1.0 200 OK")
        }
    }

    @Test("500 idle connections and a client sending a byte at a time do not keep others from being answered")
    func idleAndSlow() async throws {
        var configuration = ServerConfiguration()
        configuration.limits.headerTimeout = .seconds(5)
        try await Fixture().live(configuration: configuration) { port, client in
            let idle = try (0..<500).map { _ in try RawConnection(port: port) }
            let slow = try RawConnection(port: port)
            let request = Array("GET /health HTTP/1.1\r\nHost: t\r\n")
            let dripping = Task {
                for character in request {
                    slow.send(String(character))
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            for _ in 0..<20 { #expect(try await Self.healthy(client)) }
            // A fresh connection is served too, beside the 500.
            #expect(try await Self.status(port: port, "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n") == "HTTP/1.1 200 OK")
            try await dripping.value
            // The slow client never finished its head: it is answered 408 and closed.
            #expect(head(of: await slow.readToClose().text).status == "HTTP/1.1 408 Request Timeout")
            withExtendedLifetime(idle) {}
        }
    }
}
