import Foundation
import Geometry
import Interchange
import Hummingbird
import HummingbirdTesting
import ReportModel
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
    static func check(_ arguments: [String], input: Data) throws -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", folder.appendingPathComponent("check.py").path] + arguments
        let stdin = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let complaint = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return process.terminationStatus == 0 ? nil : complaint
    }

    /// The JSON answer at `path` valid against `schema`, and the XML one at the same path
    /// saying the same; both with `status`.
    static func answers(_ client: some TestClientProtocol, _ path: String, schema: String?, array: Bool = false, status: HTTPResponse.Status = .ok) async throws {
        let json = try await client.get("/open311/v2/\(path).json")
        let xml = try await client.get("/open311/v2/\(path).xml")
        #expect(json.status == status && xml.status == status, "\(path): \(json.bodyText)")
        #expect(json.headers[.contentType]?.hasPrefix("application/json") == true && xml.headers[.contentType]?.hasPrefix("text/xml") == true)
        if let schema {
            #expect(try check(["json", folder.appendingPathComponent(schema).path] + (array ? ["--array"] : []), input: json.body) == nil, "\(path).json")
        }
        let saved = FileManager.default.temporaryDirectory.appendingPathComponent("open311-\(UUID().uuidString).json")
        try json.body.write(to: saved)
        defer { try? FileManager.default.removeItem(at: saved) }
        #expect(try check(["xml", saved.path], input: xml.body) == nil, "\(path).xml")
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
    static func post(_ client: some TestClientProtocol, _ path: String, form: [(String, String)], type: String = "application/x-www-form-urlencoded") async throws -> Answer {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = form.map { "\($0.0.addingPercentEncoding(withAllowedCharacters: allowed)!)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        return try await client.execute(uri: path, method: .post, headers: [.contentType: type], body: ByteBuffer(string: body)) { response in
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
            #expect(try await client.get("/open311/v2/services.json?jurisdiction_id=kyiv").status == .ok)
            let long = try await client.get("/open311/v2/services.json?jurisdiction_id=" + String(repeating: "k", count: 101))
            #expect(long.status == .badRequest && long.bodyText.contains("jurisdiction_id: must be at most 100 characters"), "\(long.bodyText)")
        }
    }
}
