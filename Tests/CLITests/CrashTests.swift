import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// A report that got its 201 is in the database, whatever happens to the process after.
@Suite("Filings survive kill -9")
struct CrashTests {
    /// A report in the interchange vocabulary, a little apart from the others.
    static func report(_ n: Int) -> Data {
        let body: [String: Any] = [
            "longitude": 30.45 + Double(n % 100) / 1000, "latitude": 50.40 + Double(n / 100) / 1000, "address": "вул. Тестова, \(n)",
            "city": "Київ", "district": "pecherskyi", "object_type": "lighting_pole", "balance_holder": "kyivmiskvitlo",
            "phones": ["067 \(String(format: "%07d", n))"],
        ]
        return try! JSONSerialization.data(withJSONObject: body)
    }

    static func request(_ base: String, _ path: String, method: String = "GET", token: String? = nil, body: Data? = nil) -> URLRequest {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        if let token { request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization") }
        return request
    }

    /// An access token of the inspector ``CLI/addInspector(db:)`` adds.
    static func signIn(_ base: String) async throws -> String {
        let login = try JSONSerialization.data(withJSONObject: ["login": CLI.inspectorEmail, "password": CLI.inspectorPassword])
        let (tokens, _) = try await URLSession.shared.data(for: request(base, "/v1/auth/login", method: "POST", body: login))
        return try #require((try JSONSerialization.jsonObject(with: tokens) as? [String: Any])?["access_token"] as? String)
    }

    @Test("stream filings from 8 clients, SIGKILL the server midway, restart: every report answered 201 is there, ids unique, the index equals the rows")
    func killMidStream() async throws {
        let cli = try CLI()
        try cli.addInspector(db: "t.sqlite")
        let server = try await cli.serve(db: "t.sqlite", options: ["--write-rate", "0"])
        let token = try await Self.signIn(server.base)

        let acknowledged = try await withThrowingTaskGroup(of: [Int].self) { group in
            for client in 0..<8 {
                group.addTask {
                    var ids: [Int] = []
                    for n in 0..<400 {
                        let request = Self.request(server.base, "/v1/reports", method: "POST", token: token, body: Self.report(client * 400 + n))
                        guard let (data, response) = try? await URLSession.shared.data(for: request) else { break }  // the server is gone
                        guard (response as? HTTPURLResponse)?.statusCode == 201 else { continue }
                        if let id = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? Int { ids.append(id) }
                    }
                    return ids
                }
            }
            group.addTask {
                // Kill once some filings have been answered, while the others are in flight.
                while true {
                    try await Task.sleep(for: .milliseconds(50))
                    let (data, _) = try await URLSession.shared.data(from: URL(string: server.base + "/health")!)
                    if ((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["reports"] as? Int ?? 0) >= 300 { break }
                }
                kill(server.process.processIdentifier, SIGKILL)
                server.process.waitUntilExit()
                return []
            }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        #expect(acknowledged.count >= 300)
        #expect(Set(acknowledged).count == acknowledged.count, "every id answered once")
        #expect(acknowledged.count < 3_200, "the kill came midway")

        let restarted = try await cli.serve(db: "t.sqlite")
        defer { restarted.process.terminate() }
        var missing: [Int] = []
        for id in acknowledged {
            let (_, response) = try await URLSession.shared.data(from: URL(string: restarted.base + "/v1/reports/\(id)")!)
            if (response as? HTTPURLResponse)?.statusCode != 200 { missing.append(id) }
        }
        #expect(missing.isEmpty, "answered 201 but lost: \(missing.prefix(10))")
        let (health, _) = try await URLSession.shared.data(from: URL(string: restarted.base + "/health")!)
        let indexed = try #require((try JSONSerialization.jsonObject(with: health) as? [String: Any])?["reports"] as? Int)
        let (page, _) = try await URLSession.shared.data(from: URL(string: restarted.base + "/v1/reports?limit=10000")!)
        let stored = try #require((try JSONSerialization.jsonObject(with: page) as? [String: Any])?["features"] as? [[String: Any]])
        #expect(indexed == stored.count && indexed >= acknowledged.count)
        #expect(Set(stored.compactMap { $0["id"] as? Int }).isSuperset(of: acknowledged))
    }
}
