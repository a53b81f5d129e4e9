import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReportModel
@testable import Server
import Testing
import TestSupport

/// Assignments over HTTP: who may assign what, what each answer shows and to whom, the
/// inspector's list offline (its `X-Last-Seq`, its tags for `If-Match`), the feed, the
/// notifications and the webhook events, and nothing written by a refusal.
@Suite("Assignments over HTTP")
struct AssignmentRouteTests {
    /// Everything an assignment writes, for "nothing was written".
    static func state(_ fixture: Fixture) throws -> String {
        try fixture.store.pool.read { db in
            try String.fetchOne(db, sql: """
                SELECT (SELECT count(*) || '/' || coalesce(sum(position), 0) || '/' || count(ended_at) FROM assignment) || ' '
                    || (SELECT count(*) FROM report_history) || ' ' || (SELECT count(*) FROM report_change)
                """) ?? ""
        }
    }

    /// The open reports of the fixture in a status, first ones first.
    static func open(_ fixture: Fixture, _ status: String = "confirmed") -> [Int64] {
        fixture.reports.filter { $0.status == status }.map(\.id)
    }

    @Test("a supervisor assigns three reports of an area in bulk; the inspector reads them in order with X-Last-Seq, photos and tags, reorders them, marks one removed with If-Match (a stale tag a 412), and it leaves the list")
    func inspectorsDay() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let boss = try await ReportRouteTests.account(fixture, client, .supervisor, 3)
            let anna = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let ids = Array(Self.open(fixture).prefix(3))
            #expect(ids.count == 3)
            let bulk = try await client.send(.post, "/v1/assignments", json: ["report_ids": ids, "user_id": anna.id, "note": "обхід"], token: boss.token)
            #expect(bulk.status == .ok, "\(bulk.bodyText)")
            #expect((bulk.json["assignments"] as? [[String: Any]])?.compactMap { ($0["user"] as? [String: Any])?["name"] as? String } == Array(repeating: "inspector 1", count: 3))

            let list = try await client.send(.get, "/v1/me/assignments", token: anna.token)
            #expect(list.status == .ok && list.headers[.cacheControl] == "private, no-store")
            let lastSeq = try #require(list.headers[HTTPField.Name("X-Last-Seq")!].flatMap { Int($0) })
            #expect(list.json["last_seq"] as? Int == lastSeq)
            let items = try #require(list.json["assignments"] as? [[String: Any]])
            #expect(items.compactMap { ($0["report"] as? [String: Any])?["id"] as? Int }.map(Int64.init) == ids)
            #expect(items.compactMap { $0["position"] as? Int } == [1, 2, 3] && items.allSatisfy { $0["note"] as? String == "обхід" })
            #expect(items.compactMap { (($0["report"] as? [String: Any])?["properties"] as? [String: Any])?["status"] as? String } == ["confirmed", "confirmed", "confirmed"])

            let reordered = try await client.send(.patch, "/v1/me/assignments", json: ["order": [ids[2], ids[0], ids[1]]], token: anna.token)
            #expect(reordered.status == .ok && (reordered.json["assignments"] as? [[String: Any]])?.compactMap { ($0["report"] as? [String: Any])?["id"] as? Int }.map(Int64.init) == [ids[2], ids[0], ids[1]])
            let stale = try await client.send(.patch, "/v1/me/assignments", json: ["order": [ids[2], ids[0]]], token: anna.token)
            #expect(stale.status == .conflict && stale.error?["code"] as? String == "assignment_conflict", "\(stale.bodyText)")

            // Checked on site, sent later: the tag from the list; a supervisor's edit meanwhile makes it a 412.
            let tags = Dictionary(uniqueKeysWithValues: items.map { (Int64(($0["report"] as! [String: Any])["id"] as! Int), $0["etag"] as! String) })
            let removed = try await client.send(.post, "/v1/reports/\(ids[2])/transitions", json: ["to": "removed"], token: anna.token, headers: [.ifMatch: tags[ids[2]]!])
            #expect(removed.status == .ok, "\(removed.bodyText)")
            let edited = try await client.send(.patch, "/v1/reports/\(ids[0])", json: ["address": "вул. Уточнена, 5"], token: boss.token, headers: [.ifMatch: "*"])
            #expect(edited.status == .ok, "\(edited.bodyText)")
            let late = try await client.send(.post, "/v1/reports/\(ids[0])/transitions", json: ["to": "removed"], token: anna.token, headers: [.ifMatch: tags[ids[0]]!])
            #expect(late.status == .preconditionFailed, "\(late.bodyText)")

            // The removed report left the list; the feed since X-Last-Seq says what changed to the app's reports.
            let after = try await client.send(.get, "/v1/me/assignments", token: anna.token)
            #expect((after.json["assignments"] as? [[String: Any]])?.compactMap { ($0["report"] as? [String: Any])?["id"] as? Int }.map(Int64.init) == [ids[0], ids[1]])
            let feed = try await client.send(.get, "/v1/changes?since=\(lastSeq)", token: anna.token)
            let types = (feed.json["changes"] as? [[String: Any]])?.compactMap { entry in (entry["id"] as? Int).map { "\($0) \(entry["type"] as? String ?? "")" } }
            #expect(types == ["\(ids[2]) report.status_changed", "\(ids[2]) report.unassigned", "\(ids[0]) report.updated"], "\(feed.bodyText)")
        }
    }

    @Test("who may: an inspector takes an unassigned report and gives back their own, never another's or for someone else; only supervisors bulk-assign, list a report's assignments or the assignees; an API key and the public may not; each refusal writes nothing")
    func refusals() async throws {
        let fixture = try await Fixture()
        let (_, key) = try await fixture.accounts().createAPIKey(name: "contact centre")
        try await fixture.test { client in
            let boss = try await ReportRouteTests.account(fixture, client, .supervisor, 3)
            let anna = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let borys = try await ReportRouteTests.account(fixture, client, .inspector, 2)
            let admin = try await ReportRouteTests.account(fixture, client, .admin, 4)
            let ids = Self.open(fixture, "new")
            #expect(try await client.send(.post, "/v1/reports/\(ids[0])/assignment", json: ["user_id": borys.id], token: boss.token).status == .created)
            #expect(try await client.send(.post, "/v1/reports/\(ids[0])/assignment", json: ["user_id": borys.id], token: boss.token).status == .ok, "his already: nothing created")
            let many = try await client.send(.patch, "/v1/me/assignments", json: ["order": Array(repeating: "x", count: 5_000)], token: anna.token)
            #expect(many.status == .unprocessableContent && (many.error?["fields"] as? [Any])?.count == 21, "the first 20 bad items named, then how many more")

            let refused: [(HTTPRequest.Method, String, [String: Any]?, String?, HTTPResponse.Status)] = [
                (.post, "/v1/reports/\(ids[0])/assignment", ["user_id": anna.id], anna.token, .conflict),  // Borys has it
                (.post, "/v1/reports/\(ids[1])/assignment", ["user_id": borys.id], anna.token, .forbidden),  // for someone else
                (.post, "/v1/reports/\(ids[1])/assignment", ["user_id": 999], anna.token, .forbidden),  // nothing learnt of account 999
                (.delete, "/v1/reports/\(ids[0])/assignment", nil, anna.token, .forbidden),  // not hers
                (.delete, "/v1/reports/\(ids[1])/assignment", nil, boss.token, .conflict),  // nobody has it
                (.post, "/v1/reports/\(ids[1])/assignment", ["user_id": admin.id], boss.token, .unprocessableContent),  // an administrator checks nothing
                (.post, "/v1/reports/\(ids[1])/assignment", ["user_id": 999], boss.token, .unprocessableContent),
                (.post, "/v1/reports/\(ids[1])/assignment", ["user_id": "me"], boss.token, .unprocessableContent),
                (.post, "/v1/reports/99999999/assignment", ["user_id": anna.id], boss.token, .notFound),
                (.post, "/v1/assignments", ["report_ids": [ids[1]], "user_id": anna.id], anna.token, .forbidden),
                (.post, "/v1/assignments", ["report_ids": [ids[1], ids[1]], "user_id": anna.id], boss.token, .unprocessableContent),
                (.post, "/v1/assignments", ["report_ids": [Int64](), "user_id": anna.id], boss.token, .unprocessableContent),
                (.post, "/v1/assignments", ["report_ids": [ids[1], 99_999_999], "user_id": anna.id], boss.token, .unprocessableContent),
                (.get, "/v1/reports/\(ids[0])/assignments", nil, anna.token, .forbidden),
                (.get, "/v1/assignees", nil, anna.token, .forbidden),
                (.get, "/v1/reports?assigned=none", nil, anna.token, .forbidden),
                (.get, "/v1/reports?assigned=\(borys.id)", nil, anna.token, .forbidden),
                (.get, "/v1/reports?assigned=me", nil, nil, .unauthorized),
                (.get, "/v1/reports?assigned=me", nil, key, .forbidden),
                (.get, "/v1/reports?assigned=someone", nil, boss.token, .badRequest),
            ] + Endpoint.assignmentEndpoints.flatMap { endpoint -> [(HTTPRequest.Method, String, [String: Any]?, String?, HTTPResponse.Status)] in
                let path = endpoint.path.replacingOccurrences(of: "{id}", with: "\(ids[1])")
                let body: [String: Any]? = endpoint.method == .get || endpoint.method == .delete ? nil : ["user_id": anna.id, "report_ids": [ids[1]], "order": [Int]()]
                return [(endpoint.method, path, body, key, .forbidden), (endpoint.method, path, body, nil, .unauthorized)]
            }
            for (method, path, body, token, status) in refused {
                let before = try Self.state(fixture)
                let answer = try await client.send(method, path, json: body, token: token)
                #expect(answer.status == status, "\(method) \(path): \(answer.bodyText)")
                #expect(try Self.state(fixture) == before, "\(method) \(path) wrote although refused")
            }
            let bulk = try await client.send(.post, "/v1/assignments", json: ["report_ids": [ids[1], 99_999_999, ids[0]], "user_id": anna.id], token: boss.token)
            #expect((bulk.error?["fields"] as? [[String: Any]])?.compactMap { $0["field"] as? String } == ["report_ids[1]"], "\(bulk.bodyText)")

            // What an inspector may do.
            let taken = try await client.send(.post, "/v1/reports/\(ids[1])/assignment", json: ["user_id": anna.id], token: anna.token)
            #expect(taken.status == .created && (taken.json["user"] as? [String: Any])?["id"] as? Int == Int(anna.id), "\(taken.bodyText)")
            let back = try await client.send(.delete, "/v1/reports/\(ids[1])/assignment", token: anna.token)
            #expect(back.status == .ok && back.json["active"] as? Bool == false && back.json["ended_at"] is String)
            // A supervisor reassigns; the report's assignments keep both.
            #expect(try await client.send(.post, "/v1/reports/\(ids[0])/assignment", json: ["user_id": anna.id], token: boss.token).status == .created)
            let trail = try await client.send(.get, "/v1/reports/\(ids[0])/assignments", token: boss.token)
            #expect((trail.json["assignments"] as? [[String: Any]])?.compactMap { $0["active"] as? Bool } == [true, false])
            let assignees = try await client.send(.get, "/v1/assignees", token: boss.token)
            let counts = (assignees.json["assignees"] as? [[String: Any]])?.reduce(into: [String: Int]()) { $0[$1["name"] as? String ?? ""] = $1["assigned"] as? Int }
            #expect(counts?["inspector 1"] == 1 && counts?["inspector 2"] == 0 && counts?["supervisor 3"] == 0 && counts?["admin 4"] == nil, "\(assignees.bodyText)")
            // Disabled, Anna still holds her report: listed last, as one who can no longer check.
            #expect(try await client.send(.patch, "/v1/users/\(anna.id)", json: ["disabled": true], token: admin.token).status == .ok)
            let after = try await client.send(.get, "/v1/assignees", token: boss.token)
            let last = (after.json["assignees"] as? [[String: Any]])?.last
            #expect(last?["name"] as? String == "inspector 1" && last?["can_check"] as? Bool == false && last?["assigned"] as? Int == 1, "\(after.bodyText)")
            #expect((after.json["assignees"] as? [[String: Any]])?.dropLast().allSatisfy { $0["can_check"] as? Bool == true } == true)
        }
    }

    @Test("the public never sees who is assigned: not in a report, the public feed or history; staff see it in the feed; the assignee is notified; a subscribed webhook gets report.assigned and report.unassigned; the assigned filter lists by assignee")
    func visibility() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let boss = try await ReportRouteTests.account(fixture, client, .supervisor, 3)
            let anna = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let admin = try await ReportRouteTests.account(fixture, client, .admin, 4)
            let hook = try await client.send(
                .post, "/v1/webhooks", json: ["url": "https://push.example/hook", "events": ["report.assigned", "report.unassigned"]], token: admin.token)
            #expect(hook.status == .created, "\(hook.bodyText)")
            let ids = Self.open(fixture, "new")
            let since = try fixture.store.lastChange()
            #expect(try await client.send(.post, "/v1/reports/\(ids[0])/assignment", json: ["user_id": anna.id, "note": "таємно"], token: boss.token).status == .created)
            #expect(try await client.send(.post, "/v1/reports/\(ids[1])/assignment", json: ["user_id": anna.id], token: boss.token).status == .created)
            #expect(try await client.send(.delete, "/v1/reports/\(ids[1])/assignment", token: boss.token).status == .ok)

            for path in ["/v1/reports/\(ids[0])", "/v1/reports/\(ids[0])/history", "/v1/changes?since=\(since)", "/v1/reports?bbox=30,50,31,51&limit=500"] {
                let answer = try await client.get(path)
                #expect(answer.status == .ok && !answer.bodyText.contains("таємно") && !answer.bodyText.contains("assignee") && !answer.bodyText.contains("inspector 1"), "\(path): \(answer.bodyText.prefix(300))")
            }
            let history = try await client.get("/v1/reports/\(ids[0])/history")
            #expect((history.json["history"] as? [[String: Any]])?.compactMap { $0["action"] as? String }.contains("assigned") == false)
            let publicFeed = try await client.get("/v1/changes?since=\(since)")
            #expect((publicFeed.json["changes"] as? [[String: Any]])?.compactMap { $0["type"] as? String } == ["report.assigned", "report.assigned", "report.unassigned"])
            let staffFeed = try await client.send(.get, "/v1/changes?since=\(since)", token: boss.token)
            #expect(staffFeed.bodyText.contains("\"assignee\"") && staffFeed.bodyText.contains("таємно"), "\(staffFeed.bodyText.prefix(600))")

            let notes = try await client.send(.get, "/v1/me/notifications", token: anna.token)
            let kinds = (notes.json["notifications"] as? [[String: Any]])?.compactMap { item in (item["report_id"] as? Int).map { "\($0) \(item["type"] as? String ?? "")" } }
            #expect(kinds == ["\(ids[1]) report.unassigned", "\(ids[1]) report.assigned", "\(ids[0]) report.assigned"], "\(notes.bodyText)")

            let queued = try await fixture.store.pool.read { db in try String.fetchAll(db, sql: "SELECT action FROM webhook_delivery ORDER BY id") }
            #expect(queued == ["assigned", "assigned", "unassigned"])

            let mine = try await client.send(.get, "/v1/reports?assigned=me", token: anna.token)
            #expect(mine.features.compactMap { $0["id"] as? Int }.map(Int64.init) == [ids[0]] && mine.json["numberMatched"] as? Int == 1)
            #expect(mine.headers[.cacheControl] == "private, no-store")
            let hers = try await client.send(.get, "/v1/reports?assigned=\(anna.id)", token: boss.token)
            #expect(hers.features.compactMap { $0["id"] as? Int }.map(Int64.init) == [ids[0]])
            let none = try await client.send(.get, "/v1/reports?assigned=none&limit=5", token: boss.token)
            #expect(none.json["numberMatched"] as? Int == fixture.reports.count - 1 && none.features.count == 5, "\(none.bodyText.prefix(200))")
            #expect((none.json["links"] as? [[String: Any]])?.contains { ($0["href"] as? String)?.contains("assigned=none") == true } == true)
        }
    }
}
