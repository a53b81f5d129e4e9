import Accounts
import Foundation
import HTTPTypes
import HummingbirdTesting
import SQLiteStore
@testable import Server
import Testing

/// `GET /v1/changes` over HTTP: what the public and staff see, paging, the snapshot's
/// `X-Last-Seq`, and the 410 that sends a client back to a snapshot.
@Suite("The changes feed over HTTP")
struct ChangeRouteTests {
    @Test("the public sees current reports and bare tombstones; staff see hidden reports, who changed what, and why")
    func views() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let supervisor = try await ReportRouteTests.account(fixture, client, .supervisor, 2)
            let a = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector.token).json["id"] as? Int)
            let b = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(lon: 30.6), token: inspector.token).json["id"] as? Int)
            #expect(try await client.send(.post, "/v1/reports/\(a)/transitions", json: ["to": "verifying"], token: supervisor.token).status == .ok)
            #expect(try await client.send(.post, "/v1/reports/\(b)/hide", json: ["note": "спам"], token: supervisor.token).status == .ok)

            let public_ = try await client.get("/v1/changes")
            #expect(public_.status == .ok)
            let entries = try #require(public_.json["changes"] as? [[String: Any]])
            #expect(entries.map { $0["type"] as? String } == ["report.created", "report.created", "report.status_changed", "report.hidden"])
            #expect(entries.map { $0["id"] as? Int } == [a, b, a, b])
            let seqs = entries.compactMap { $0["seq"] as? Int }
            #expect(seqs == seqs.sorted() && Set(seqs).count == 4 && public_.json["last_seq"] as? Int == seqs.last)
            for entry in entries where entry["id"] as? Int == a {
                let report = try #require(entry["report"] as? [String: Any])
                #expect((report["properties"] as? [String: Any])?["status"] as? String == "verifying", "the report as it is now")
                #expect(entry["at"] is String && entry["change"] == nil && entry["hidden"] == nil)
            }
            for entry in entries where entry["id"] as? Int == b {
                #expect(Set(entry.keys) == ["seq", "type", "id"], "a hidden report is a bare tombstone to the public")
            }
            let text = String(decoding: public_.body, as: UTF8.self)
            #expect(!text.contains("спам") && !text.contains("example.org") && !text.contains("account_id") && !text.contains("filer_id"))
            #expect(public_.headers[.vary]?.contains("Authorization") == true)

            let staff = try await client.send(.get, "/v1/changes", token: supervisor.token)
            #expect(staff.headers[.cacheControl] == "private, no-store")
            let seen = try #require(staff.json["changes"] as? [[String: Any]])
            let hiding = try #require(seen.last)
            #expect((hiding["hidden"] as? [String: Any])?["note"] as? String == "спам" && hiding["report"] is [String: Any])
            #expect((hiding["change"] as? [String: Any])?["account_id"] as? Int == Int(supervisor.id))
            let step = try #require(seen[2]["change"] as? [String: Any])
            #expect(step["from_status"] as? String == "new" && step["to_status"] as? String == "verifying")
            #expect((seen[0]["change"] as? [String: Any])?["account_id"] as? Int == Int(inspector.id))
            #expect(seen[0]["filer_id"] as? Int == Int(inspector.id), "staff see who filed it")
            // An inspector is the public here.
            let asInspector = try await client.send(.get, "/v1/changes", token: inspector.token)
            #expect(asInspector.body == public_.body)
        }
    }

    @Test("pages follow last_seq and add up to the whole feed; snapshots carry X-Last-Seq")
    func paging() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            for i in 0..<7 {
                #expect(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(lon: 30.5 + Double(i) / 100), token: inspector.token).status == .created)
            }
            let whole = try await client.get("/v1/changes?limit=1000")
            let all = try #require(whole.json["changes"] as? [[String: Any]]).compactMap { $0["seq"] as? Int }
            #expect(all.count == 7)
            var since = 0, paged: [Int] = []
            while true {
                let page = try await client.get("/v1/changes?since=\(since)&limit=3")
                let seqs = try #require(page.json["changes"] as? [[String: Any]]).compactMap { $0["seq"] as? Int }
                paged += seqs
                since = try #require(page.json["last_seq"] as? Int)
                if seqs.count < 3 { break }
            }
            #expect(paged == all && since == all.last)
            #expect(try await client.get("/v1/changes?since=\(since)").json["changes"] as? [Any] != nil)

            #expect(try await client.get("/v1/reports?limit=2").headers[.lastSeq] == "\(since)")
            #expect(try await client.get("/v1/export?format=csv").headers[.lastSeq] == "\(since)")
            #expect(try await client.execute(uri: "/v1/export", method: .head) { $0.headers[.lastSeq] } == "\(since)")
        }
    }

    @Test("a since before what is kept or past the last change is a 410 that says to start again; bad parameters are 400s")
    func refusals() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            for _ in 0..<3 { _ = try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: inspector.token) }
            let past = try await client.get("/v1/changes?since=4")
            #expect(past.status == .gone && past.error?["code"] as? String == "changes_unavailable" && past.error?["field"] as? String == "since")
            #expect(try fixture.store.forgetChanges(before: Date().addingTimeInterval(60)) == 3)
            let old = try await client.get("/v1/changes?since=0")
            #expect(old.status == .gone && (old.error?["message"] as? String)?.contains("X-Last-Seq") == true)
            let current = try await client.get("/v1/changes?since=3")
            #expect(current.status == .ok && current.json["last_seq"] as? Int == 3)
            for bad in ["since=-1", "since=abc", "limit=0", "limit=x", "sinse=1"] {
                #expect(try await client.get("/v1/changes?\(bad)").status == .badRequest, "\(bad)")
            }
        }
    }
}
