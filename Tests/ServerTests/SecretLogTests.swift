import Accounts
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import SQLiteStore
@testable import Server
import Synchronization
import Testing

/// Every log line the server writes, at every level, kept for a test to read.
final class LogCapture: Sendable {
    let lines = Mutex<[String]>([])

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
            let all = self.metadata.merging(metadata ?? [:]) { $1 }
            capture.lines.withLock { $0.append("\(level) \(message) \(all)") }
        }
    }

    var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }
}

@Suite("Secrets stay out of logs and answers")
struct SecretLogTests {
    @Test("registering, signing in, refreshing, failing and signing out log no password, token or hash")
    func noSecrets() async throws {
        let fixture = try await Fixture()
        let capture = LogCapture()
        let accounts = try await fixture.accounts()
        let app = Application(responder: makeResponder(try await fixture.backend(accounts: accounts)), logger: capture.logger)
        let password = "секретний-пароль-7f3a"
        let secrets = try await app.test(.router) { client -> [String] in
            var secrets = [password]
            let created = try await client.send(.post, "/v1/auth/register", json: [
                "name": "Лог", "email": "log@example.org", "phone": "067 765 43 21", "password": password,
            ])
            let refreshToken = try #require(created.json["refresh_token"] as? String)
            secrets += [try #require(created.json["access_token"] as? String), refreshToken]
            let refreshed = try await client.send(.post, "/v1/auth/refresh", json: ["refresh_token": refreshToken])
            secrets += [refreshed.json["access_token"] as? String ?? "", refreshed.json["refresh_token"] as? String ?? ""]
            let reused = try await client.send(.post, "/v1/auth/refresh", json: ["refresh_token": refreshToken])
            #expect(reused.status == .unauthorized)
            let wrong = try await client.send(.post, "/v1/auth/login", json: ["login": "log@example.org", "password": password + "x"])
            let forged = try await client.send(.get, "/v1/me", token: secrets[1] + "x")
            let short = try await client.send(.post, "/v1/auth/register", json: ["name": "x", "email": "a@b.cd", "phone": "067 765 43 22", "password": "short-pw"])
            for answer in [reused, wrong, forged, short] {
                let text = String(decoding: answer.body, as: UTF8.self)
                #expect(!secrets.contains { text.contains($0) } && !text.contains("short-pw"))
            }
            // A token pasted into the URL is refused, and not logged either.
            #expect(try await client.send(.get, "/v1/me?token=" + secrets[3]).status == .badRequest)
            _ = try await client.send(.get, "/v1/statuses?" + secrets[3])
            _ = try await client.send(.post, "/v1/auth/logout", token: secrets[3])
            return secrets
        }
        let hashes = try await SQLiteAccounts(fixture.store).account(emailKey: "log@example.org").map { [$0.passwordHash] } ?? []
        let lines = capture.lines.withLock { $0 }
        #expect(lines.count >= 7)  // a line per request at least
        for line in lines {
            for secret in secrets + hashes + ["short-pw"] where !secret.isEmpty {
                #expect(!line.contains(secret), "a log line holds a secret: \(line.prefix(200))")
            }
        }
    }
}
