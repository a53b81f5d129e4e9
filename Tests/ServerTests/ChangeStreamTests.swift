import ChangeFeed
import Foundation
import Generator
import HTTPTypes
import HummingbirdTesting
import ReportModel
@testable import ReportService
import SQLiteStore
@testable import Server
import Testing
import TestSupport

/// `GET /v1/changes/stream` on a real socket: catch-up, live events, resuming with
/// `Last-Event-ID`, the area filter, heartbeats, and a client that stops reading.
@Suite("The change stream (Server-Sent Events)")
struct ChangeStreamTests {
    static func open(_ port: Int, _ target: String, lastEventID: Int? = nil) -> RawConnection? {
        guard let connection = try? RawConnection(port: port) else { return nil }
        let resume = lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? ""
        connection.send("GET \(target) HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\(resume)\r\n")
        return connection
    }

    static func ids(_ text: String) -> [Int] { EventStream.ids(text) }

    @Test("a subscriber gets what it lacks, then each change live; Last-Event-ID resumes exactly after it; bbox keeps its area; heartbeats come")
    func stream() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.changes.heartbeatInterval = .milliseconds(200)
        try await fixture.live(configuration: configuration) { port, client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            func file(lon: Double) async throws {
                #expect(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(lon: lon), token: inspector.token).status == .created)
            }
            try await file(lon: 30.50)  // change 1

            let all = try #require(Self.open(port, "/v1/changes/stream?since=0"))
            let opened = await all.read(until: ": live")
            #expect(head(of: opened).status == "HTTP/1.1 200 OK" && head(of: opened).fields["content-type"] == "text/event-stream")
            #expect(Self.ids(opened) == [1] && opened.contains("event: report.created\ndata: {\"seq\":1,"))
            let east = try #require(Self.open(port, "/v1/changes/stream?bbox=30.55,50.3,30.7,50.6"))
            _ = await east.read(until: ": live")

            try await file(lon: 30.52)  // change 2: west of the box
            try await file(lon: 30.60)  // change 3: in it
            let live = await all.read(until: "id: 3\n")
            #expect(Self.ids(live) == [2, 3])
            #expect(Self.ids(await east.read(until: "id: 3\n")) == [3])
            #expect(await all.read(until: ": heartbeat").contains(": heartbeat"))

            let resumed = try #require(Self.open(port, "/v1/changes/stream", lastEventID: 1))
            #expect(Self.ids(await resumed.read(until: ": live")) == [2, 3])
            let now = try #require(Self.open(port, "/v1/changes/stream"))
            _ = await now.read(until: ": live")
            try await file(lon: 30.51)  // change 4
            #expect(Self.ids(await now.read(until: "id: 4\n")) == [4], "without since or Last-Event-ID the stream starts now")

            let gone = try #require(Self.open(port, "/v1/changes/stream?since=99"))
            #expect(head(of: await gone.read(until: "}")).status == "HTTP/1.1 410 Gone")
            let bad = try #require(Self.open(port, "/v1/changes/stream", lastEventID: -3))
            #expect(head(of: await bad.read(until: "}")).status == "HTTP/1.1 400 Bad Request")
        }
    }

    @Test("a staff stream ends when its session is logged out, its account demoted below staff or disabled: no staff event after; a public stream and another staff one go on")
    func staffStreamEnds() async throws {
        let fixture = try await Fixture()
        try await fixture.live { port, client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let admin = try await ReportRouteTests.account(fixture, client, .admin, 2)
            let (loggedOut, demoted, disabled, kept) = (
                try await ReportRouteTests.account(fixture, client, .supervisor, 3), try await ReportRouteTests.account(fixture, client, .supervisor, 4),
                try await ReportRouteTests.account(fixture, client, .supervisor, 5), try await ReportRouteTests.account(fixture, client, .supervisor, 6)
            )
            func open(_ token: String?) async throws -> RawConnection {
                let connection = try RawConnection(port: port)
                let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
                connection.send("GET /v1/changes/stream HTTP/1.1\r\nHost: test\r\n\(authorization)\r\n")
                #expect(await connection.read(until: ": live").contains("200 OK"))
                return connection
            }
            func file() async throws -> Int {
                let answer = try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector.token)
                return try #require(answer.json["id"] as? Int)
            }
            let streams = (
                loggedOut: try await open(loggedOut.token), demoted: try await open(demoted.token), disabled: try await open(disabled.token),
                kept: try await open(kept.token), public: try await open(nil)
            )
            #expect(try await client.send(.post, "/v1/auth/logout", token: loggedOut.token).status == .noContent)
            #expect(try await client.send(.patch, "/v1/users/\(demoted.id)", json: ["role": "inspector"], token: admin.token).status == .ok)
            #expect(try await client.send(.patch, "/v1/users/\(disabled.id)", json: ["disabled": true], token: admin.token).status == .ok)
            _ = try await file()
            let seq = try fixture.store.lastChange()
            let staffEvent = await streams.kept.read(until: "id: \(seq)\n")
            #expect(staffEvent.contains("\"filer_id\""), "the staff form names the filer")
            let publicEvent = await streams.public.read(until: "id: \(seq)\n")
            #expect(publicEvent.contains("id: \(seq)\n") && !publicEvent.contains("filer_id"))
            for (name, stream) in [("logged out", streams.loggedOut), ("demoted", streams.demoted), ("disabled", streams.disabled)] {
                let rest = await stream.readToClose()
                #expect(rest.closed, "\(name): the stream was closed")
                #expect(!rest.text.contains("id: "), "\(name): no event after its power ended")
            }
        }
    }

    @Test("a client that stops reading is cut off once its connection holds what it may unsent, while filing goes on; it resumes with Last-Event-ID and misses nothing; a HEAD subscribes nobody")
    func slowClient() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        // Cut off soon once the kernel's buffers (some MB on loopback) are full.
        configuration.changes.unsentLimit = 16 * 1_024
        let since = try fixture.store.lastChange()
        try await fixture.live(configuration: configuration) { port, client in
            func metric(_ name: String) async throws -> Int {
                let metrics = String(decoding: try await client.send(.get, "/metrics").body, as: UTF8.self)
                let line = metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }
                return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? -1
            }
            func cutOff() async throws -> Int { try await metric("change_stream_cut_off_total") }
            // A HEAD is answered without a body, so without a subscriber.
            let head = try await client.send(.head, "/v1/changes/stream")
            #expect(head.status == .ok && head.headers[.contentType] == "text/event-stream")
            #expect(try await metric("change_stream_subscribers") == 0)

            let slow = try RawConnection(port: port, receiveBuffer: 4_096)
            slow.send("GET /v1/changes/stream?since=\(since) HTTP/1.1\r\nHost: test\r\n\r\n")
            _ = await slow.read(until: ": live")
            #expect(try await metric("change_stream_subscribers") == 1)
            var rng = SplitMix64(state: 12)
            var filed = 0
            // Some MB fill the kernel's buffers here; hosts with larger ones need more.
            while try await cutOff() == 0, filed < 100_000 {
                // A hundred at once, so that the group commit takes them in a few turns: one
                // after another under make test's load they outlasted the test client's
                // connection (closed by the server as idle).
                let drafts = (0..<100).map { _ in Drafts.make(Drafts.positions(1, using: &rng)[0], using: &rng) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for draft in drafts {
                        group.addTask { _ = try await fixture.service.file(draft, by: Caller(accountID: nil, role: .inspector)) }
                    }
                    try await group.waitForAll()
                }
                filed += 100
            }
            try #require(try await cutOff() == 1)
            let last = Int(try fixture.store.lastChange())
            #expect(last == Int(since) + filed, "every filing went through")

            let (text, closed) = await slow.readToClose()
            #expect(closed, "the connection was closed")
            // The last event may have come in part: resume after the one before it.
            let complete = Self.ids(text).dropLast()
            let resumeAfter = try #require(complete.last)
            #expect(Array(complete) == Array(Int(since) + 1...resumeAfter) && resumeAfter < last, "in order, then cut off")
            let resumed = try #require(Self.open(port, "/v1/changes/stream", lastEventID: resumeAfter))
            #expect(Self.ids(await resumed.read(until: ": live")) == Array(resumeAfter + 1...last))
        }
    }
}
