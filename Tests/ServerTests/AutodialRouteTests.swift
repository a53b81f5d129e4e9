import Accounts
import Foundation
import GRDB
import HTTPTypes
import HummingbirdTesting
import ReportModel
import ReportService
@testable import Server
import Testing
import TestSupport

@Suite("Autodial over HTTP: campaigns, the call log and what each campaign did, for supervisors only")
struct AutodialRouteTests {
    static func rows(_ fixture: Fixture) throws -> Int {
        try fixture.store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM autodial_campaign) + (SELECT count(*) FROM autodial_call) + (SELECT count(*) FROM phone_history)") ?? 0
        }
    }

    @Test("nobody below a supervisor starts, stops or reads a campaign or its calls (an inspector, an integration's key, the public), and a refusal writes nothing")
    func roles() async throws {
        let fixture = try await Fixture()
        let (number, _, _) = PhoneRouteTests.busiest(fixture)
        try await fixture.test { client in
            let (supervisor, _) = try await ReportRouteTests.account(fixture, client, .supervisor, 1)
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 2).token
            let (_, key) = try await fixture.accounts().createAPIKey(name: "contact centre")
            _ = try await client.send(.post, "/v1/phones/\(number)/verification", json: ["outcome": "violator"], token: supervisor)
            let before = try Self.rows(fixture)
            let path = "/v1/phones/\(number)"
            for (token, status) in [(inspector, HTTPResponse.Status.forbidden), (key, .forbidden), (nil, .unauthorized)] {
                #expect(try await client.send(.post, path + "/autodial", json: ["note": "спроба"], token: token).status == status)
                #expect(try await client.send(.post, path + "/autodial/stop", json: [:], token: token).status == status)
                #expect(try await client.send(.get, path + "/autodial", token: token).status == status)
                #expect(try await client.send(.get, path + "/calls", token: token).status == status)
                #expect(try await client.send(.get, "/v1/stats/autodial", token: token).status == status)
            }
            #expect(try Self.rows(fixture) == before, "refusals write nothing")
        }
    }

    @Test("a supervisor starts a campaign on a violator (not on an unverified number, not twice), reads it, its calls page by page and its effect, and stops it; each start and stop is in the feed and the number's history")
    func campaignLifecycle() async throws {
        let fixture = try await Fixture()
        let (number, _, _) = PhoneRouteTests.busiest(fixture)
        try await fixture.test { client in
            let (supervisor, supervisorID) = try await ReportRouteTests.account(fixture, client, .supervisor, 1)
            let path = "/v1/phones/\(PhoneRouteTests.written(number))"
            let unverified = try await client.send(.post, path + "/autodial", json: [:], token: supervisor)
            #expect(unverified.status == .conflict && unverified.error?["code"] as? String == "phone_status_conflict")
            #expect((unverified.error?["message"] as? String)?.contains("verify it first") == true)
            let bad = try await client.send(.post, path + "/autodial", json: ["note": 5, "extra": true], token: supervisor)
            #expect(bad.status == .unprocessableContent)
            #expect(Set((bad.error?["fields"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []) == ["note", "extra"])
            #expect(try await client.send(.post, "/v1/phones/0679999999/autodial", json: [:], token: supervisor).status == .notFound)
            #expect(try Self.rows(fixture) == 0)

            _ = try await client.send(.post, path + "/verification", json: ["outcome": "violator"], token: supervisor)
            // A push gateway subscribed to campaigns' starts and ends.
            let admin = try await ReportRouteTests.account(fixture, client, .admin, 3).token
            let hook = try await client.send(
                .post, "/v1/webhooks", json: ["url": "https://push.example/hook", "events": ["phone.autodial_started", "phone.autodial_stopped"]], token: admin)
            #expect(hook.status == .created)
            let lastSeq = try #require(try await client.get("/v1/changes").json["last_seq"] as? Int)
            let started = try await client.send(.post, path + "/autodial", json: ["note": "дзвонимо"], token: supervisor)
            #expect(started.status == .created)
            #expect(started.json["number"] as? String == number && started.json["active"] as? Bool == true && started.json["note"] as? String == "дзвонимо")
            #expect((started.json["started_by"] as? [String: Any])?["id"] as? Int == Int(supervisorID))
            let twice = try await client.send(.post, path + "/autodial", json: [:], token: supervisor)
            #expect(twice.status == .conflict && twice.error?["code"] as? String == "autodial_conflict")

            // The public feed names the change bare; the public record's history without its note.
            let feed = try await client.get("/v1/changes?since=\(lastSeq)")
            let entries = try #require(feed.json["changes"] as? [[String: Any]])
            #expect(entries.map { $0["type"] as? String } == ["phone.autodial_started"])
            let history = try #require(try await client.get(path).json["history"] as? [[String: Any]])
            #expect(history.map { $0["action"] as? String } == ["verified", "autodial_started"] && history.allSatisfy { $0["note"] == nil })

            // Calls, as the dialer writes them, paged newest first.
            let campaignID = Int64(try #require(started.json["id"] as? Int))
            let t = Date()
            var ids: [Int64] = []
            for i in 0..<3 {
                let claim = CallClaim(campaignID: campaignID, now: t + Double(i * 400), lastCallBy: t + Double(i * 400 - 300), dayStart: t - 60, maxPerDay: 100, channels: 4, leaseUntil: t + Double(i * 400 + 90))
                let call = try await fixture.service.claimCall(claim).get()
                try await fixture.service.finishCall(call.id, CallResult(outcome: i == 1 ? .answered : .busy, sipCode: i == 1 ? 200 : 486, secondsPlayed: i == 1 ? 4.2 : 0, endedAt: t + Double(i * 400 + 5)))
                ids.insert(call.id, at: 0)
            }
            var seen: [Int64] = []
            var next: String? = path + "/calls?limit=2"
            while let uri = next {
                let page = try await client.send(.get, uri, token: supervisor)
                #expect(page.status == .ok)
                let calls = try #require(page.json["calls"] as? [[String: Any]])
                seen += calls.compactMap { ($0["id"] as? Int).map(Int64.init) }
                if let answered = calls.first(where: { $0["answered"] as? Bool == true }) {
                    #expect(answered["outcome"] as? String == "answered" && answered["sip_code"] as? Int == 200 && answered["seconds_played"] as? Double == 4.2)
                }
                next = page.json["next"] as? String
            }
            #expect(seen == ids)
            #expect(try await client.send(.get, path + "/calls?limit=0", token: supervisor).status == .badRequest)

            let stats = try await client.send(.get, "/v1/stats/autodial", token: supervisor)
            let campaigns = try #require(stats.json["campaigns"] as? [[String: Any]])
            #expect(campaigns.count == 1 && campaigns[0]["calls"] as? Int == 3 && campaigns[0]["answered"] as? Int == 1)
            #expect((campaigns[0]["campaign"] as? [String: Any])?["number"] as? String == number)

            let stopped = try await client.send(.post, path + "/autodial/stop", json: ["note": "досить"], token: supervisor)
            #expect(stopped.status == .ok && stopped.json["active"] as? Bool == false && stopped.json["end_reason"] as? String == "stopped")
            #expect(try await client.send(.post, path + "/autodial/stop", json: [:], token: supervisor).status == .conflict)
            let list = try await client.send(.get, path + "/autodial", token: supervisor)
            #expect((list.json["campaigns"] as? [[String: Any]])?.map { $0["end_note"] as? String } == ["досить"])
            let after = try #require(try await client.get("/v1/changes?since=\(lastSeq)").json["changes"] as? [[String: Any]])
            #expect(after.map { $0["type"] as? String } == ["phone.autodial_started", "phone.autodial_stopped"])
            let queued = try await fixture.store.pool.read { db in try String.fetchAll(db, sql: "SELECT action FROM webhook_delivery ORDER BY id") }
            #expect(queued == ["phone_autodial_started", "phone_autodial_stopped"], "each is a webhook event")
        }
    }
}
