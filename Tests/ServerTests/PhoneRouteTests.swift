import Accounts
import Foundation
import Geometry
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReportModel
import ReportService
import SQLiteStore
@testable import Server
import Testing
import TestSupport

@Suite("Phones over HTTP: records, verification and blocking, the blocklist, rankings")
struct PhoneRouteTests {
    /// The number the most fixture reports carry, and those of its reports a block moves
    /// (confirmed, and carrying no other number).
    static func busiest(_ fixture: Fixture) -> (number: String, reports: [Report], moved: Set<Int64>) {
        let counts = Dictionary(grouping: fixture.reports.flatMap { r in r.phones.map { ($0, r) } }, by: \.0)
        let number = counts.max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }!.key
        let reports = fixture.reports.filter { $0.phones.contains(number) }
        return (number, reports, Set(reports.filter { $0.status == "confirmed" && $0.phones == [number] }.map(\.id)))
    }

    /// A number written as people write it, `%20` for each space: `067 123 45 67`.
    static func written(_ number: String) -> String {
        let local = "0" + number.dropFirst(3)
        return [local.prefix(3), local.dropFirst(3).prefix(3), local.dropFirst(6).prefix(2), local.dropFirst(8)].joined(separator: "%20")
    }

    static func phoneRows(_ fixture: Fixture) throws -> Int {
        try fixture.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM phone) + (SELECT count(*) FROM phone_history)") ?? 0 }
    }

    @Test("a supervisor verifies and blocks a number written any way; the reports move, and back on unblock but for one moved on since; the public record hides who and why, the supervisor's shows them")
    func verifyAndBlock() async throws {
        let fixture = try await Fixture()
        let (number, reports, moved) = Self.busiest(fixture)
        try #require(!moved.isEmpty, "the fixture has confirmed reports of the busiest number")
        try await fixture.test { client in
            let (supervisor, supervisorID) = try await ReportRouteTests.account(fixture, client, .supervisor, 1)
            let path = "/v1/phones/\(Self.written(number))"

            let refused = try await client.send(.post, path + "/block", json: ["note": "спроба"], token: supervisor)
            #expect(refused.status == .conflict && refused.error?["code"] as? String == "phone_status_conflict")
            #expect((refused.error?["message"] as? String)?.contains("only a number verified as violator can be blocked") == true)
            let bad = try await client.send(.post, path + "/verification", json: ["outcome": "maybe", "note": 5, "extra": 1], token: supervisor)
            #expect(bad.status == .unprocessableContent)
            #expect(Set((bad.error?["fields"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []) == ["outcome", "note", "extra"])
            #expect(try Self.phoneRows(fixture) == 0, "refusals write nothing")

            let verified = try await client.send(.post, path + "/verification", json: ["outcome": "violator", "note": "дзвонили"], token: supervisor)
            #expect(verified.status == .ok && verified.json["status"] as? String == "violator")
            let blocked = try await client.send(.post, "/v1/phones/+\(number)/block", json: ["note": "оператор"], token: supervisor)
            #expect(blocked.status == .ok && blocked.json["status"] as? String == "blocked" && blocked.json["blocked_at"] is String)
            #expect(Set((blocked.json["moved_reports"] as? [Int])?.map(Int64.init) ?? []) == moved)
            for id in moved {
                #expect(try await client.get("/v1/reports/\(id)").json["properties"].flatMap { ($0 as? [String: Any])?["status"] as? String } == "phone_blocked")
            }

            let publicRecord = try await client.get(path)
            #expect(publicRecord.status == .ok && publicRecord.json["number"] as? String == number)
            let counts = try #require(publicRecord.json["reports"] as? [String: Any])
            #expect(counts["total"] as? Int == reports.count)
            let history = try #require(publicRecord.json["history"] as? [[String: Any]])
            #expect(history.map { $0["action"] as? String } == ["verified", "blocked"])
            #expect(history.allSatisfy { $0["note"] == nil && $0["by"] == nil }, "the public sees neither notes nor who")
            #expect(history[1]["moved_reports"] as? Int == moved.count)
            let staffRecord = try await client.send(.get, path, token: supervisor)
            let staffHistory = try #require(staffRecord.json["history"] as? [[String: Any]])
            #expect(staffHistory[0]["note"] as? String == "дзвонили")
            #expect((staffHistory[1]["by"] as? [String: Any])?["id"] as? Int == Int(supervisorID))
            #expect(staffRecord.headers[.cacheControl] == "private, no-store")

            let notVerifiable = try await client.send(.post, path + "/verification", json: ["outcome": "not_violator"], token: supervisor)
            #expect(notVerifiable.status == .conflict)
            // A supervisor moves one of them on; the unblock leaves it where it is.
            let movedOn = try #require(moved.min())
            let removed = try await client.send(.post, "/v1/reports/\(movedOn)/transitions", json: ["to": "removed"], token: supervisor)
            #expect(removed.status == .ok)
            let unblocked = try await client.send(.post, path + "/unblock", json: [:], token: supervisor)
            #expect(unblocked.status == .ok && unblocked.json["status"] as? String == "violator")
            #expect(Set((unblocked.json["moved_reports"] as? [Int])?.map(Int64.init) ?? []) == moved.subtracting([movedOn]))
            for id in moved {
                let status = try await client.get("/v1/reports/\(id)").json["properties"].flatMap { ($0 as? [String: Any])?["status"] as? String }
                #expect(status == (id == movedOn ? "removed" : "confirmed"), "report \(id)")
            }
            #expect(try await client.send(.post, path + "/unblock", json: [:], token: supervisor).status == .conflict)
        }
    }

    @Test("unknown and malformed numbers: a 404 and a 400 naming `number`")
    func badNumbers() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let (supervisor, _) = try await ReportRouteTests.account(fixture, client, .supervisor, 1)
            let unknown = try await client.get("/v1/phones/0679999999")
            #expect(unknown.status == .notFound && unknown.error?["field"] as? String == "number")
            #expect(try await client.send(.post, "/v1/phones/0679999999/verification", json: ["outcome": "violator"], token: supervisor).status == .notFound)
            for text in ["12", "abc", "067-123-45-6x", String(repeating: "1", count: 60)] {
                let bad = try await client.get("/v1/phones/\(text)")
                #expect(bad.status == .badRequest && bad.error?["field"] as? String == "number", "\(text)")
            }
        }
    }

    @Test("a number's reports, paged by cursor like /v1/reports")
    func phoneReports() async throws {
        let fixture = try await Fixture()
        let (number, reports, _) = Self.busiest(fixture)
        try await fixture.test { client in
            var seen: [Int64] = []
            var next: String? = "/v1/phones/\(number)/reports?limit=2"
            while let uri = next {
                let page = try await client.get(uri)
                #expect(page.status == .ok && page.json["numberMatched"] as? Int == reports.count)
                seen += page.features.compactMap { ($0["id"] as? Int).map(Int64.init) }
                next = (page.json["links"] as? [[String: Any]])?.first { $0["rel"] as? String == "next" }?["href"] as? String
            }
            #expect(seen == reports.map(\.id).sorted())
        }
    }

    @Test("an international number is written with its +, in answers, hints, exports and links, and is reached by that form")
    func internationalNumber() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            var ids: [Int] = []
            for _ in 0..<2 {
                let filed = try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(phones: ["+44 20 7946 0958"]), token: inspector.token)
                #expect(filed.status == .created)
                #expect((filed.json["properties"] as? [String: Any])?["phones"] as? [String] == ["+442079460958"])
                ids.append(try #require(filed.json["id"] as? Int))
                if ids.count == 2 {
                    let hints = try #require(filed.json["possible_duplicates"] as? [[String: Any]])
                    #expect(hints.first { $0["id"] as? Int == ids[0] }?["shared_phones"] as? [String] == ["+442079460958"])
                }
            }
            let record = try await client.get("/v1/phones/+442079460958")
            #expect(record.status == .ok && record.json["number"] as? String == "442079460958")
            #expect(try await client.get("/v1/phones/%2B442079460958").status == .ok)
            let page = try await client.get("/v1/phones/+442079460958/reports?limit=1")
            let next = (page.json["links"] as? [[String: Any]])?.first { $0["rel"] as? String == "next" }?["href"] as? String
            #expect(next?.hasPrefix("/v1/phones/+442079460958/reports?") == true)
            #expect(try await client.get(try #require(next)).features.compactMap { $0["id"] as? Int } == [ids[1]])
            let csv = String(decoding: try await client.get("/v1/export?format=csv").body, as: UTF8.self)
            #expect(csv.contains(",+442079460958,"))
        }
    }

    @Test("the blocklist: for integrations and supervisors, JSON or CSV, a strong ETag answered 304 until it changes, and its changes since a sequence number")
    func blocklist() async throws {
        let fixture = try await Fixture()
        let (number, reports, _) = Self.busiest(fixture)
        try await fixture.test { client in
            let (supervisor, _) = try await ReportRouteTests.account(fixture, client, .supervisor, 1)
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 2).token
            let (_, key) = try await fixture.accounts().createAPIKey(name: "operator sync")
            #expect(try await client.send(.get, "/v1/blocklist", token: inspector).status == .forbidden)
            #expect(try await client.send(.get, "/v1/blocklist").status == .unauthorized)

            let empty = try await client.send(.get, "/v1/blocklist", token: key)
            #expect(empty.status == .ok && (empty.json["numbers"] as? [Any])?.isEmpty == true)
            let emptyTag = try #require(empty.headers[.eTag])
            let start = try #require(try await client.send(.get, "/v1/blocklist/changes?since=0", token: key).json["last_seq"] as? Int)

            _ = try await client.send(.post, "/v1/phones/\(number)/verification", json: ["outcome": "violator"], token: supervisor)
            _ = try await client.send(.post, "/v1/phones/\(number)/block", json: [:], token: supervisor)
            let list = try await client.send(.get, "/v1/blocklist", token: key)
            let numbers = try #require(list.json["numbers"] as? [[String: Any]])
            #expect(numbers.count == 1 && numbers[0]["number"] as? String == number && numbers[0]["report_count"] as? Int == reports.count)
            let tag = try #require(list.headers[.eTag])
            #expect(tag != emptyTag && tag.hasPrefix("\"") && !tag.hasPrefix("W/"))
            #expect(try await client.send(.get, "/v1/blocklist", token: key, headers: [.ifNoneMatch: tag]).status == .notModified)
            #expect(try await client.send(.get, "/v1/blocklist", token: key, headers: [.ifNoneMatch: emptyTag]).status == .ok)
            let csv = try await client.send(.get, "/v1/blocklist?format=csv", token: supervisor)
            #expect(csv.headers[.contentType]?.hasPrefix("text/csv") == true)
            let lines = csv.bodyText.split(separator: "\r\n")
            #expect(lines.first == "number,blocked_at,report_count" && lines.count == 2 && lines[1].hasPrefix("+\(number),"))
            #expect(try await client.send(.get, "/v1/blocklist?format=xml", token: key).error?["field"] as? String == "format")

            let changes = try await client.send(.get, "/v1/blocklist/changes?since=\(start)", token: key)
            #expect((changes.json["added"] as? [[String: Any]])?.map { $0["number"] as? String } == [number])
            let last = try #require(changes.json["last_seq"] as? Int)
            _ = try await client.send(.post, "/v1/phones/\(number)/unblock", json: [:], token: supervisor)
            let after = try await client.send(.get, "/v1/blocklist/changes?since=\(last)", token: key)
            #expect((after.json["added"] as? [Any])?.isEmpty == true && after.json["removed"] as? [String] == [number])
            let future = try await client.send(.get, "/v1/blocklist/changes?since=\(last + 1_000)", token: key)
            #expect(future.status == .gone && (future.error?["message"] as? String)?.contains("GET /v1/blocklist") == true)
            #expect(try await client.send(.get, "/v1/blocklist/changes", token: key).error?["field"] as? String == "since")
        }
    }

    @Test("the ranking of numbers, for supervisors, answers what the service ranks, with each number's status")
    func ranking() async throws {
        let fixture = try await Fixture()
        let (number, _, _) = Self.busiest(fixture)
        try await fixture.test { client in
            let (supervisor, _) = try await ReportRouteTests.account(fixture, client, .supervisor, 1)
            _ = try await client.send(.post, "/v1/phones/\(number)/verification", json: ["outcome": "violator"], token: supervisor)
            _ = try await client.send(.post, "/v1/phones/\(number)/block", json: [:], token: supervisor)
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 2).token
            #expect(try await client.get("/v1/stats/phones").status == .unauthorized)
            #expect(try await client.send(.get, "/v1/stats/phones", token: inspector).status == .forbidden)
            for query in ["limit=10", "bbox=30.4,50.4,30.6,50.5&limit=5", "status=new,confirmed&district=podilskyi", "datetime=2025-01-01T00:00:00Z/.."] {
                let answer = try await client.send(.get, "/v1/stats/phones?" + query, token: supervisor)
                #expect(answer.status == .ok, "\(query)")
                let phones = try #require(answer.json["phones"] as? [[String: Any]])
                let pairs = query.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
                let q = Dictionary(uniqueKeysWithValues: pairs.map { ($0[0], $0[1]) })
                let expected = try await fixture.service.topPhones(
                    box: try q["bbox"].map { text in let v = text.split(separator: ",").map { Double($0)! }; return try BoundingBox(west: v[0], south: v[1], east: v[2], north: v[3]) },
                    created: q["datetime"] == nil ? nil : Int64(1_735_689_600_000)...Int64.max,
                    statuses: q["status"]?.split(separator: ",").map(String.init), district: q["district"], limit: Int(q["limit"] ?? "50")!)
                #expect(phones.map { $0["number"] as? String } == expected.map(\.number), "\(query)")
                #expect(phones.map { $0["reports"] as? Int } == expected.map(\.count), "\(query)")
            }
            let top = try await client.send(.get, "/v1/stats/phones?limit=1", token: supervisor)
            #expect((top.json["phones"] as? [[String: Any]])?.first?["blocked"] as? Bool == true, "the busiest number is first, and blocked")
            let bad = try await client.send(.get, "/v1/stats/phones?district=nowhere&limit=0", token: supervisor)
            #expect(bad.status == .badRequest)
            #expect(try await client.send(.get, "/v1/stats/phones?district=nowhere", token: supervisor).error?["field"] as? String == "district")
        }
    }

    @Test("the dashboard counts: by status, district, object type and month, for everything and for an area")
    func stats() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            for (query, box) in [("", nil), ("?bbox=30.4,50.4,30.6,50.5", try BoundingBox(west: 30.4, south: 50.4, east: 30.6, north: 50.5))] {
                let answer = try await client.get("/v1/stats" + query)
                let chosen = fixture.reports.filter { box?.contains($0.coordinate) ?? true }
                #expect(answer.status == .ok && answer.json["total"] as? Int == chosen.count)
                let statuses = try #require(answer.json["by_status"] as? [[String: Any]])
                #expect(statuses.map { $0["code"] as? String } == fixture.service.statusCodes)
                #expect(statuses.map { $0["count"] as? Int } == fixture.service.statusCodes.map { code in chosen.filter { $0.status == code }.count })
                let months = try #require(answer.json["by_month"] as? [[String: Any]])
                #expect(months.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == chosen.count)
                #expect((answer.json["by_district"] as? [[String: Any]])?.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == chosen.count)
            }
            #expect(try await client.get("/v1/stats?bbox=1,2,3").error?["field"] as? String == "bbox")
        }
    }
}

@Suite("About the service")
struct AboutTests {
    static let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../data/about.json").path

    @Test("/v1/about answers the shipped text in both languages, the statuses in order, the version and counts that follow the data")
    func about() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.about = try AboutText.load(Self.shipped)
        let (number, _, _) = PhoneRouteTests.busiest(fixture)
        try await fixture.test(configuration: configuration) { client in
            let answer = try await client.get("/v1/about")
            #expect(answer.status == .ok)
            let uk = try #require(answer.json["uk"] as? [String: Any]), en = try #require(answer.json["en"] as? [String: Any])
            #expect((uk["title"] as? String)?.contains("Києві") == true && (en["legal_basis"] as? [String])?.isEmpty == false)
            #expect((answer.json["statuses"] as? [[String: Any]])?.map { $0["code"] as? String } == fixture.service.statusCodes)
            #expect(answer.json["version"] as? String == ServiceVersion.current)
            let counts = try #require(answer.json["counts"] as? [String: Any])
            #expect(counts["reports"] as? Int == 400 && counts["blocked_numbers"] as? Int == 0)
            #expect(counts["open_reports"] as? Int == fixture.reports.filter { fixture.service.reference.isOpen($0.status) }.count)
            let (supervisor, _) = try await ReportRouteTests.account(fixture, client, .supervisor, 1)
            _ = try await client.send(.post, "/v1/phones/\(number)/verification", json: ["outcome": "violator"], token: supervisor)
            _ = try await client.send(.post, "/v1/phones/\(number)/block", json: [:], token: supervisor)
            #expect((try await client.get("/v1/about").json["counts"] as? [String: Any])?["blocked_numbers"] as? Int == 1)
        }
        try await fixture.test { client in
            let bare = try await client.get("/v1/about")
            #expect(bare.json["uk"] is NSNull && bare.json["version"] is String, "no file configured: no text, the rest still answered")
        }
    }

    @Test("an about file that is not what is expected is refused, saying what is wrong")
    func badFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("about.json")
        try Data(#"{"uk": {"title": "x"}, "en": {}}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: AboutFileUnreadable.self) { try AboutText.load(path) }
        do { _ = try AboutText.load(path) } catch { #expect("\(error)".contains("lacks uk.purpose")) }
        #expect(throws: AboutFileUnreadable.self) { try AboutText.load(directory.path("missing.json")) }
    }
}
