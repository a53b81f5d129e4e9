import Foundation
import Generator
import Geometry
import Interchange
import Hummingbird
import HummingbirdTesting
import ReportModel
import ReportService
@testable import Server
import Testing
import TestSupport

/// Open311 GeoReport v2: every answer valid against the JSON Schemas of open311's
/// `schema-validation` repository (Tests/Fixtures/open311, with their source), its XML
/// twin parsed and saying the same, and errors in the standard's form.
@Suite("Open311 GeoReport v2")
struct Open311Tests {
    static let folder = SchemaFixtures.url("open311")

    /// Runs `check.py` with `arguments` on `input`; its complaint, or nil when it passes.
    static func check(_ arguments: [String], input: Data) async throws -> String? {
        let run = try await ToolRun.run("python3", [folder.appendingPathComponent("check.py").path] + arguments, input: input)
        return run.status == 0 ? nil : run.errors
    }

    /// The JSON answer at `path` valid against `schema`, and the XML one at the same path
    /// saying the same; both with `status`.
    static func answers(_ client: some TestClientProtocol, _ path: String, query: String = "", schema: String?, array: Bool = false, status: HTTPResponse.Status = .ok) async throws {
        let suffix = query.isEmpty ? "" : "?" + query
        let json = try await client.get("/open311/v2/\(path).json" + suffix)
        let xml = try await client.get("/open311/v2/\(path).xml" + suffix)
        #expect(json.status == status && xml.status == status, "\(path): \(json.bodyText)")
        #expect(json.headers[.contentType]?.hasPrefix("application/json") == true && xml.headers[.contentType]?.hasPrefix("text/xml") == true)
        if let schema {
            #expect(try await check(["json", folder.appendingPathComponent(schema).path] + (array ? ["--array"] : []), input: json.body) == nil, "\(path).json")
        }
        let saved = FileManager.default.temporaryDirectory.appendingPathComponent("open311-\(UUID().uuidString).json")
        try json.body.write(to: saved)
        defer { try? FileManager.default.removeItem(at: saved) }
        #expect(try await check(["xml", saved.path], input: xml.body) == nil, "\(path).xml")
    }

    @Test("discovery, the services and each service's definition, in JSON valid against the standard's schemas and in XML that says the same")
    func servicesAndDefinitions() async throws {
        let fixture = try await Fixture()
        let reference = fixture.service.reference
        try await fixture.test { client in
            try await Self.answers(client, "discovery", schema: nil)
            try await Self.answers(client, "services", schema: "service.json", array: true)
            let services = try await client.get("/open311/v2/services.json")
            let codes = try #require(try JSONSerialization.jsonObject(with: services.body) as? [[String: Any]]).compactMap { $0["service_code"] as? String }
            #expect(codes == reference.objectTypes.map(\.code), "one service per object type")
            for type in reference.objectTypes {
                try await Self.answers(client, "services/\(type.code)", schema: "service-definition.json")
                let definition = try await client.get("/open311/v2/services/\(type.code).json")
                let attributes = try #require((try JSONSerialization.jsonObject(with: definition.body) as? [String: Any])?["attributes"] as? [[String: Any]])
                let holders = attributes.first { $0["code"] as? String == "balance_holder" }?["values"] as? [[String: Any]]
                #expect(holders?.compactMap { $0["key"] as? String } == reference.holders(for: type.code).map(\.code), "\(type.code): the holders its objects have")
                let taken = Open311Filing.fields.map(\.theirs).filter { $0.hasPrefix("attribute[") }.map { String($0.dropFirst(10).dropLast()) }
                #expect(attributes.compactMap { $0["code"] as? String } == taken, "the definition lists what a filing's form takes")
                #expect(attributes.filter { $0["required"] as? Bool == false }.compactMap { $0["code"] as? String } == ["violator"])
            }
            let discovery = try await client.get("/open311/v2/discovery.json")
            let endpoints = (try JSONSerialization.jsonObject(with: discovery.body) as? [String: Any])?["endpoints"] as? [[String: Any]]
            #expect(endpoints?.first?["formats"] as? [String] == ["text/xml", "application/json"])
            #expect((endpoints?.first?["url"] as? String)?.hasSuffix("/open311/v2") == true)
        }
    }

    @Test("a public report as a service request: valid against the standard's schema in JSON, the same in XML; open or closed by its status; its photo as media_url; never its filer; a hidden or unknown id a 404, a malformed one a 400 naming it")
    func requests() async throws {
        let fixture = try await Fixture()
        let reference = fixture.service.reference
        try await fixture.test { client in
            for report in fixture.reports.prefix(12) {
                try await Self.answers(client, "requests/\(report.id)", schema: "request.json", array: true)
                let answer = try await client.get("/open311/v2/requests/\(report.id).json")
                let request = try #require((try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]])?.first)
                #expect(request["service_request_id"] as? String == String(report.id) && request["service_code"] as? String == report.objectType)
                #expect(request["status"] as? String == (reference.isOpen(report.status) ? "open" : "closed"), "\(report.status)")
                #expect(request["lat"] as? Double == report.coordinate.latitude && request["long"] as? Double == report.coordinate.longitude)
                #expect(request["requested_datetime"] as? String == RFC3339.string(from: report.createdAt))
                #expect(!answer.bodyText.contains("account") && !answer.bodyText.contains("filer"))
            }
            // A filing with a photo: the filer never shows, the photo does.
            let filer = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let id = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: filer.token).json["id"] as? Int)
            let added = try await PhotoRouteTests.upload(client, id, TestImages.jpeg(width: 64, height: 48, segments: []), token: filer.token)
            let url = try #require(added.json["url"] as? String)
            try await Self.answers(client, "requests/\(id)", schema: "request.json", array: true)
            let filed = try await client.get("/open311/v2/requests/\(id).json")
            let media = try #require((try JSONSerialization.jsonObject(with: filed.body) as? [[String: Any]])?.first?["media_url"] as? String)
            #expect(media.hasPrefix("http") && media.hasSuffix(url), "\(media)")
            #expect(!filed.bodyText.contains("inspector1@example.org") && !filed.bodyText.contains("Inspector 1") && !filed.bodyText.contains("inspector 1"))
            // Hidden: gone for the public.
            let supervisor = try await ReportRouteTests.account(fixture, client, .supervisor, 3)
            #expect(try await client.send(.post, "/v1/reports/\(id)/hide", json: ["note": "спам"], token: supervisor.token).status == .ok)
            try await Self.answers(client, "requests/\(id)", schema: nil, status: .notFound)
            for unknown in ["99999999", "9999999999"] {
                #expect(try await client.get("/open311/v2/requests/\(unknown).json").status == .notFound, "\(unknown)")
            }
            for malformed in ["0", "01", "abc", "1e3", "-4", "12345678901"] {
                let answer = try await client.get("/open311/v2/requests/\(malformed).xml")
                #expect(answer.status == .badRequest && answer.bodyText.contains("<description>service_request_id: "), "\(malformed): \(answer.bodyText)")
            }
        }
    }

    /// A form posted to `path`: its status and body.
    static func post(
        _ client: some TestClientProtocol, _ path: String, form: [(String, String)], type: String = "application/x-www-form-urlencoded", idempotencyKey: String? = nil
    ) async throws -> Answer {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = form.map { "\($0.0.addingPercentEncoding(withAllowedCharacters: allowed)!)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        var headers: HTTPFields = [.contentType: type]
        if let idempotencyKey { headers[.idempotencyKey] = idempotencyKey }
        return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
            let data = Data(buffer: response.body)
            return Answer(status: response.status, headers: response.headers, json: [:], body: data)
        }
    }

    /// A filing's form: the service, the place and its attributes, with `key`.
    static func filing(_ reference: ReferenceData, key: String?, phones: String = "067 765 43 21, +380501234567") -> [(String, String)] {
        let type = reference.objectTypes[1]
        return (key.map { [("api_key", $0)] } ?? []) + [
            ("service_code", type.code), ("lat", "50.4501"), ("long", "30.5234"), ("address_string", "вул. Хрещатик, 1"), ("description", "на паркані\nбіля зупинки"),
            ("attribute[city]", "Київ"), ("attribute[phones]", phones), ("attribute[balance_holder]", reference.holders(for: type.code)[0].code),
            ("attribute[district]", reference.districts[2].code), ("email", "caller@example.org"), ("first_name", "Олена"),
        ]
    }

    @Test("a filing through POST requests with an integration's api_key: the same report, change, history and duplicate hints as POST /v1/reports; the caller's personal fields are not kept; read back as a service request")
    func filing() async throws {
        let fixture = try await Fixture()
        let reference = fixture.service.reference
        let (_, key) = try await fixture.accounts().createAPIKey(name: "contact centre")
        try await fixture.test { client in
            let before = try fixture.store.lastChange()
            let first = try await Self.post(client, "/open311/v2/requests.json", form: Self.filing(reference, key: key))
            #expect(first.status == .created, "\(first.bodyText)")
            let filed = try #require((try JSONSerialization.jsonObject(with: first.body) as? [[String: Any]])?.first)
            let id = try #require(Int64(filed["service_request_id"] as? String ?? ""))
            let report = try #require(try await fixture.service.report(id: id))
            #expect(report.objectType == reference.objectTypes[1].code && report.phones == ["380677654321", "380501234567"] && report.comment == "на паркані\nбіля зупинки")
            #expect(report.coordinate == Coordinate(longitude: 30.5234, latitude: 50.4501) && report.city == "Київ" && report.status == reference.initialStatus)
            let history = try fixture.store.history(of: id)
            #expect(history.map(\.action) == [.filed] && history[0].author.apiKeyID != nil && history[0].author.accountID == nil)
            #expect(try fixture.store.changes(after: before, limit: 10).rows.map(\.reportID) == [id])
            // The same again, through XML: a possible duplicate of the first, said so.
            let second = try await Self.post(client, "/open311/v2/requests.xml", form: Self.filing(reference, key: key))
            #expect(second.status == .created && second.bodyText.contains("<service_requests><request><service_request_id>"), "\(second.bodyText)")
            #expect(second.bodyText.contains("<service_notice>Possible duplicates: #\(id) (0"), "\(second.bodyText)")
            // What the contact centre reads back; the caller's e-mail and name are nowhere.
            let read = try await client.get("/open311/v2/requests/\(id).json")
            #expect(read.status == .ok && !read.bodyText.contains("caller@example.org") && !read.bodyText.contains("Олена"))
            #expect(!(try await client.get("/v1/reports/\(id)")).bodyText.contains("caller@example.org"))
        }
    }

    @Test("a filing without an API key, with a revoked or unknown one or a person's token is a 403; each broken rule a 400 in GeoReport's words, every field at once; a JSON body a 415; nothing written")
    func refusedFilings() async throws {
        let fixture = try await Fixture()
        let reference = fixture.service.reference
        let accounts = try await fixture.accounts()
        let (revoked, revokedKey) = try await accounts.createAPIKey(name: "old")
        try await accounts.revokeAPIKey(revoked.id)
        let (_, key) = try await accounts.createAPIKey(name: "contact centre")
        try await fixture.test { client in
            let inspector = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let admin = try await ReportRouteTests.account(fixture, client, .admin, 2)
            let before = try fixture.store.lastChange()
            // A person's token is no API key, whatever the person's role.
            for bad in [nil, revokedKey, "pwk_nonsense", inspector.token, admin.token] {
                let answer = try await Self.post(client, "/open311/v2/requests.json", form: Self.filing(reference, key: bad))
                let errors = try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]]
                #expect(answer.status == .forbidden && errors?.first?["code"] as? Int == 403, "\(bad ?? "no key"): \(answer.bodyText)")
            }
            var broken = Self.filing(reference, key: key).filter { $0.0 != "lat" }
            broken = broken.map { $0.0 == "attribute[district]" ? ($0.0, "atlantis") : $0.0 == "long" ? ($0.0, "east") : $0 } + [("colour", "red")]
            let refused = try await Self.post(client, "/open311/v2/requests.xml", form: broken)
            #expect(refused.status == .badRequest && refused.bodyText.contains("<description>colour: unknown field"), "\(refused.bodyText)")
            let fields = try await Self.post(client, "/open311/v2/requests.json", form: broken.filter { $0.0 != "colour" })
            let named = try #require(try JSONSerialization.jsonObject(with: fields.body) as? [[String: Any]]).compactMap { ($0["description"] as? String)?.split(separator: ":").first.map(String.init) }
            #expect(fields.status == .badRequest && Set(named).isSuperset(of: ["lat", "long", "attribute[district]"]), "\(fields.bodyText)")
            let json = try await Self.post(client, "/open311/v2/requests.json", form: Self.filing(reference, key: key), type: "application/json")
            #expect(json.status == .unsupportedMediaType, "\(json.bodyText)")
            #expect(try fixture.store.lastChange() == before, "nothing was written")
        }
    }

    @Test("an unknown service is a 404 and a parameter the standard does not name a 400, both as [{code, description}] in the asked format; jurisdiction_id is taken")
    func errors() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            try await Self.answers(client, "services/<script>", schema: nil, status: .notFound)
            let missing = try await client.get("/open311/v2/services/nothing.json")
            let errors = try #require(try JSONSerialization.jsonObject(with: missing.body) as? [[String: Any]])
            #expect(errors.count == 1 && errors[0]["code"] as? Int == 404 && (errors[0]["description"] as? String)?.contains("nothing") == true)
            let xml = try await client.get("/open311/v2/services/%3Cb%3E.xml")
            #expect(xml.status == .notFound && xml.bodyText.contains("<errors><error><code>404</code>") && xml.bodyText.contains("&lt;b&gt;"), "\(xml.bodyText)")
            let unknown = try await client.get("/open311/v2/services.xml?color=red")
            #expect(unknown.status == .badRequest && unknown.bodyText.contains("<code>400</code>") && unknown.bodyText.contains("color"))
            // A control character a query sent, echoed in the error, is written as U+FFFD: the answer still parses.
            let control = try await client.get("/open311/v2/requests.xml?start_date=%01")
            let parsed = try await ToolRun.run("python3", ["-c", "import sys, xml.dom.minidom; xml.dom.minidom.parseString(sys.stdin.buffer.read())"], input: control.body)
            #expect(control.status == .badRequest && parsed.status == 0, "\(control.bodyText) \(parsed.errors)")
            var escaped = ""
            Open311XML.escape("a\rb\u{1}\u{FFFF}&\t\n", into: &escaped)
            #expect(escaped == "a&#13;b\u{FFFD}\u{FFFD}&amp;\t\n", "a carriage return kept as a reference, what XML cannot hold replaced")
            #expect(try await client.get("/open311/v2/services.json?jurisdiction_id=kyiv").status == .ok)
            let long = try await client.get("/open311/v2/services.json?jurisdiction_id=" + String(repeating: "k", count: 101))
            #expect(long.status == .badRequest && long.bodyText.contains("jurisdiction_id: must be at most 100 characters"), "\(long.bodyText)")
        }
    }

    /// The ids a JSON answer of `GET requests` lists.
    static func ids(_ answer: Answer) throws -> [Int64] {
        try #require(try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]], "\(answer.bodyText)").compactMap { ($0["service_request_id"] as? String).flatMap { Int64($0) } }
    }

    @Test("GET requests lists the public reports a brute force over the rows takes (window, services, open or closed), in id order; by service_request_id the listed ones in their order; valid against the schema and the same in XML")
    func requestList() async throws {
        let fixture = try await Fixture()
        let reference = fixture.service.reference
        let times = fixture.reports.map(\.createdAt).sorted()
        try await fixture.test { client in
            var rng = SplitMix64(state: 311)
            var listed = 0
            for round in 0..<16 {
                let start = times[rng.below(times.count)]
                let end = start.addingTimeInterval(Double(rng.below(90 * 86_400)))
                let types = round % 2 == 0 ? nil : Array(reference.objectTypes.map(\.code).shuffled(using: &rng).prefix(2))
                let status = [nil, "open", "closed", "open,closed"][round % 4]
                var path = "requests.json?start_date=\(URLText.encode(RFC3339.string(from: start)))&end_date=\(URLText.encode(RFC3339.string(from: end)))"
                if let types { path += "&service_code=" + types.joined(separator: ",") }
                if let status { path += "&status=" + status }
                let expected = fixture.reports.filter { r in
                    r.createdAt >= start && r.createdAt <= end && (types?.contains(r.objectType) ?? true)
                        && (status?.split(separator: ",").contains(reference.isOpen(r.status) ? "open" : "closed") ?? true)
                }.map(\.id).sorted()
                let answer = try await client.get("/open311/v2/" + path)
                let ids = try Self.ids(answer)
                #expect(answer.status == .ok && ids == expected, "\(path)")
                listed += expected.count
            }
            #expect(listed > 50, "the windows held reports")
            // One answer checked whole: the schema, and its XML twin.
            let window = "start_date=\(URLText.encode(RFC3339.string(from: times[100])))&end_date=\(URLText.encode(RFC3339.string(from: times[100].addingTimeInterval(80 * 86_400))))"
            try await Self.answers(client, "requests", query: window, schema: "request.json", array: true)
            // Read on with after: the same window past a report's id.
            let all = try Self.ids(try await client.get("/open311/v2/requests.json?" + window))
            #expect(all.count > 3)
            #expect(try Self.ids(try await client.get("/open311/v2/requests.json?" + window + "&after=\(all[2])")) == Array(all.dropFirst(3)))
            // By ids: those listed, in their order, each once; an unknown one left out.
            let some = [fixture.reports[7].id, fixture.reports[3].id, 99_999_999, fixture.reports[7].id]
            let byID = try await client.get("/open311/v2/requests.json?service_request_id=\(some.map(String.init).joined(separator: ","))&status=closed&\(window)")
            #expect(try Self.ids(byID) == [fixture.reports[7].id, fixture.reports[3].id], "\(byID.bodyText)")
            // No dates: the last 90 days, a filing of now among them.
            let filer = try await ReportRouteTests.account(fixture, client, .inspector, 1)
            let id = try #require(try await client.send(.post, "/v1/reports", json: ReportRouteTests.newReport(), token: filer.token).json["id"] as? Int)
            let recent = fixture.reports.filter { $0.createdAt >= Date().addingTimeInterval(-90 * 86_400) }.map(\.id)
            #expect(try Self.ids(try await client.get("/open311/v2/requests.json")) == recent + [Int64(id)])
            try await Self.answers(client, "requests", schema: "request.json", array: true)
        }
    }

    @Test("GET requests and servicerequestupdates refuse bad dates, windows past 90 days, unknown services or statuses and too many ids: a 400 naming every bad parameter at once")
    func refusedQueries() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let many = (1...101).map(String.init).joined(separator: ",")
            let cases: [(String, [String])] = [
                ("start_date=yesterday&service_code=lamp&status=pending", ["start_date", "service_code", "status"]),
                ("start_date=2026-01-01T00:00:00Z&end_date=2025-12-31T00:00:00Z", ["end_date"]),
                ("start_date=2026-01-01T00:00:00Z&end_date=2026-04-02T00:00:00Z", ["end_date"]),
                ("start_date=2026-01-01T00:00:00", ["start_date"]),
                ("service_request_id=\(many)", ["service_request_id"]),
                ("service_request_id=1,,2", ["service_request_id"]),
                ("service_request_id=0", ["service_request_id"]),
                ("status=open,", ["status"]),
                ("after=0&status=closed", ["after"]),
            ]
            for (query, fields) in cases {
                let answer = try await client.get("/open311/v2/requests.json?" + query)
                let named = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]], "\(answer.bodyText)")
                    .compactMap { ($0["description"] as? String)?.split(separator: ":").first.map(String.init) }
                #expect(answer.status == .badRequest && Set(named) == Set(fields), "\(query): \(answer.bodyText)")
            }
            let updates = try await client.get("/open311/v2/servicerequestupdates.xml?start_date=2026-01-01T00:00:00Z&end_date=2026-05-01T00:00:00Z")
            #expect(updates.status == .badRequest && updates.bodyText.contains("<description>end_date: must be at most 90 days after start_date"), "\(updates.bodyText)")
        }
    }

    @Test("servicerequestupdates that reads 2 changes of the log an answer: each page that stops early links the next, in the window it resolved, and following the links gives every update once, in order, in JSON and XML; the last page has no Link")
    func updatesInPages() async throws {
        let fixture = try await Fixture()
        var configuration = ServerConfiguration()
        configuration.open311UpdateScan = 2
        configuration.publicURL = "https://posters.example"
        try await fixture.test(configuration: configuration) { client in
            let supervisor = try await ReportRouteTests.account(fixture, client, .supervisor, 4)
            let start = Date()
            var expected: [String] = [], rng = SplitMix64(state: 33)
            for report in fixture.reports.filter({ $0.status == "new" }).prefix(4) {
                // A filing's change between the steps: pages of 2 changes hold 0, 1 or 2 steps.
                _ = try await fixture.service.file(Drafts.make(report.coordinate, using: &rng), by: Caller(accountID: nil, role: .inspector))
                for to in ["verifying", "confirmed"] {
                    let moved = try await client.send(.post, "/v1/reports/\(report.id)/transitions", json: ["to": to, "note": "крок"], token: supervisor.token)
                    #expect(moved.status == .ok, "\(moved.bodyText)")
                    expected.append("\(report.id) \(to)")
                }
            }
            for format in ["json", "xml"] {
                var url: String? = "/open311/v2/servicerequestupdates.\(format)?start_date=\(URLText.encode(RFC3339.string(from: start.addingTimeInterval(-1))))&jurisdiction_id=kyiv"
                var found: [String] = [], pages = 0, short = 0
                while let next = url, pages < 100 {
                    let answer = try await client.get(next)
                    #expect(answer.status == .ok, "\(answer.bodyText)")
                    let items = try Self.updateItems(answer, format: format)
                    found += items
                    pages += 1
                    url = try answer.headers[.link].map { link in
                        let target = try #require(link.firstMatch(of: /^<https:\/\/posters\.example(\/open311\/v2\/servicerequestupdates\.\w+\?[^>]+)>; rel="next"$/)?.1, "\(link)")
                        #expect(target.contains("end_date=") && target.contains("jurisdiction_id=kyiv") && target.contains("after="), "\(target)")
                        return String(target)
                    }
                    if url != nil, items.count < 2 { short += 1 }
                }
                #expect(found == expected, "\(format): every update once, in order, over \(pages) pages")
                #expect(short > 0, "some pages stopped at the scan's limit with fewer updates")
            }
        }
    }

    /// "id status" of each update of an answer, from its JSON or its XML.
    static func updateItems(_ answer: Answer, format: String) throws -> [String] {
        if format == "json" {
            let items = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]], "\(answer.bodyText)")
            return items.map { "\($0["service_request_id"] as? String ?? "") \($0["external_status_code"] as? String ?? "")" }
        }
        let ids = answer.bodyText.matches(of: /<service_request_id>(\d+)<\/service_request_id>/).map { String($0.1) }
        let codes = answer.bodyText.matches(of: /<external_status_code>(\w+)<\/external_status_code>/).map { String($0.1) }
        #expect(ids.count == codes.count)
        return zip(ids, codes).map { "\($0) \($1)" }
    }

    @Test("servicerequestupdates: the status changes of public reports in the window, oldest first, as mySociety's states with our status as external_status_code; never the author or the note; a hidden report's left out")
    func updates() async throws {
        let fixture = try await Fixture()
        let reference = fixture.service.reference
        try await fixture.test { client in
            let supervisor = try await ReportRouteTests.account(fixture, client, .supervisor, 3)
            let start = Date()
            let open = fixture.reports.filter { $0.status == "new" }.prefix(3)
            var expected: [(Int64, String)] = []
            for (report, to) in zip(open, ["verifying", "rejected", "verifying"]) {
                let moved = try await client.send(.post, "/v1/reports/\(report.id)/transitions", json: ["to": to, "note": "таємна примітка"], token: supervisor.token)
                #expect(moved.status == .ok, "\(moved.bodyText)")
                expected.append((report.id, to))
            }
            let hidden = open[open.startIndex + 2]
            #expect(try await client.send(.post, "/v1/reports/\(hidden.id)/hide", json: ["note": "спам"], token: supervisor.token).status == .ok)
            expected.removeAll { $0.0 == hidden.id }
            let window = "start_date=\(URLText.encode(RFC3339.string(from: start.addingTimeInterval(-1))))"
            let answer = try await client.get("/open311/v2/servicerequestupdates.json?" + window)
            #expect(answer.headers[.link] == nil, "the window read to its end: no next page")
            let items = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]], "\(answer.bodyText)")
            #expect(items.map { Int64($0["service_request_id"] as? String ?? "") } == expected.map(\.0))
            #expect(items.map { $0["external_status_code"] as? String } == expected.map(\.1))
            #expect(items.map { $0["status"] as? String } == expected.map { Open311Documents.state($0.1, reference) })
            #expect(items.map { $0["status"] as? String } == ["investigating", "no_further_action"])
            // update_id is the change's number: reading on after the first gives the rest.
            let first = try #require(items.first?["update_id"] as? String)
            let rest = try await client.get("/open311/v2/servicerequestupdates.json?" + window + "&after=" + first)
            #expect((try JSONSerialization.jsonObject(with: rest.body) as? [[String: Any]])?.compactMap { $0["update_id"] as? String } == items.dropFirst().compactMap { $0["update_id"] as? String })
            #expect(!answer.bodyText.contains("таємна") && !answer.bodyText.contains("Supervisor") && !answer.bodyText.contains("supervisor3"))
            try await Self.answers(client, "servicerequestupdates", query: window, schema: nil)
            // A window before the changes holds none of them.
            let before = "end_date=\(URLText.encode(RFC3339.string(from: start.addingTimeInterval(-1))))"
            let none = try await client.get("/open311/v2/servicerequestupdates.json?" + before)
            let noIDs = try Self.ids(none)
            #expect(none.status == .ok && noIDs == [], "\(none.bodyText)")
        }
    }

    @Test("POST requests with an Idempotency-Key: a retry, in either format, replays the first answer and files nothing; the same key with another form is a 400")
    func idempotentFiling() async throws {
        let fixture = try await Fixture()
        let reference = fixture.service.reference
        let (_, key) = try await fixture.accounts().createAPIKey(name: "contact centre")
        try await fixture.test { client in
            let before = try fixture.store.lastChange()
            let form = Self.filing(reference, key: key)
            let first = try await Self.post(client, "/open311/v2/requests.json", form: form, idempotencyKey: "call-2026-11-27-0001")
            let again = try await Self.post(client, "/open311/v2/requests.json", form: form, idempotencyKey: "call-2026-11-27-0001")
            #expect(first.status == .created && again.status == .created && first.body == again.body, "\(first.bodyText) \(again.bodyText)")
            let id = try #require(try JSONSerialization.jsonObject(with: first.body) as? [[String: Any]])[0]["service_request_id"] as? String
            let xml = try await Self.post(client, "/open311/v2/requests.xml", form: form, idempotencyKey: "call-2026-11-27-0001")
            #expect(xml.status == .created && xml.bodyText.contains("<service_request_id>\(id ?? "?")</service_request_id>"), "\(xml.bodyText)")
            #expect(try fixture.store.changes(after: before, limit: 10).rows.count == 1, "filed once")
            let other = try await Self.post(client, "/open311/v2/requests.json", form: Self.filing(reference, key: key, phones: "0671112233"), idempotencyKey: "call-2026-11-27-0001")
            #expect(other.status == .badRequest && other.bodyText.contains("Idempotency-Key"), "\(other.bodyText)")
            #expect(try fixture.store.changes(after: before, limit: 10).rows.count == 1, "still once")
        }
    }

    @Test("georeport 0.3.1 from PyPI (a GeoReport v2 client) reads the services, a definition, a filed report and a list back from the real server, in JSON and XML")
    func pythonClient() async throws {
        let fixture = try await Fixture()
        let reference = fixture.service.reference
        let (_, key) = try await fixture.accounts().createAPIKey(name: "contact centre")
        try await fixture.live { port, client in
            // georeport has no filing of its own: the report is posted as its form, then read back by the client.
            let filed = try await Self.post(client, "/open311/v2/requests.json", form: Self.filing(reference, key: key))
            let id = try #require((try JSONSerialization.jsonObject(with: filed.body) as? [[String: Any]])?.first?["service_request_id"] as? String)
            let script = """
                import json, sys
                from georeport import GeoReport
                out = {}
                for fmt in ("json", "xml"):
                    client = GeoReport(sys.argv[1], jurisdiction="kyiv", output_format=fmt)
                    services = client.get_service_list()
                    definition = client.get_service_definition(services[1]["service_code"])
                    one = client.get_service_request(sys.argv[2])
                    listed = client.get_service_requests(service_request_id=sys.argv[2] + ",1")
                    listed = listed if isinstance(listed, list) else [listed]
                    out[fmt] = {"services": [s["service_code"] for s in services], "definition": definition["service_code"],
                                "one": [one["service_request_id"], one["status"], one["service_code"], one["description"]],
                                "listed": [r["service_request_id"] for r in listed]}
                print(json.dumps(out, ensure_ascii=False))
                """
            let output = try await Self.python(script, arguments: ["http://127.0.0.1:\(port)/open311/v2", id])
            let read = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: [String: Any]], "\(output)")
            let codes = reference.objectTypes.map(\.code)
            for format in ["json", "xml"] {
                let answer = try #require(read[format], "\(output)")
                #expect(answer["services"] as? [String] == codes, "\(format)")
                #expect(answer["definition"] as? String == codes[1], "\(format)")
                #expect(answer["one"] as? [String] == [id, "open", codes[1], "на паркані\nбіля зупинки"], "\(format): \(output)")
                #expect(answer["listed"] as? [String] == [id, "1"], "\(format)")
            }
        }
    }

    /// Runs a Python script; its standard output, or an error with its complaint.
    static func python(_ script: String, arguments: [String]) async throws -> String {
        let run = try await ToolRun.run("python3", ["-c", script] + arguments)
        guard run.status == 0 else { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: run.errors]) }
        return run.text
    }
}
