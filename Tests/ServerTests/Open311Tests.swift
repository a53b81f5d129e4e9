import Foundation
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
                #expect(attributes.compactMap { $0["code"] as? String } == ["phones", "balance_holder", "district", "violator"])
            }
            let discovery = try await client.get("/open311/v2/discovery.json")
            let endpoints = (try JSONSerialization.jsonObject(with: discovery.body) as? [String: Any])?["endpoints"] as? [[String: Any]]
            #expect(endpoints?.first?["formats"] as? [String] == ["text/xml", "application/json"])
            #expect((endpoints?.first?["url"] as? String)?.hasSuffix("/open311/v2") == true)
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
        }
    }
}
