import Accounts
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReportModel
import SQLiteStore
@testable import Server
import Testing
import Webhooks

extension TestClientProtocol {
    /// A request with a JSON body (or raw text) and, when given, a bearer token.
    func send(_ method: HTTPRequest.Method, _ uri: String, json: Any? = nil, raw: String? = nil, token: String? = nil,
              headers: HTTPFields = [:]) async throws -> Answer
    {
        var headers = headers
        if let token { headers[.authorization] = "Bearer " + token }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        } else if let raw {
            body = ByteBuffer(string: raw)
        }
        return try await execute(uri: uri, method: method, headers: headers, body: body) { response in
            let data = Data(buffer: response.body)
            let json = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
            return Answer(status: response.status, headers: response.headers, json: json, body: data)
        }
    }
}

/// Accounts over HTTP: registration, sign-in, tokens, the caller's account, administration.
@Suite("Accounts over HTTP")
struct AccountRouteTests {
    static let password = "кашта́н у дворі"

    static func registration(_ n: Int) -> [String: Any] {
        ["name": "Інспектор \(n)", "email": "i\(n)@example.org", "phone": "067 123 45 \(10 + n)", "password": password]
    }

    /// An administrator made as `posterwatch user add` makes one, signed in over HTTP.
    static func admin(_ fixture: Fixture, _ client: any TestClientProtocol) async throws -> String {
        let draft = try AccountDraft(name: "Адмін", email: "admin@example.org", phone: "050 000 00 01", password: password, role: .admin)
        _ = try await fixture.accounts().create(draft)
        let login = try await client.send(.post, "/v1/auth/login", json: ["login": "admin@example.org", "password": password])
        return try #require(login.json["access_token"] as? String)
    }

    @Test("register answers 201 with OAuth tokens; the access token reads /v1/me; renaming works, changing one's role does not")
    func registerAndMe() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let created = try await client.send(.post, "/v1/auth/register", json: Self.registration(1))
            #expect(created.status == .created && created.headers[.location] == "/v1/me" && created.headers[.cacheControl] == "no-store")
            #expect(created.json["token_type"] as? String == "Bearer" && created.json["expires_in"] as? Int == 900)
            #expect(!String(decoding: created.body, as: UTF8.self).contains(Self.password))
            let token = try #require(created.json["access_token"] as? String)
            let me = try await client.send(.get, "/v1/me", token: token)
            #expect(me.status == .ok)
            #expect(me.json["email"] as? String == "i1@example.org" && me.json["phone"] as? String == "380671234511" && me.json["role"] as? String == "inspector")
            #expect(Set(me.json.keys) == ["id", "name", "email", "phone", "role"])
            let renamed = try await client.send(.patch, "/v1/me", json: ["name": "  Оксана  "], token: token)
            #expect(renamed.json["name"] as? String == "Оксана")
            let climb = try await client.send(.patch, "/v1/me", json: ["name": "Оксана", "role": "admin"], token: token)
            #expect(climb.status == .unprocessableContent && climb.error?["field"] as? String == "role")
            let after = try await client.send(.get, "/v1/me", token: token).json
            #expect(after["role"] as? String == "inspector" && after["name"] as? String == "Оксана")
        }
    }

    @Test("a bad registration is one 422 naming every field and rule, and writes nothing")
    func badRegistration() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let bad = try await client.send(.post, "/v1/auth/register", json: ["name": "", "email": "nope", "phone": "12", "password": "short", "extra": 1])
            #expect(bad.status == .unprocessableContent)
            let fields = try #require(bad.error?["fields"] as? [[String: String]])
            #expect(fields.map { $0["field"] } == ["extra", "name", "email", "phone", "password"])
            #expect(bad.error?["field"] as? String == "extra" && fields.allSatisfy { !($0["message"] ?? "").isEmpty })
            let missing = try await client.send(.post, "/v1/auth/register", json: ["name": 5])
            #expect((missing.error?["fields"] as? [[String: String]])?.map { $0["field"]! } == ["name", "email", "phone", "password"])
            #expect(try await fixture.accounts().accounts(limit: 10).isEmpty)
            for (raw, type, status) in [
                ("not json", "application/json", 400), ("[1, 2]", "application/json", 400), ("{}", "text/plain", 415),
                ("{\"name\": \"" + String(repeating: "x", count: 70_000) + "\"}", "application/json", 413),
            ] {
                let answer = try await client.send(.post, "/v1/auth/register", raw: raw, headers: [.contentType: type])
                #expect(answer.status.code == status, "\(raw.prefix(20)) as \(type)")
                #expect(answer.error?["code"] is String)
            }
        }
    }

    @Test("login by email in any case; a phone, an unknown login and a wrong password get the same 401; the fifth failure of one login from one address a 429")
    func login() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            _ = try await client.send(.post, "/v1/auth/register", json: Self.registration(2))
            let ok = try await client.send(.post, "/v1/auth/login", json: ["login": "I2@Example.org", "password": Self.password])
            #expect(ok.status == .ok && ok.json["refresh_token"] is String)
            let wrong = try await client.send(.post, "/v1/auth/login", json: ["login": "i2@example.org", "password": "wrong password"])
            let unknown = try await client.send(.post, "/v1/auth/login", json: ["login": "nobody@example.org", "password": "wrong password"])
            let phone = try await client.send(.post, "/v1/auth/login", json: ["login": "067 123 45 12", "password": Self.password])
            #expect(wrong.status == .unauthorized && unknown.status == .unauthorized && wrong.body == unknown.body && phone.body == wrong.body)
            #expect(wrong.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            // A body missing both names both in one 422.
            let empty = try await client.send(.post, "/v1/auth/login", json: ["login": 7])
            #expect(empty.status == .unprocessableContent && (empty.error?["fields"] as? [[String: String]])?.map { $0["field"]! } == ["login", "password"])
            for _ in 0..<4 { _ = try await client.send(.post, "/v1/auth/login", json: ["login": "i2@example.org", "password": "wrong password"]) }
            let throttled = try await client.send(.post, "/v1/auth/login", json: ["login": "i2@example.org", "password": Self.password])
            #expect(throttled.status == .tooManyRequests)
            #expect(Int(throttled.headers[.retryAfter] ?? "") ?? 0 > 0)
        }
    }

    @Test("registration never says a phone is in use; a taken email is named, 3 times an hour to one address, then 429; the refusals write nothing")
    func registrationEnumeration() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            for n in 1...3 { #expect(try await client.send(.post, "/v1/auth/register", json: Self.registration(n)).status == .created) }
            let store = try await fixture.accounts()
            var probe = Self.registration(9)
            probe["phone"] = "+380 67 123 45 11"
            #expect(try await client.send(.post, "/v1/auth/register", json: probe).status == .created, "another account may give a number already given")
            for n in 1...3 {
                var again = Self.registration(n)
                again["phone"] = "063 000 00 0\(n)"
                let taken = try await client.send(.post, "/v1/auth/register", json: again)
                #expect(taken.status == .unprocessableContent && taken.error?["field"] as? String == "email" && (taken.error?["fields"] as? [Any])?.count == 1)
            }
            let before = try await store.accounts(limit: 100)
            let limited = try await client.send(.post, "/v1/auth/register", json: Self.registration(10))
            #expect(limited.status == .tooManyRequests && Int(limited.headers[.retryAfter] ?? "") ?? 0 > 0)
            #expect(try await store.accounts(limit: 100) == before)
        }
    }

    @Test("refresh rotates; a reused refresh token ends the session; logout stops the access token at once")
    func refreshAndLogout() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let first = try await client.send(.post, "/v1/auth/register", json: Self.registration(3)).json
            let second = try await client.send(.post, "/v1/auth/refresh", json: ["refresh_token": first["refresh_token"]!])
            #expect(second.status == .ok)
            let reused = try await client.send(.post, "/v1/auth/refresh", json: ["refresh_token": first["refresh_token"]!])
            #expect(reused.status == .unauthorized && reused.headers[.wwwAuthenticate] != nil)
            #expect(try await client.send(.get, "/v1/me", token: second.json["access_token"] as? String).status == .unauthorized)

            let fresh = try await client.send(.post, "/v1/auth/login", json: ["login": "i3@example.org", "password": Self.password]).json
            let token = fresh["access_token"] as? String
            #expect(try await client.send(.post, "/v1/auth/logout", token: token).status == .noContent)
            #expect(try await client.send(.get, "/v1/me", token: token).status == .unauthorized)
        }
    }

    @Test("no token, a malformed one, a forged one: 401 with WWW-Authenticate; the public reads stay public")
    func tokens() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let token = try #require(try await client.send(.post, "/v1/auth/register", json: Self.registration(4)).json["access_token"] as? String)
            for (header, label) in [(nil, "none"), ("Basic abc", "basic"), ("Bearer", "empty"), ("Bearer " + token + "x", "forged")] as [(String?, String)] {
                let answer = try await client.send(.get, "/v1/me", headers: header.map { [.authorization: $0] } ?? [:])
                #expect(answer.status == .unauthorized, "\(label)")
                #expect(answer.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true, "\(label)")
            }
            #expect(try await client.send(.get, "/v1/statuses").status == .ok)
            #expect(try await client.send(.get, "/v1/statuses", token: token).status == .ok)
        }
    }

    @Test("roles: an inspector may not list or change accounts; an administrator may, but not their own; a disabled account's token stops")
    func administration() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let admin = try await Self.admin(fixture, client)
            let inspector = try await client.send(.post, "/v1/auth/register", json: Self.registration(5)).json
            let inspectorToken = inspector["access_token"] as? String
            let inspectorID = try #require(try await client.send(.get, "/v1/me", token: inspectorToken).json["id"] as? Int)
            #expect(try await client.send(.get, "/v1/users", token: inspectorToken).status == .forbidden)
            let selfPromotion = try await client.send(.patch, "/v1/users/\(inspectorID)", json: ["role": "admin"], token: inspectorToken)
            #expect(selfPromotion.status == .forbidden)
            #expect(try await client.send(.get, "/v1/users").status == .unauthorized)

            let list = try await client.send(.get, "/v1/users?role=inspector", token: admin)
            #expect(list.status == .ok && (list.json["users"] as? [[String: Any]])?.map { $0["id"] as? Int } == [inspectorID])
            #expect(list.json.keys.contains("next"))
            let promoted = try await client.send(.patch, "/v1/users/\(inspectorID)", json: ["role": "supervisor"], token: admin)
            #expect(promoted.status == .ok && promoted.json["role"] as? String == "supervisor")
            #expect(try await client.send(.get, "/v1/me", token: inspectorToken).json["role"] as? String == "supervisor")
            let adminID = try #require(try await client.send(.get, "/v1/me", token: admin).json["id"] as? Int)
            let own = try await client.send(.patch, "/v1/users/\(adminID)", json: ["disabled": true], token: admin)
            #expect(own.status == .unprocessableContent && own.error?["field"] as? String == "id")
            let badRole = try await client.send(.patch, "/v1/users/\(inspectorID)", json: ["role": "integration", "disabled": "yes"], token: admin)
            #expect((badRole.error?["fields"] as? [[String: String]])?.map { $0["field"]! }.sorted() == ["disabled", "role"])

            #expect(try await client.send(.get, "/v1/me", token: inspectorToken).status == .ok)
            #expect(try await client.send(.patch, "/v1/users/\(inspectorID)", json: ["disabled": true], token: admin).json["disabled"] as? Bool == true)
            #expect(try await client.send(.get, "/v1/me", token: inspectorToken).status == .unauthorized)
            let login = try await client.send(.post, "/v1/auth/login", json: ["login": "i5@example.org", "password": Self.password])
            let wrong = try await client.send(.post, "/v1/auth/login", json: ["login": "i5@example.org", "password": "not the password"])
            #expect(login.status == .unauthorized && login.body == wrong.body, "a disabled account does not confirm its password")
            #expect(try await client.send(.patch, "/v1/users/999", json: ["disabled": true], token: admin).status == .notFound)
        }
    }

    @Test("a demoted account's old token does nothing above its new role at the next request, and writes nothing")
    func demotion() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let admin = try await Self.admin(fixture, client)
            _ = try await client.send(.post, "/v1/auth/register", json: Self.registration(4))
            let user = try await client.send(.post, "/v1/auth/register", json: Self.registration(5)).json
            let userID = try #require(try await client.send(.get, "/v1/me", token: user["access_token"] as? String).json["id"] as? Int)
            #expect(try await client.send(.patch, "/v1/users/\(userID)", json: ["role": "admin"], token: admin).status == .ok)
            let promoted = try await client.send(.post, "/v1/auth/login", json: ["login": "i5@example.org", "password": Self.password]).json["access_token"] as? String
            #expect(try await client.send(.get, "/v1/users", token: promoted).status == .ok)
            #expect(try await client.send(.patch, "/v1/users/\(userID)", json: ["role": "inspector"], token: admin).status == .ok)
            let before = try await fixture.accounts().accounts(limit: 100)
            #expect(try await client.send(.get, "/v1/users", token: promoted).status == .forbidden)
            #expect(try await client.send(.patch, "/v1/users/\(userID - 1)", json: ["role": "supervisor"], token: promoted).status == .forbidden)
            #expect(try await client.send(.patch, "/v1/users/\(userID)", json: ["role": "admin"], token: promoted).status == .forbidden)
            #expect(try await fixture.accounts().accounts(limit: 100) == before)
            #expect(try await client.send(.get, "/v1/me", token: promoted).json["role"] as? String == "inspector")
        }
    }

    @Test("sessions: listed with the current one marked, ended one by one; a password change ends the others")
    func sessionsAndPassword() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let first = try await client.send(.post, "/v1/auth/register", json: Self.registration(6)).json["access_token"] as? String
            let second = try await client.send(.post, "/v1/auth/login", json: ["login": "i6@example.org", "password": Self.password]).json["access_token"] as? String
            let third = try await client.send(.post, "/v1/auth/login", json: ["login": "i6@example.org", "password": Self.password]).json["access_token"] as? String
            let sessions = try #require(try await client.send(.get, "/v1/me/sessions", token: first).json["sessions"] as? [[String: Any]])
            #expect(sessions.count == 3 && sessions.filter { $0["current"] as? Bool == true }.count == 1)
            let other = try #require(sessions.first { $0["current"] as? Bool == false }?["id"] as? String)
            #expect(try await client.send(.delete, "/v1/me/sessions/\(other)", token: first).status == .noContent)
            #expect(try await client.send(.delete, "/v1/me/sessions/\(other)", token: first).status == .notFound)
            #expect(try await client.send(.get, "/v1/me/sessions", token: first).json["sessions"].map { ($0 as? [Any])?.count } == 2)

            let wrong = try await client.send(.post, "/v1/me/password", json: ["old_password": "nope", "new_password": "новий довгий пароль"], token: first)
            #expect(wrong.status == .unprocessableContent && wrong.error?["field"] as? String == "old_password")
            let changed = try await client.send(.post, "/v1/me/password", json: ["old_password": Self.password, "new_password": "новий довгий пароль"], token: first)
            #expect(changed.status == .noContent)
            #expect(try await client.send(.get, "/v1/me", token: first).status == .ok)
            for token in [second, third] { #expect(try await client.send(.get, "/v1/me", token: token).status == .unauthorized) }
        }
    }

    @Test("an API key is a bearer credential of the integration role: it may not act as a person; revoked, it is a 401")
    func apiKeys() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let keys = try await fixture.accounts()
            let (key, secret) = try await keys.createAPIKey(name: "blocklist sync")
            let me = try await client.send(.get, "/v1/me", token: secret)
            #expect(me.status == .forbidden)
            #expect(try await client.send(.get, "/v1/users", token: secret).status == .forbidden)
            #expect(try await client.send(.get, "/v1/statuses", token: secret).status == .ok)
            try await keys.revokeAPIKey(key.id)
            #expect(try await client.send(.get, "/v1/statuses", token: secret).status == .unauthorized)
        }
    }

    @Test("every endpoint that needs a role refuses no token (401), a lower role and an integration's key (403), and a refused request writes nothing")
    func refusals() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let admin = try await Self.admin(fixture, client)
            let inspector = try #require(try await client.send(.post, "/v1/auth/register", json: Self.registration(7)).json["access_token"] as? String)
            let inspectorID = try #require(try await client.send(.get, "/v1/me", token: inspector).json["id"] as? Int)
            let supervisor = try await ReportRouteTests.account(fixture, client, .supervisor, 8).token
            let integration = try await fixture.accounts().createAPIKey(name: "blocklist sync").secret
            let webhookID = try await WebhookService(storage: SQLiteWebhooks(fixture.store)).register(
                try WebhookDraft(url: "http://127.0.0.1:9/hook", events: ["report.created"], description: nil)).webhook.id
            func state() throws -> String {
                let accounts = try fixture.store.pool.read { db in
                    try String.fetchAll(db, sql: "SELECT id || ' ' || name || ' ' || role || ' ' || disabled FROM account ORDER BY id")
                }
                let sessions = try fixture.store.pool.read { db in try String.fetchAll(db, sql: "SELECT id || coalesce(ended_at, 'open') FROM session ORDER BY id") }
                let reports = try fixture.store.pool.read { db in
                    try String.fetchAll(db, sql: """
                        SELECT (SELECT count(*) || ' ' || sum(updated_at) FROM report) || ' ' || (SELECT count(*) FROM report_hidden)
                            || ' ' || (SELECT count(*) FROM report_history) || ' ' || (SELECT count(*) FROM idempotency_key)
                            || ' ' || (SELECT count(*) FROM notification_read)
                            || ' ' || (SELECT group_concat(id || url || description || enabled || updated_at) FROM webhook)
                            || ' ' || (SELECT count(*) FROM webhook_event) || ' ' || (SELECT count(*) FROM webhook_delivery)
                            || ' ' || (SELECT count(*) FROM report_photo)
                            || ' ' || (SELECT count(*) FROM phone) || ' ' || (SELECT count(*) FROM phone_history)
                            || ' ' || (SELECT count(*) FROM autodial_campaign) || ' ' || (SELECT count(*) FROM autodial_call)
                            || ' ' || (SELECT count(*) || ' ' || coalesce(sum(position), 0) FROM assignment)
                        """)
                }
                return (accounts + sessions + reports).joined(separator: "\n")
            }
            // The strongest body each endpoint takes, so that only the refusal stops it.
            let bodies: [String: Any] = [
                "/v1/me": ["name": "Змінено"], "/v1/me/password": ["old_password": Self.password, "new_password": "новий довгий пароль"],
                "/v1/users/{id}": ["role": "admin", "disabled": true],
                "/v1/reports": ReportRouteTests.newReport(), "/v1/reports/{id}": ["address": "вул. Інша, 1"],
                "/v1/reports/{id}/transitions": ["to": "verifying"], "/v1/reports/{id}/hide": ["note": "спам"], "/v1/reports/{id}/unhide": [:],
                "/v1/me/notifications/read": ["up_to": 999_999],
                "/v1/webhooks": ["url": "http://127.0.0.1:9/new", "events": ["report.created"]],
                "/v1/webhooks/{id}": ["url": "http://127.0.0.1:9/other", "enabled": false],
                "/v1/phones/{number}/verification": ["outcome": "violator", "note": "так"], "/v1/phones/{number}/block": ["note": "ні"],
                "/v1/phones/{number}/autodial": ["note": "дзвонимо"], "/v1/phones/{number}/autodial/stop": ["note": "досить"],
                "/v1/reports/{id}/assignment": ["user_id": inspectorID, "note": "перевір"],
                "/v1/assignments": ["report_ids": [fixture.reports[0].id], "user_id": inspectorID], "/v1/me/assignments": ["order": [Int]()],
            ]
            let protected = Endpoint.all.filter { $0.access != .anyone }
            #expect(protected.count == 42)
            let reportID = fixture.reports[0].id
            for endpoint in protected {
                let roles = try #require(endpoint.access.roles)
                let id = endpoint.path.hasPrefix("/v1/users") ? "\(inspectorID)" : endpoint.path.hasPrefix("/v1/reports") ? "\(reportID)"
                    : endpoint.path.hasPrefix("/v1/webhooks") ? "\(webhookID)" : "abcdefghijklmnop"
                let uri = endpoint.path.replacingOccurrences(of: "{id}", with: id)
                    .replacingOccurrences(of: "{number}", with: "0" + fixture.reports[0].phones[0].dropFirst(3))
                    + (endpoint.queryNames.contains("since") ? "?since=0" : "")
                let body = endpoint.method == .get || endpoint.method == .delete ? nil : bodies[endpoint.path] ?? [:]
                let before = try state()
                let anonymous = try await client.send(endpoint.method, uri, json: body)
                #expect(anonymous.status == .unauthorized && anonymous.headers[.wwwAuthenticate] != nil, "\(endpoint.method) \(endpoint.path)")
                if !roles.contains(.inspector) {
                    let lower = try await client.send(endpoint.method, uri, json: body, token: inspector)
                    #expect(lower.status == .forbidden, "\(endpoint.method) \(endpoint.path) with an inspector's token")
                }
                if !roles.contains(where: Role.supervisor.includes) {
                    let lower = try await client.send(endpoint.method, uri, json: body, token: supervisor)
                    #expect(lower.status == .forbidden, "\(endpoint.method) \(endpoint.path) with a supervisor's token")
                }
                // A key acts for a system, never as a person: only the endpoints made for integrations take one.
                if !roles.contains(.integration) {
                    let key = try await client.send(endpoint.method, uri, json: body, token: integration)
                    #expect(key.status == .forbidden, "\(endpoint.method) \(endpoint.path) with an integration's key")
                }
                #expect(try state() == before, "\(endpoint.method) \(endpoint.path) wrote although refused")
            }
            #expect(try await client.send(.get, "/v1/users", token: admin).status == .ok)
        }
    }

    @Test("methods a path does not take are a 405 naming those it does")
    func methods() async throws {
        let fixture = try await Fixture()
        try await fixture.test { client in
            let answer = try await client.send(.delete, "/v1/me")
            #expect(answer.status == .methodNotAllowed && answer.headers[.allow] == "GET, HEAD, PATCH, OPTIONS")
            #expect(try await client.send(.get, "/v1/auth/login").headers[.allow] == "POST, OPTIONS")
        }
    }
}

/// The whole account story over the real server and a real socket, as a client app lives it.
@Suite("Accounts end to end, over a socket")
struct AccountEndToEndTests {
    @Test("register, sign in by email in another case, refresh, reuse a refresh token, sign out, an administrator disables an account")
    func story() async throws {
        let fixture = try await Fixture()
        try await fixture.live { _, client in
            let password = AccountRouteTests.password
            let registered = try await client.send(.post, "/v1/auth/register", json: [
                "name": "Марія", "email": "maria@example.org", "phone": "+380 (93) 555-12-34", "password": password,
            ])
            #expect(registered.status == .created)
            let login = try await client.send(.post, "/v1/auth/login", json: ["login": " MARIA@example.org", "password": password])
            #expect(login.status == .ok)
            let refreshed = try await client.send(.post, "/v1/auth/refresh", json: ["refresh_token": login.json["refresh_token"]!])
            #expect(refreshed.status == .ok)
            let token = try #require(refreshed.json["access_token"] as? String)
            #expect(try await client.send(.get, "/v1/me", token: token).json["phone"] as? String == "380935551234")

            let reuse = try await client.send(.post, "/v1/auth/refresh", json: ["refresh_token": login.json["refresh_token"]!])
            #expect(reuse.status == .unauthorized)
            #expect(try await client.send(.get, "/v1/me", token: token).status == .unauthorized, "the reused token's session is over")

            let other = try #require(registered.json["access_token"] as? String)
            #expect(try await client.send(.get, "/v1/me", token: other).status == .ok, "the registration's session is another one")
            #expect(try await client.send(.post, "/v1/auth/logout", token: other).status == .noContent)
            #expect(try await client.send(.get, "/v1/me", token: other).status == .unauthorized)

            let again = try await client.send(.post, "/v1/auth/login", json: ["login": "Maria@Example.org", "password": password])
            let maria = try #require(again.json["access_token"] as? String)
            let mariaID = try #require(try await client.send(.get, "/v1/me", token: maria).json["id"] as? Int)
            let admin = try await AccountRouteTests.admin(fixture, client)
            let disabled = try await client.send(.patch, "/v1/users/\(mariaID)", json: ["disabled": true], token: admin)
            #expect(disabled.status == .ok && disabled.json["disabled"] as? Bool == true)
            let refused = try await client.send(.get, "/v1/me", token: maria)
            #expect(refused.status == .unauthorized && refused.headers[.wwwAuthenticate] != nil)
            #expect(try await client.send(.post, "/v1/auth/login", json: ["login": "maria@example.org", "password": password]).status == .unauthorized)
        }
    }
}
