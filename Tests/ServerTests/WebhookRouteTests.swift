import Accounts
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import Server
import Testing
import Webhooks

/// `/v1/webhooks` over HTTP: what administrators register and read. Delivery itself is
/// `WebhookTests` (a real server, receivers checking signatures with standardwebhooks).
@Suite("Webhooks over HTTP")
struct WebhookRouteTests {
    @Test("register shows the secret once; list, read, change, disable, enable and delete; the outbox follows the subscription")
    func lifecycle() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let admin = try await AccountRouteTests.admin(fixture, client)
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1).token
            let created = try await client.send(
                .post, "/v1/webhooks", json: ["url": "https://push.example/hook?k=1", "events": ["report.status_changed", "report.created"], "description": "пуш"],
                token: admin)
            #expect(created.status == .created && created.headers[.cacheControl] == "no-store")
            let id = try #require(created.json["id"] as? Int)
            #expect(created.headers[.location] == "/v1/webhooks/\(id)")
            let secret = try #require(created.json["secret"] as? String)
            #expect(secret.hasPrefix("whsec_") && Data(base64Encoded: String(secret.dropFirst(6)))?.count == 32)
            #expect(created.json["events"] as? [String] == ["report.created", "report.status_changed"], "in the feed's order")
            #expect(created.json["enabled"] as? Bool == true && created.json["description"] as? String == "пуш")

            let listed = try await client.send(.get, "/v1/webhooks", token: admin)
            #expect(listed.status == .ok && !listed.bodyText.contains(String(secret.dropFirst(6))) && !listed.bodyText.contains("secret"))
            #expect((listed.json["webhooks"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [id])
            let read = try await client.send(.get, "/v1/webhooks/\(id)", token: admin)
            #expect(read.json["url"] as? String == "https://push.example/hook?k=1" && read.json["secret"] == nil)

            // Filing writes a delivery for the subscribed type; an edit (report.updated) does not.
            let report = try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector)
            let reportID = try #require(report.json["id"] as? Int)
            let edit = try await client.send(
                .patch, "/v1/reports/\(reportID)", json: ["comment": "інший"], token: inspector, headers: [.ifMatch: report.headers[.eTag] ?? ""])
            #expect(edit.status == .ok)
            var deliveries = try await client.send(.get, "/v1/webhooks/\(id)/deliveries", token: admin)
            var items = try #require(deliveries.json["deliveries"] as? [[String: Any]])
            #expect(items.count == 1 && items[0]["type"] as? String == "report.created" && items[0]["state"] as? String == "pending")
            #expect(items[0]["attempt_count"] as? Int == 0 && items[0]["next_at"] is String && (items[0]["attempts"] as? [Any])?.isEmpty == true)

            // Disabled: no new deliveries, and the waiting one has no time; enabled again, it is due.
            let disabled = try await client.send(.patch, "/v1/webhooks/\(id)", json: ["enabled": false, "events": ["report.updated"]], token: admin)
            #expect(disabled.status == .ok && disabled.json["enabled"] as? Bool == false)
            #expect(disabled.json["disabled_reason"] as? String == "disabled by an administrator" && disabled.json["events"] as? [String] == ["report.updated"])
            _ = try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(lon: 30.53), token: inspector)
            deliveries = try await client.send(.get, "/v1/webhooks/\(id)/deliveries?state=pending", token: admin)
            items = try #require(deliveries.json["deliveries"] as? [[String: Any]])
            #expect(items.count == 1 && items[0]["next_at"] == nil)
            let enabled = try await client.send(.patch, "/v1/webhooks/\(id)", json: ["enabled": true], token: admin)
            #expect(enabled.json["enabled"] as? Bool == true && enabled.json["disabled_reason"] == nil)
            items = try #require(try await client.send(.get, "/v1/webhooks/\(id)/deliveries", token: admin).json["deliveries"] as? [[String: Any]])
            #expect(items.count == 1 && items[0]["next_at"] is String)
            #expect(try await client.send(.get, "/v1/webhooks/\(id)/deliveries?state=delivered", token: admin).json["deliveries"] as? [Any] != nil)

            #expect(try await client.send(.delete, "/v1/webhooks/\(id)", token: admin).status == .noContent)
            #expect(try await client.send(.get, "/v1/webhooks/\(id)", token: admin).status == .notFound)
            #expect(try await client.send(.delete, "/v1/webhooks/\(id)", token: admin).status == .notFound)
            #expect(try await client.send(.get, "/v1/webhooks/\(id)/deliveries", token: admin).status == .notFound)
            #expect(try ReportRouteTests.count(fixture, "webhook_delivery") == 0, "its deliveries go with it")
        }
    }

    @Test("a bad registration or change is a 422 naming every bad field, and writes nothing")
    func refusals() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let admin = try await AccountRouteTests.admin(fixture, client)
            func fields(_ answer: Answer) -> Set<String> {
                Set((answer.error?["fields"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String })
            }
            let cases: [([String: Any], Set<String>)] = [
                (["url": "ftp://example.org/x", "events": ["report.created"]], ["url"]),
                (["url": "https://user:pw@example.org/x", "events": ["report.created"]], ["url"]),
                (["url": "https://example.org/x#frag", "events": ["report.created"]], ["url"]),
                (["url": "/relative", "events": []], ["url", "events"]),
                (["url": "http://example.org", "events": ["report.created", "nope", "report.created"]], ["events[1]", "events"]),
                (["url": "http://example.org", "events": ["report.created"], "description": "a\u{7}b", "secret": "mine"], ["description", "secret"]),
                (["events": "report.created"], ["url", "events"]),
                (["url": "http://" + String(repeating: "a", count: 2_100) + ".org", "events": ["report.created"]], ["url"]),
            ]
            for (body, expected) in cases {
                let answer = try await client.send(.post, "/v1/webhooks", json: body, token: admin)
                #expect(answer.status == .unprocessableContent, "\(body)")
                #expect(fields(answer) == expected, "\(body): \(answer.bodyText)")
            }
            #expect(try ReportRouteTests.count(fixture, "webhook") == 0)
            let id = try #require(try await client.send(.post, "/v1/webhooks", json: ["url": "http://example.org", "events": ["report.hidden"]], token: admin).json["id"] as? Int)
            let before = try await client.send(.get, "/v1/webhooks/\(id)", token: admin).bodyText
            let patch = try await client.send(.patch, "/v1/webhooks/\(id)", json: ["url": "gopher://x", "enabled": "yes", "events": []], token: admin)
            #expect(patch.status == .unprocessableContent && fields(patch) == ["url", "enabled", "events"], "\(patch.bodyText)")
            #expect(try await client.send(.patch, "/v1/webhooks/\(id)", json: [:], token: admin).status == .unprocessableContent)
            #expect(try await client.send(.get, "/v1/webhooks/\(id)", token: admin).bodyText == before)
            #expect(try await client.send(.patch, "/v1/webhooks/999", json: ["enabled": false], token: admin).status == .notFound)
            #expect(try await client.send(.get, "/v1/webhooks/0", token: admin).status == .badRequest)
            #expect(try await client.send(.get, "/v1/webhooks/\(id)/deliveries?state=lost", token: admin).status == .badRequest)
        }
    }
}
