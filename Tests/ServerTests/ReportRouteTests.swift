import Accounts
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReportModel
@testable import ReportService
import SQLiteStore
@testable import Server
import Testing

/// Filing and working reports over HTTP: intake, idempotency, hints, the workflow by role,
/// edits with If-Match, hiding and history.
@Suite("Filing and working reports over HTTP")
struct ReportRouteTests {
    static let reference = try! ReferenceData.bundled()

    /// A valid flat report at a place in Kyiv.
    static func newReport(lon: Double = 30.5234, lat: Double = 50.4501, phones: [String] = ["067 765 43 21"]) -> [String: Any] {
        let type = reference.objectTypes[0].code
        return [
            "longitude": lon, "latitude": lat, "address": "вул. Хрещатик, 1", "city": "Київ", "district": reference.districts[0].code,
            "object_type": type, "balance_holder": reference.holders(for: type)[0].code, "phones": phones, "comment": "на стовпі",
        ]
    }

    /// The same as a GeoJSON Feature.
    static func newFeature(lon: Double = 30.5234, lat: Double = 50.4501) -> [String: Any] {
        var properties = newReport()
        properties["longitude"] = nil
        properties["latitude"] = nil
        return ["type": "Feature", "geometry": ["type": "Point", "coordinates": [lon, lat]], "properties": properties]
    }

    /// A signed-in account of `role`; its token and id.
    static func account(_ fixture: Fixture, _ client: any TestClientProtocol, _ role: Role, _ n: Int) async throws -> (token: String, id: Int64) {
        let password = AccountRouteTests.password
        let draft = try AccountDraft(name: "\(role) \(n)", email: "\(role)\(n)@example.org", phone: "063 000 00 \(10 + n)", password: password, role: role)
        let account = try await fixture.accounts().create(draft)
        let login = try await client.send(.post, "/v1/auth/login", json: ["login": draft.email, "password": password])
        return (try #require(login.json["access_token"] as? String), account.id)
    }

    static func count(_ fixture: Fixture, _ table: String) throws -> Int {
        try fixture.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0 }
    }

    @Test("filing answers 201 with Location, ETag and the report; the public form never names the filer, a supervisor's does")
    func filing() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await Self.account(fixture, client, .inspector, 1)
            let supervisor = try await Self.account(fixture, client, .supervisor, 2)
            for body in [Self.newReport(), Self.newFeature()] {
                let filed = try await client.send(.post, "/v1/reports", json: body, token: inspector.token)
                #expect(filed.status == .created)
                let id = try #require(filed.json["id"] as? Int)
                #expect(filed.headers[.location] == "/v1/reports/\(id)" && filed.headers[.eTag] != nil)
                let properties = try #require(filed.json["properties"] as? [String: Any])
                #expect(properties["status"] as? String == "new" && properties["phones"] as? [String] == ["380677654321"])
                #expect(filed.json["possible_duplicates"] is [Any])

                let plain = try await client.get("/v1/reports/\(id)")
                #expect(plain.status == .ok && plain.json["filer"] == nil && plain.headers[.eTag] == filed.headers[.eTag])
                #expect(!String(decoding: plain.body, as: UTF8.self).contains("inspector1@example.org"))
                let asInspector = try await client.send(.get, "/v1/reports/\(id)", token: inspector.token)
                #expect(asInspector.json["filer"] == nil)
                let asSupervisor = try await client.send(.get, "/v1/reports/\(id)", token: supervisor.token)
                let filer = try #require(asSupervisor.json["filer"] as? [String: Any])
                #expect(filer["email"] as? String == "inspector1@example.org" && filer["id"] as? Int == Int(inspector.id))
                #expect(asSupervisor.headers[.cacheControl] == "private, no-store" && asSupervisor.headers[.eTag] != plain.headers[.eTag])
                #expect(plain.headers[.vary]?.contains("Authorization") == true)
            }
            #expect(try await client.send(.post, "/v1/reports", json: Self.newReport()).status == .unauthorized)
        }
    }

    @Test("a bad filing is one 422 naming every field and its rule, and writes nothing")
    func badFiling() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await Self.account(fixture, client, .inspector, 1)
            let reports = try Self.count(fixture, "report")
            var body = Self.newReport(lon: 24.03, lat: 49.84, phones: ["067 111 22 33", "0501234567", "не номер"])
            body["object_type"] = "spaceship"
            body["comment"] = String(repeating: "я", count: 2001)
            body["status"] = "confirmed"
            body["colour"] = "red"
            let answer = try await client.send(.post, "/v1/reports", json: body, token: inspector.token)
            #expect(answer.status == .unprocessableContent)
            let fields = Set((answer.error?["fields"] as? [[String: String]] ?? []).compactMap { $0["field"] })
            #expect(fields == ["phones[2]", "longitude", "object_type", "comment", "status", "colour"])

            var holder = Self.newReport()
            holder["balance_holder"] = Self.reference.balanceHolders.first { !$0.objectTypes.contains(holder["object_type"] as! String) }!.code
            holder["phones"] = [String]()
            let mismatch = try await client.send(.post, "/v1/reports", json: holder, token: inspector.token)
            #expect(Set((mismatch.error?["fields"] as? [[String: String]] ?? []).compactMap { $0["field"] }) == ["balance_holder", "phones"])
            var six = Self.newReport()
            six["phones"] = (0..<6).map { "067 000 00 0\($0)" }
            #expect(try await client.send(.post, "/v1/reports", json: six, token: inspector.token).error?["field"] as? String == "phones")

            var feature = Self.newFeature(lon: 200, lat: 50)
            feature["id"] = 5
            let badFeature = try await client.send(.post, "/v1/reports", json: feature, token: inspector.token)
            #expect(Set((badFeature.error?["fields"] as? [[String: String]] ?? []).compactMap { $0["field"] }) == ["geometry", "id"])
            #expect(try await client.send(.post, "/v1/reports", raw: "[1]", token: inspector.token, headers: [.contentType: "application/json"]).status == .badRequest)
            // Not JSON, or a member named twice (readers differ on which of the two counts): a 400 saying where.
            let valid = String(decoding: try JSONSerialization.data(withJSONObject: Self.newReport(), options: [.sortedKeys]), as: UTF8.self)
            for (raw, said) in [
                (String(valid.dropLast()) + #","latitude":0}"#, #"the member "latitude" is given twice in one object"#),
                (String(valid.dropLast()) + #","colour":"a",}"#, "expected a member name"),
                (valid + " {}", "text follows the object"),
            ] {
                let refused = try await client.send(.post, "/v1/reports", raw: raw, token: inspector.token, headers: [.contentType: "application/json"])
                #expect(refused.status == .badRequest && refused.error?["code"] as? String == "invalid_json", "\(raw)")
                #expect((refused.error?["message"] as? String)?.contains(said) == true, "\(refused.error ?? [:])")
            }
            #expect(try await client.send(.post, "/v1/reports", raw: valid, token: inspector.token, headers: [.contentType: "application/json"]).status == .created)
            #expect(try Self.count(fixture, "report") == reports + 1 && Self.count(fixture, "report_history") == 1)
        }
    }

    @Test("an Idempotency-Key replays the first answer and files once; another body is a 422; a key still running is a 409")
    func idempotency() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await Self.account(fixture, client, .inspector, 1)
            let other = try await Self.account(fixture, client, .inspector, 2)
            let key: HTTPFields = [.idempotencyKey: "3b9f6a2e-offline-1"]
            let first = try await client.send(.post, "/v1/reports", json: Self.newReport(), token: inspector.token, headers: key)
            let again = try await client.send(.post, "/v1/reports", json: Self.newReport(), token: inspector.token, headers: key)
            #expect(first.status == .created && again.status == .created && first.body == again.body, "\(first.status) \(again.status) \(String(decoding: again.body, as: UTF8.self))")
            #expect(again.headers[.location] == first.headers[.location] && again.headers[.eTag] == first.headers[.eTag])
            #expect(try Self.count(fixture, "report") == 401)
            let changed = try await client.send(.post, "/v1/reports", json: Self.newReport(lon: 30.6), token: inspector.token, headers: key)
            #expect(changed.status == .unprocessableContent && changed.error?["field"] as? String == "Idempotency-Key")
            // Keys belong to their caller: another account's same key is a new filing.
            #expect(try await client.send(.post, "/v1/reports", json: Self.newReport(), token: other.token, headers: key).status == .created)
            #expect(try Self.count(fixture, "report") == 402)
            for bad in ["", String(repeating: "k", count: 256), "ключ"] {
                let answer = try await client.send(.post, "/v1/reports", json: Self.newReport(), token: inspector.token, headers: [.idempotencyKey: bad])
                #expect(answer.status == .badRequest && answer.error?["field"] as? String == "Idempotency-Key")
            }
            let caller = Caller(accountID: inspector.id, role: .inspector)
            fixture.service.keysInFlight.withLock { _ = $0.insert("a:\(inspector.id) running") }
            let running = try await client.send(.post, "/v1/reports", json: Self.newReport(), token: inspector.token, headers: [.idempotencyKey: "running"])
            #expect(running.status == .conflict && running.error?["code"] as? String == "idempotency_key_in_flight")
            _ = caller
            #expect(try Self.count(fixture, "report") == 402)
        }
    }

    @Test("duplicate hints: open reports within 50 m or sharing a phone, nearest first, at most 5; closed ones are not hinted")
    func hints() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await Self.account(fixture, client, .inspector, 1)
            let near = try await client.send(.post, "/v1/reports", json: Self.newReport(lon: 30.6000, lat: 50.5000, phones: ["044 111 11 11"]), token: inspector.token)
            let nearID = try #require(near.json["id"] as? Int)
            let far = try await client.send(.post, "/v1/reports", json: Self.newReport(lon: 30.4000, lat: 50.4000, phones: ["044 222 22 22"]), token: inspector.token)
            let farID = try #require(far.json["id"] as? Int)
            // 30 m north of the first, sharing the second's phone.
            let filed = try await client.send(
                .post, "/v1/reports", json: Self.newReport(lon: 30.6000, lat: 50.50027, phones: ["044 222 22 22"]), token: inspector.token)
            let hints = try #require(filed.json["possible_duplicates"] as? [[String: Any]])
            #expect(hints.map { $0["id"] as? Int } == [nearID, farID])
            let distance = try #require(hints.first?["distance_m"] as? Double)
            #expect(abs(distance - 30.0) < 0.5)
            #expect(hints.last?["shared_phones"] as? [String] == ["380442222222"])

            let nearby = try await client.get("/v1/reports/nearby?lon=30.6&lat=50.5&radius=100")
            #expect((nearby.json["possible_duplicates"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }.sorted() == [nearID, filed.json["id"] as! Int].sorted())
            #expect(try await client.get("/v1/reports/nearby?lon=30.6&lat=91").error?["field"] as? String == "lat")
            #expect(try await client.get("/v1/reports/nearby?lon=30.6&lat=50.5&radius=5000").status == .badRequest)

            try await Self.force(fixture, Int64(nearID), "removed")
            let closed = try await client.get("/v1/reports/nearby?lon=30.6&lat=50.5&radius=100")
            #expect((closed.json["possible_duplicates"] as? [[String: Any]])?.contains { $0["id"] as? Int == nearID } == false)
        }
    }

    @Test("the caller's own reports, newest first, paged; no one else's")
    func myReports() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let mine = try await Self.account(fixture, client, .inspector, 1)
            let theirs = try await Self.account(fixture, client, .inspector, 2)
            var ids: [Int] = []
            for i in 0..<5 {
                let filed = try await client.send(.post, "/v1/reports", json: Self.newReport(lon: 30.5 + Double(i) / 100), token: mine.token)
                ids.append(try #require(filed.json["id"] as? Int))
            }
            _ = try await client.send(.post, "/v1/reports", json: Self.newReport(), token: theirs.token)
            let first = try await client.send(.get, "/v1/me/reports?limit=3", token: mine.token)
            #expect(first.features.map { $0["id"] as? Int } == ids.reversed().prefix(3).map { $0 })
            let next = try #require(((first.json["links"] as? [[String: Any]])?.first?["href"]) as? String)
            let second = try await client.send(.get, next, token: mine.token)
            #expect(second.features.map { $0["id"] as? Int } == [ids[1], ids[0]] && second.json["links"] == nil)
            #expect(try await client.get("/v1/me/reports").status == .unauthorized)
        }
    }

    /// Puts report `id` into `status` through the service, as the system.
    static func force(_ fixture: Fixture, _ id: Int64, _ status: String) async throws {
        guard let report = try await fixture.service.report(id: id) else { throw ReportNotFound(id: id) }
        _ = try fixture.service.update(id: id, with: ReportDraft(report).with(status: status))
    }

    @Test("every step of the transition table, and every other pair, for the filer, another inspector, a supervisor and an admin")
    func transitions() async throws {
        let fixture = try await Fixture()
        // Some 450 writes from one client, faster than the default write limit allows when
        // this suite runs alone; the limits have their own tests (AbuseTests).
        var unlimited = ServerConfiguration()
        unlimited.rateLimits = .none
        try await fixture.test(configuration: unlimited) { client in
            let filer = try await Self.account(fixture, client, .inspector, 1)
            let other = try await Self.account(fixture, client, .inspector, 2)
            let supervisor = try await Self.account(fixture, client, .supervisor, 3)
            let admin = try await Self.account(fixture, client, .admin, 4)
            let original = try #require(try await client.send(.post, "/v1/reports", json: Self.newReport(lon: 30.41), token: filer.token).json["id"] as? Int)
            let who: [(String, String, Role?)] = [("filer", filer.token, nil), ("other", other.token, .inspector), ("supervisor", supervisor.token, .supervisor), ("admin", admin.token, .admin)]
            let statuses = Self.reference.statuses.map(\.code)
            for from in statuses {
                for to in statuses where to != from {
                    let step = Self.reference.transition(from: from, to: to)
                    for (name, token, role) in who {
                        let id = try #require(try await client.send(.post, "/v1/reports", json: Self.newReport(), token: filer.token).json["id"] as? Int)
                        try await Self.force(fixture, Int64(id), from)
                        var body: [String: Any] = ["to": to]
                        if step?.noteRequired == true { body["note"] = "причина" }
                        if step?.duplicateOfRequired == true { body["duplicate_of"] = original }
                        let answer = try await client.send(.post, "/v1/reports/\(id)/transitions", json: body, token: token)
                        let label = "\(from) → \(to) by \(name)"
                        guard let step else {
                            #expect(answer.status == .conflict, "\(label)")
                            let allowed = Self.reference.transitions(from: from).map(\.to)
                            #expect(allowed.allSatisfy { (answer.error?["message"] as? String ?? "").contains($0) }, "\(label)")
                            continue
                        }
                        let may = step.by.contains { actor in
                            actor == "filer" ? name == "filer" : (role ?? .inspector).includes(Role(rawValue: actor)!)
                        }
                        #expect(answer.status == (may ? .ok : .forbidden), "\(label): \(answer.status)")
                        let now = try #require(try await fixture.service.report(id: Int64(id))).status
                        #expect(now == (may ? to : from), "\(label)")
                    }
                }
            }
        }
    }

    @Test("a rejection needs a note; a duplicate needs an existing report that is not itself a duplicate; If-Match is honoured")
    func transitionRules() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let filer = try await Self.account(fixture, client, .inspector, 1)
            let supervisor = try await Self.account(fixture, client, .supervisor, 2)
            let filed = try await client.send(.post, "/v1/reports", json: Self.newReport(), token: filer.token)
            let id = try #require(filed.json["id"] as? Int)
            let path = "/v1/reports/\(id)/transitions"
            #expect(try await client.send(.post, path, json: ["to": "rejected"], token: supervisor.token).error?["field"] as? String == "note")
            #expect(try await client.send(.post, path, json: ["to": "rejected", "note": "   "], token: supervisor.token).status == .unprocessableContent)
            // A NUL would be cut off by SQLite and refused by PostgreSQL's text (a 500 there): refused here.
            let nul = try await client.send(.post, path, json: ["to": "rejected", "note": "спам\u{0}tail"], token: supervisor.token)
            #expect(nul.status == .unprocessableContent && nul.error?["field"] as? String == "note", "\(nul.json)")
            #expect(try await client.send(.post, path, json: ["to": "duplicate"], token: supervisor.token).error?["field"] as? String == "duplicate_of")
            #expect(try await client.send(.post, path, json: ["to": "duplicate", "duplicate_of": id], token: supervisor.token).error?["field"] as? String == "duplicate_of")
            #expect(try await client.send(.post, path, json: ["to": "duplicate", "duplicate_of": 999_999], token: supervisor.token).status == .unprocessableContent)
            #expect(try await client.send(.post, path, json: ["to": "verifying", "duplicate_of": 1], token: supervisor.token).error?["field"] as? String == "duplicate_of")
            #expect(try await client.send(.post, path, json: ["to": "nowhere"], token: supervisor.token).error?["field"] as? String == "to")
            let dup = fixture.reports[1].id
            try await Self.force(fixture, dup, "duplicate")
            #expect(try await client.send(.post, path, json: ["to": "duplicate", "duplicate_of": dup], token: supervisor.token).status == .unprocessableContent)

            let stale = try await client.send(.post, path, json: ["to": "verifying"], token: supervisor.token, headers: [.ifMatch: "\"\(id)-1\""])
            #expect(stale.status == .preconditionFailed)
            let current = try #require(filed.headers[.eTag])
            let moved = try await client.send(.post, path, json: ["to": "verifying"], token: supervisor.token, headers: [.ifMatch: current])
            #expect(moved.status == .ok && (moved.json["properties"] as? [String: Any])?["status"] as? String == "verifying")
            #expect(moved.headers[.eTag] != current)
            let twice = try await client.send(.post, path, json: ["to": "verifying"], token: supervisor.token)
            #expect(twice.status == .conflict && (twice.error?["message"] as? String)?.contains("confirmed") == true)
            #expect(try await client.send(.post, "/v1/reports/999999/transitions", json: ["to": "verifying"], token: supervisor.token).status == .notFound)
            #expect((try await client.get("/v1/reports/\(id)/history").json["history"] as? [Any])?.count == 2)
        }
    }

    @Test("edits: If-Match required (428) and current (412); the filer while new, supervisors always; never the status; history keeps before and after")
    func edits() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let filer = try await Self.account(fixture, client, .inspector, 1)
            let other = try await Self.account(fixture, client, .inspector, 2)
            let supervisor = try await Self.account(fixture, client, .supervisor, 3)
            let filed = try await client.send(.post, "/v1/reports", json: Self.newReport(), token: filer.token)
            let id = try #require(filed.json["id"] as? Int)
            var tag = try #require(filed.headers[.eTag])
            let path = "/v1/reports/\(id)"
            let missing = try await client.send(.patch, path, json: ["address": "вул. Нова, 2"], token: filer.token)
            #expect(missing.status == .preconditionRequired && missing.error?["field"] as? String == "If-Match")
            #expect(try await client.send(.patch, path, json: ["address": "вул. Нова, 2"], token: filer.token, headers: [.ifMatch: "\"\(id)-5\""]).status == .preconditionFailed)
            #expect(try await client.send(.patch, path, json: ["address": "вул. Нова, 2"], token: other.token, headers: [.ifMatch: tag]).status == .forbidden)
            let bad = try await client.send(.patch, path, json: ["status": "confirmed", "address": nil as Any? ?? NSNull(), "phones": ["нуль"]], token: filer.token, headers: [.ifMatch: tag])
            #expect(Set((bad.error?["fields"] as? [[String: String]] ?? []).compactMap { $0["field"] }) == ["status", "address", "phones[0]"])

            let edited = try await client.send(.patch, path, json: ["address": "вул. Нова, 2", "comment": NSNull(), "latitude": 50.46], token: filer.token, headers: [.ifMatch: tag])
            #expect(edited.status == .ok)
            let properties = try #require(edited.json["properties"] as? [String: Any])
            #expect(properties["address"] as? String == "вул. Нова, 2" && properties["comment"] is NSNull && properties["status"] as? String == "new")
            #expect(((edited.json["geometry"] as? [String: Any])?["coordinates"] as? [Double])?.last == 50.46)
            #expect(try await client.send(.patch, path, json: ["city": "Бровари"], token: filer.token, headers: [.ifMatch: tag]).status == .preconditionFailed, "the old tag is stale")
            tag = try #require(edited.headers[.eTag])
            let outside = try await client.send(.patch, path, json: ["longitude": 10.0], token: filer.token, headers: [.ifMatch: tag])
            #expect(outside.status == .unprocessableContent && outside.error?["field"] as? String == "longitude")

            _ = try await client.send(.post, "/v1/reports/\(id)/transitions", json: ["to": "verifying"], token: supervisor.token)
            let late = try await client.send(.get, path)
            tag = try #require(late.headers[.eTag])
            #expect(try await client.send(.patch, path, json: ["city": "Бровари"], token: filer.token, headers: [.ifMatch: tag]).status == .forbidden)
            let bySupervisor = try await client.send(.patch, path, json: ["city": "Бровари"], token: supervisor.token, headers: [.ifMatch: tag])
            #expect(bySupervisor.status == .ok)

            let history = try await client.send(.get, "/v1/reports/\(id)/history", token: supervisor.token)
            let entries = try #require(history.json["history"] as? [[String: Any]])
            #expect(entries.map { $0["action"] as? String } == ["filed", "edited", "transition", "edited"])
            let changes = try #require(entries[1]["changes"] as? [[String: Any]])
            #expect(Set(changes.compactMap { $0["field"] as? String }) == ["address", "comment", "position"])
            #expect(changes.first { $0["field"] as? String == "address" }?["before"] as? String == "вул. Хрещатик, 1")
            #expect((entries[2]["by"] as? [String: Any])?["name"] as? String == "supervisor 3")
            let public_ = try await client.get("/v1/reports/\(id)/history")
            let publicEntries = try #require(public_.json["history"] as? [[String: Any]])
            #expect(publicEntries.map { $0["action"] as? String } == ["filed", "transition"])
            #expect(publicEntries.allSatisfy { $0["by"] == nil && $0["note"] == nil && $0["changes"] == nil })
            #expect(!String(decoding: public_.body, as: UTF8.self).contains("supervisor 3"))
            #expect(history.json["next"] == nil && public_.json["next"] == nil, "one page holds it all")
            // In pages of two: `next` reads on, for the public too (who may see none of a page).
            var pages: [[String?]] = [], publicPages: [[String?]] = []
            for (token, into) in [(supervisor.token as String?, 0), (nil, 1)] {
                var after: Int? = 0
                while let from = after {
                    let page = try await client.send(.get, "/v1/reports/\(id)/history?limit=2&after=\(from)", token: token)
                    let actions = (page.json["history"] as? [[String: Any]] ?? []).map { $0["action"] as? String }
                    if into == 0 { pages.append(actions) } else { publicPages.append(actions) }
                    after = page.json["next"] as? Int
                    if pages.count + publicPages.count > 10 { break }
                }
            }
            #expect(pages == [["filed", "edited"], ["transition", "edited"], []])
            #expect(publicPages == [["filed"], ["transition"], []])
            for bad in ["limit=0", "limit=1001", "after=-1", "after=x"] {
                let refused = try await client.get("/v1/reports/\(id)/history?\(bad)")
                #expect(refused.status == .badRequest && refused.error?["field"] as? String == String(bad.prefix { $0 != "=" }), "\(bad)")
            }
        }
    }

    @Test("a hidden report leaves every public answer (report, listing, clusters, search, export, OGC, history); supervisors still see it; unhide brings it back")
    func hiding() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await Self.account(fixture, client, .inspector, 1)
            let supervisor = try await Self.account(fixture, client, .supervisor, 2)
            let filed = try await client.send(.post, "/v1/reports", json: Self.newReport(lon: 30.7777, lat: 50.3333, phones: ["099 313 13 13"]), token: inspector.token)
            let id = try #require(filed.json["id"] as? Int)
            let box = "30.77,50.33,30.78,50.34"
            let n = Double(1 << 16)
            let tile = "/v1/tiles/16/\(Int(WebMercator.x(longitude: 30.7777) * n))/\(Int(WebMercator.y(latitude: 50.3333) * n)).png"
            func publicViews() async throws -> [String: Bool] {
                [
                    "report": try await client.get("/v1/reports/\(id)").status == .ok,
                    "listing": try await client.get("/v1/reports?bbox=\(box)").features.contains { $0["id"] as? Int == id },
                    "clusters": counted(try await client.get("/v1/clusters?bbox=\(box)&zoom=16").features) == 1,
                    "search": try await client.get("/v1/search?q=099%20313").features.contains { $0["id"] as? Int == id },
                    "export": String(decoding: try await client.get("/v1/export?format=csv&bbox=\(box)").body, as: UTF8.self).contains("380993131313"),
                    "ogc": try await client.get("/ogc/collections/reports/items/\(id)").status == .ok,
                    "history": try await client.get("/v1/reports/\(id)/history").status == .ok,
                    "health": try await client.get("/health").json["reports"] as? Int == 401,
                    "tile": try await client.get(tile).status == .ok,
                ]
            }
            #expect(try await publicViews().values.allSatisfy { $0 })
            #expect(try await client.send(.post, "/v1/reports/\(id)/hide", json: ["note": "спам"], token: inspector.token).status == .forbidden)
            #expect(try await client.send(.post, "/v1/reports/\(id)/hide", json: [:], token: supervisor.token).error?["field"] as? String == "note")
            let hidden = try await client.send(.post, "/v1/reports/\(id)/hide", json: ["note": "спам"], token: supervisor.token)
            #expect(hidden.status == .ok && (hidden.json["hidden"] as? [String: Any])?["note"] as? String == "спам")
            let afterHiding = try await publicViews()
            #expect(afterHiding.values.allSatisfy { !$0 }, "\(afterHiding)")
            let seen = try await client.send(.get, "/v1/reports/\(id)", token: supervisor.token)
            #expect(seen.status == .ok && seen.json["hidden"] != nil)
            #expect(try await client.send(.get, "/v1/reports/\(id)", token: inspector.token).status == .notFound)
            #expect(try await client.send(.post, "/v1/reports/\(id)/transitions", json: ["to": "verifying"], token: inspector.token).status == .notFound)
            #expect(try await client.send(.post, "/v1/reports/\(id)/transitions", json: ["to": "verifying"], token: supervisor.token).status == .conflict)
            #expect(try await client.send(.post, "/v1/reports/\(id)/hide", json: ["note": "ще раз"], token: supervisor.token).status == .conflict)

            #expect(try await client.send(.post, "/v1/reports/\(id)/unhide", json: [:], token: supervisor.token).status == .ok)
            #expect(try await publicViews().values.allSatisfy { $0 })
            #expect(try await client.send(.post, "/v1/reports/\(id)/unhide", json: [:], token: supervisor.token).status == .conflict)
            let history = try await client.send(.get, "/v1/reports/\(id)/history", token: supervisor.token)
            #expect((history.json["history"] as? [[String: Any]])?.map { $0["action"] as? String } == ["filed", "hidden", "unhidden"])
        }
    }
}

extension ReportDraft {
    /// The same draft with another status.
    func with(status: String) -> ReportDraft {
        var d = self
        d.status = status
        return d
    }
}
