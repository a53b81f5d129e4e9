import Accounts
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import Server
import Testing

/// `GET /v1/me/notifications` and `POST /v1/me/notifications/read` over HTTP.
@Suite("Notifications over HTTP")
struct NotificationRouteTests {
    @Test("a filer hears of the status changes others make to their reports, newest first, read and unread, paged; not of their own steps, others' reports or hidden ones")
    func notifications() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let filer = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let other = try await ReportRouteTests.account(fixture, client, .inspector, 2)
            let supervisor = try await ReportRouteTests.account(fixture, client, .supervisor, 3)
            func file(_ token: String) async throws -> Int {
                try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: token).json["id"] as? Int)
            }
            func step(_ id: Int, _ to: String, note: String? = nil, _ token: String) async throws {
                var body: [String: Any] = ["to": to]
                if let note { body["note"] = note }
                #expect(try await client.send(.post, "/v1/reports/\(id)/transitions", json: body, token: token).status == .ok, "\(id) → \(to)")
            }
            let a = try await file(filer.token), b = try await file(filer.token), c = try await file(other.token), d = try await file(filer.token)
            try await step(a, "verifying", supervisor.token)
            try await step(a, "rejected", note: "номер не рекламодавця", supervisor.token)
            try await step(b, "cancelled", filer.token)  // the filer's own step
            try await step(c, "verifying", supervisor.token)  // someone else's report
            try await step(d, "verifying", supervisor.token)
            #expect(try await client.send(.post, "/v1/reports/\(d)/hide", json: ["note": "спам"], token: supervisor.token).status == .ok)

            let all = try await client.send(.get, "/v1/me/notifications", token: filer.token)
            #expect(all.status == .ok && all.headers[.cacheControl] == "private, no-store")
            let items = try #require(all.json["notifications"] as? [[String: Any]])
            #expect(items.map { $0["report_id"] as? Int } == [a, a])
            #expect(items.map { $0["to_status"] as? String } == ["rejected", "verifying"])
            #expect(items[0]["note"] as? String == "номер не рекламодавця" && items[0]["from_status"] as? String == "verifying")
            #expect(items.allSatisfy { $0["read"] as? Bool == false } && all.json["unread_count"] as? Int == 2)
            let ids = items.compactMap { $0["id"] as? Int }

            let marked = try await client.send(.post, "/v1/me/notifications/read", json: ["up_to": ids[1]], token: filer.token)
            #expect(marked.status == .ok && marked.json["read_up_to"] as? Int == ids[1] && marked.json["unread_count"] as? Int == 1)
            let back = try await client.send(.post, "/v1/me/notifications/read", json: ["up_to": 0], token: filer.token)
            #expect(back.json["read_up_to"] as? Int == ids[1], "a mark never moves back")
            let after = try #require(try await client.send(.get, "/v1/me/notifications", token: filer.token).json["notifications"] as? [[String: Any]])
            #expect(after.map { $0["read"] as? Bool } == [false, true])
            let unread = try await client.send(.get, "/v1/me/notifications?unread=true", token: filer.token)
            #expect((unread.json["notifications"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [ids[0]])

            let first = try await client.send(.get, "/v1/me/notifications?limit=1", token: filer.token)
            let next = try #require(first.json["next"] as? Int)
            let second = try await client.send(.get, "/v1/me/notifications?limit=1&before=\(next)", token: filer.token)
            #expect((second.json["notifications"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [ids[1]])

            let others = try #require(try await client.send(.get, "/v1/me/notifications", token: other.token).json["notifications"] as? [[String: Any]])
            #expect(others.map { $0["report_id"] as? Int } == [c])
            #expect(try await client.send(.get, "/v1/me/notifications").status == .unauthorized)
            let missing = try await client.send(.post, "/v1/me/notifications/read", json: [:], token: filer.token)
            #expect(missing.status == .unprocessableContent && missing.error?["field"] as? String == "up_to")
            // A mark past the newest change stops there: what comes later is unread.
            let ahead = try await client.send(.post, "/v1/me/notifications/read", json: ["up_to": 9_007_199_254_740_991], token: filer.token)
            let mark = try #require(ahead.json["read_up_to"] as? Int)
            #expect(ahead.status == .ok && mark >= ids[0] && mark < 9_007_199_254_740_991 && ahead.json["unread_count"] as? Int == 0)
            let e = try await file(filer.token)
            try await step(e, "verifying", supervisor.token)
            #expect(try await client.send(.get, "/v1/me/notifications", token: filer.token).json["unread_count"] as? Int == 1)
            #expect(try await client.send(.get, "/v1/me/notifications?unread=yes", token: filer.token).status == .badRequest)
        }
    }
}
