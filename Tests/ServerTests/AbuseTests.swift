import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import Server
import Synchronization
import Testing
import TestSupport

/// Rate limits, and what browsers are told: CORS for writes, the map page's policy,
/// `nosniff` on every answer.
@Suite("Abuse and browser safety")
struct AbuseTests {
    static func limits(logins: Double = .infinity, registrations: Double = .infinity, writes: Double = .infinity) -> RateLimits {
        var limits = RateLimits.none
        if logins.isFinite { limits.logins = .init(burst: logins, perSecond: 1.0 / 3_600) }
        if registrations.isFinite { limits.registrations = .init(burst: registrations, perSecond: 1.0 / 3_600) }
        if writes.isFinite { limits.writes = .init(burst: writes, perSecond: 1.0 / 3_600) }
        return limits
    }

    @Test("a client past its burst of writes gets a 429 with Retry-After, and its write is not made; reads go on")
    func writes() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.rateLimits = Self.limits(writes: 3)
        try await fixture.test(configuration: configuration) { client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            for _ in 0..<3 {
                #expect(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector.token).status == .created)
            }
            let reports = try ReportRouteTests.count(fixture, "report"), changes = try ReportRouteTests.count(fixture, "report_change")
            let refused = try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector.token)
            #expect(refused.status == .tooManyRequests && refused.error?["code"] as? String == "rate_limited")
            let wait = try #require(refused.headers[.retryAfter].flatMap { Int($0) })
            #expect(wait >= 1 && wait <= 3_600)
            #expect(try ReportRouteTests.count(fixture, "report") == reports && ReportRouteTests.count(fixture, "report_change") == changes)
            // Any other write draws on the same bucket; reads do not.
            #expect(try await client.send(.post, "/v1/auth/logout", token: inspector.token).status == .tooManyRequests)
            #expect(try await client.get("/v1/statuses").status == .ok)
        }
    }

    @Test("sign-ins and registrations have buckets of their own")
    func logins() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.rateLimits = Self.limits(logins: 2, registrations: 1)
        try await fixture.test(configuration: configuration) { client in
            _ = try await ReportRouteTests.account(fixture, client, .inspector, 1)  // one sign-in
            let wrong = try await client.send(.post, "/v1/auth/login", json: ["login": "inspector1@example.org", "password": "not it at all"])
            #expect(wrong.status == .unauthorized)
            let third = try await client.send(.post, "/v1/auth/login", json: ["login": "inspector1@example.org", "password": AccountRouteTests.password])
            #expect(third.status == .tooManyRequests && third.headers[.retryAfter] != nil)
            let accounts = try ReportRouteTests.count(fixture, "account")
            let register = { (n: Int) in
                try await client.send(.post, "/v1/auth/register", json: [
                    "name": "Resident \(n)", "email": "resident\(n)@example.org", "phone": "063 111 11 \(10 + n)", "password": AccountRouteTests.password,
                ])
            }
            #expect(try await register(1).status == .created)
            let second = try await register(2)
            #expect(second.status == .tooManyRequests && second.error?["message"] as? String == "too many registrations from this address: try again in \(second.headers[.retryAfter] ?? "") s")
            #expect(try ReportRouteTests.count(fixture, "account") == accounts + 1)
        }
    }

    /// A failed sign-in as the client a proxy forwards; its status (nil: no answer).
    static func attempt(_ client: any TestClientProtocol, _ forwarded: String) async -> HTTPResponse.Status? {
        try? await client.send(.post, "/v1/auth/login", json: ["login": "nobody@example.org", "password": "wrong password"], headers: [.xForwardedFor: forwarded]).status
    }

    @Test("X-Forwarded-For names the client only when a trusted proxy sends it")
    func forwarded() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.rateLimits = Self.limits(logins: 1)
        // Not trusted: the header is ignored, every attempt counts against the peer.
        try await fixture.live(configuration: configuration) { _, client in
            #expect(await Self.attempt(client, "203.0.113.1") == .unauthorized)
            #expect(await Self.attempt(client, "203.0.113.2") == .tooManyRequests)
        }
        configuration.rateLimits.trustedProxies = ["127.0.0.1"]
        try await fixture.live(configuration: configuration) { _, client in
            #expect(await Self.attempt(client, "203.0.113.1") == .unauthorized)
            #expect(await Self.attempt(client, "203.0.113.1") == .tooManyRequests)
            // Another client behind the proxy; what the client wrote left of it does not count.
            #expect(await Self.attempt(client, "198.51.100.7, 203.0.113.2") == .unauthorized)
            #expect(await Self.attempt(client, "203.0.113.1, 203.0.113.2") == .tooManyRequests)
        }
    }

    @Test("failed sign-ins are counted per IPv6 /64, not per address: a fresh address per guess gains nothing; a neighbour's failed sign-ins do not stop the owner's token refreshes")
    func ipv6Guesses() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.rateLimits = RateLimits.none
        configuration.rateLimits.trustedProxies = ["127.0.0.1"]
        configuration.rateLimits.logins = .init(burst: 8, perSecond: 1.0 / 3_600)
        try await fixture.live(configuration: configuration) { _, client in
            _ = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let login = ["login": "inspector1@example.org", "password": "not the password"]
            for n in 1...5 {
                let answer = try await client.send(.post, "/v1/auth/login", json: login, headers: [.xForwardedFor: "2001:db8:5:6::\(n)"])
                #expect(answer.status == .unauthorized)
            }
            let fresh = try await client.send(.post, "/v1/auth/login", json: login, headers: [.xForwardedFor: "2001:db8:5:6:ffff::99"])
            #expect(fresh.status == .tooManyRequests, "the same /64 is the same client")
            let otherNetwork = try await client.send(.post, "/v1/auth/login", json: login, headers: [.xForwardedFor: "2001:db8:5:7::1"])
            #expect(otherNetwork.status == .unauthorized)
            // The login bucket of the owner's address is drained by a neighbour; refreshes have their own.
            let refreshToken = try #require(try await client.send(
                .post, "/v1/auth/login", json: ["login": "inspector1@example.org", "password": AccountRouteTests.password],
                headers: [.xForwardedFor: "192.0.2.50"]).json["refresh_token"] as? String)
            for _ in 0..<8 { _ = try await client.send(.post, "/v1/auth/login", json: ["login": "x@example.org", "password": "wrong"], headers: [.xForwardedFor: "192.0.2.50"]) }
            #expect(try await client.send(.post, "/v1/auth/login", json: login, headers: [.xForwardedFor: "192.0.2.50"]).status == .tooManyRequests)
            let refreshed = try await client.send(.post, "/v1/auth/refresh", json: ["refresh_token": refreshToken], headers: [.xForwardedFor: "192.0.2.50"])
            #expect(refreshed.status == .ok)
        }
    }

    @Test("buckets refill at their rate; an IPv6 client is its /64; X-Forwarded-For is read right to left")
    func limiter() throws {
        let now = Mutex(0.0)
        var limits = RateLimits.none
        limits.writes = .init(burst: 2, perSecond: 0.5)
        let limiter = RateLimiter(limits, clock: { now.withLock { $0 } })
        try limiter.take(.write, client: "192.0.2.1")
        try limiter.take(.write, client: "192.0.2.1")
        #expect(throws: RateLimited.self) { try limiter.take(.write, client: "192.0.2.1") }
        try limiter.take(.write, client: "192.0.2.2")  // its own bucket
        now.withLock { $0 = 1.9 }
        #expect(throws: RateLimited.self) { try limiter.take(.write, client: "192.0.2.1") }
        now.withLock { $0 = 2.1 }
        try limiter.take(.write, client: "192.0.2.1")
        // Past the most clients remembered: the refilled are forgotten, and a flood of
        // clients all drained forgets every one rather than sweeping at each call.
        var few = limits
        few.maxClients = 8
        let bounded = RateLimiter(few, clock: { now.withLock { $0 } })
        for n in 0..<9 { try bounded.take(.write, client: "198.51.100.\(n)") }
        #expect(bounded.remembered <= 8)
        try bounded.take(.write, client: "198.51.100.0")
        try bounded.take(.write, client: "198.51.100.0")
        #expect(throws: RateLimited.self) { try bounded.take(.write, client: "198.51.100.0") }
                #expect(RateLimiter.group("2001:db8:1:2:aaaa::1") == RateLimiter.group("2001:0db8:0001:0002:bbbb:cccc:dddd:eeee"))
        #expect(RateLimiter.group("2001:db8::1") == "2001:db8:0:0::/64" && RateLimiter.group("::1") == "0:0:0:0::/64")
        #expect(RateLimiter.group("2001:db8:1:2::") != RateLimiter.group("2001:db8:1:3::"))
        #expect(RateLimiter.group("::ffff:192.0.2.7") == "192.0.2.7" && RateLimiter.group("::FFFF:198.51.100.1") != RateLimiter.group("::ffff:192.0.2.7"),
                "IPv4 clients of a socket on :: are each their own")
        #expect(RateLimiter.forwardedClient("203.0.113.9, ::ffff:10.0.0.2", trusted: ["10.0.0.2"]) == "203.0.113.9", "a mapped proxy is the proxy")
        #expect(RateLimiter.isTrusted("::ffff:10.0.0.2", ["::ffff:10.0.0.2"]) && RateLimiter.isTrusted("::ffff:10.0.0.2", ["10.0.0.2"]), "configured either way")
        #expect(RateLimiter.forwardedClient("1.1.1.1, 10.0.0.2, 10.0.0.1", trusted: ["10.0.0.1", "10.0.0.2"]) == "1.1.1.1")
        #expect(RateLimiter.forwardedClient("<script>, 10.0.0.1", trusted: ["10.0.0.1"]) == nil)
        #expect(RateLimiter.forwardedClient("10.0.0.1", trusted: ["10.0.0.1"]) == nil)
    }

    @Test("CORS: reads are open to any origin; writes only from the server's own page and configured origins, others refused before they run")
    func cors() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.writeOrigins = ["https://app.example.org"]
        try await fixture.test(configuration: configuration) { client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let foreign = "https://evil.example"
            let read = try await client.get("/v1/statuses", headers: [.origin: foreign])
            #expect(read.headers[.accessControlAllowOrigin] == "*")

            let preflight = { (origin: String, method: String) in
                try await client.execute(uri: "/v1/reports", method: .options, headers: [.origin: origin, .accessControlRequestMethod: method]) { $0.headers }
            }
            #expect(try await preflight(foreign, "GET")[.accessControlAllowOrigin] == "*")
            #expect(try await preflight(foreign, "POST")[.accessControlAllowOrigin] == nil)
            let allowed = try await preflight("https://app.example.org", "POST")
            #expect(allowed[.accessControlAllowOrigin] == "https://app.example.org" && allowed[.accessControlAllowMethods]?.contains("POST") == true)
            #expect(allowed[.vary] == "Origin")

            let reports = try ReportRouteTests.count(fixture, "report")
            let refused = try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector.token, headers: [.origin: foreign])
            #expect(refused.status == .forbidden && refused.error?["code"] as? String == "origin_not_allowed" && refused.error?["field"] as? String == "Origin")
            #expect(refused.headers[.accessControlAllowOrigin] == nil)
            #expect(try ReportRouteTests.count(fixture, "report") == reports)
            let configured = try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector.token, headers: [.origin: "https://app.example.org"])
            #expect(configured.status == .created && configured.headers[.accessControlAllowOrigin] == "https://app.example.org")
            // No Origin at all (an app, a script): not a browser's cross-origin call.
            #expect(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector.token).status == .created)
        }
    }

    @Test("a write from the server's own page (its Origin names the host the request went to) is taken")
    func ownOrigin() async throws {
        try await Fixture().live { port, _ in
            let login = #"{"login":"nobody@example.org","password":"wrong password"}"#
            let send = { (origin: String) async -> String in
                let connection = try! RawConnection(port: port)
                connection.send("POST /v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: \(origin)\r\nContent-Type: application/json\r\nContent-Length: \(login.utf8.count)\r\nConnection: close\r\n\r\n\(login)")
                return head(of: await connection.readToClose().text).status
            }
            #expect(await send("http://127.0.0.1:\(port)") == "HTTP/1.1 401 Unauthorized", "taken, and refused for its password")
            #expect(await send("http://127.0.0.1:1") == "HTTP/1.1 403 Forbidden")
        }
    }

    @Test("every answer says nosniff; the map page has a script policy allowing exactly its inline script, and sends no referrer")
    func headers() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.baseMapURL = "https://tiles.example.org/{z}/{x}/{y}.png"
        try await fixture.test(configuration: configuration) { client in
            for uri in ["/", "/v1/statuses", "/v1/clusters?zoom=99", "/nothing", "/openapi.json"] {
                #expect(try await client.get(uri).headers[.xContentTypeOptions] == "nosniff", "\(uri)")
            }
            let page = try await client.get("/")
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(page.headers[.referrerPolicy] == "no-referrer")
            let directives = Dictionary(uniqueKeysWithValues: policy.split(separator: ";").map { part -> (String, [String]) in
                let words = part.split(separator: " ").map(String.init)
                return (words[0], Array(words.dropFirst()))
            })
            #expect(directives["default-src"] == ["'none'"] && directives["frame-ancestors"] == ["'none'"])
            #expect(directives["img-src"]?.contains("https://tiles.example.org") == true)
            let scripts = page.bodyText.components(separatedBy: "<script>").dropFirst().map { $0.components(separatedBy: "</script>")[0] }
            #expect(scripts.count == 1)
            let hashes = scripts.map { "'sha256-" + Data(SHA256.hash(data: Data($0.utf8))).base64EncodedString() + "'" }
            #expect(directives["script-src"] == ["'self'"] + hashes)
            #expect(!(directives["script-src"] ?? []).contains("'unsafe-inline'"))
        }
    }
}
