@testable import Accounts
import Foundation
import Geometry
import JWTKit
import ReportModel
import SQLiteStore
import StorePorts
import Testing
import TestSupport

@Suite("The account service: sign-in, tokens, sessions")
struct AccountServiceTests {
    static func service(_ fixture: TemporaryAccounts, throttle: LoginThrottle = LoginThrottle()) async throws -> AccountService {
        try await AccountService(storage: fixture.accounts, passwords: Passwords(cost: 4), throttle: throttle)
    }

    static let password = "кашта́н у дворі"

    /// The stored signing keys, newest first.
    static func signingKeys(_ fixture: TemporaryAccounts) async throws -> [SigningKey] {
        try await fixture.accounts.signingKeys(storingIfNone: AccessTokens.newKey())
    }

    static func register(_ service: AccountService, _ n: Int = 1) async throws -> (account: Account, tokens: AccountService.TokenPair) {
        try await service.register(name: "Інспектор \(n)", email: "i\(n)@example.org", phone: "067 123 45 \(10 + n)", password: password)
    }

    @Test("registration answers an OAuth token pair whose access token speaks for a new inspector")
    func register() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (account, tokens) = try await Self.register(service)
        #expect(account.role == .inspector)
        #expect(tokens.tokenType == "Bearer" && tokens.expiresIn == 900 && tokens.refreshToken.count >= 43)
        let identity = try await service.authenticate(tokens.accessToken)
        #expect(identity.accountID == account.id && identity.role == .inspector)
        let json = String(decoding: try JSONEncoder().encode(tokens), as: UTF8.self)
        for key in ["access_token", "token_type", "expires_in", "refresh_token"] { #expect(json.contains("\"\(key)\"")) }
        let taken = await #expect(throws: ValidationErrors.self) { try await Self.register(service) }
        #expect(taken?.issues.map(\.field) == ["email"])
    }

    @Test("a phone already on an account is no obstacle and no login: registration and sign-in say nothing of whose number it is")
    func phoneIsNoIdentifier() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (first, _) = try await Self.register(service)
        let (second, _) = try await service.register(name: "Друга", email: "second@example.org", phone: "+380 67 123 45 11", password: Self.password)
        #expect(first.phone == second.phone && first.id != second.id)
        let byPhone = await #expect(throws: Unauthorized.self) { try await service.login("067 123 45 11", password: Self.password, client: "a") }
        let unknown = await #expect(throws: Unauthorized.self) { try await service.login("067 999 99 99", password: Self.password, client: "a") }
        #expect(byPhone == unknown)
    }

    @Test("one address is told an email is taken 3 times an hour, one email is named by 3 registrations an hour; then 429, and nothing is written")
    func registrationLimits() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        for n in 1...3 {
            _ = try await Self.register(service, n)
            await #expect(throws: ValidationErrors.self) {
                try await service.register(name: "Зловмисник", email: "i\(n)@example.org", phone: "067 000 00 00", password: Self.password, client: "10.0.0.1")
            }
        }
        await #expect(throws: TooManyAttempts.self) {
            try await service.register(name: "Зловмисник", email: "free@example.org", phone: "067 000 00 00", password: Self.password, client: "10.0.0.1")
        }
        #expect(try await fixture.accounts.account(emailKey: "free@example.org") == nil)
        // Another address may register, but one email only so often, whoever asks.
        _ = try await service.register(name: "Нова", email: "free@example.org", phone: "067 000 00 00", password: Self.password, client: "10.0.0.2")
        for i in 0..<2 {
            await #expect(throws: ValidationErrors.self) {
                try await service.register(name: "Н", email: "FREE@example.org", phone: "067 000 00 00", password: Self.password, client: "10.1.0.\(i)")
            }
        }
        await #expect(throws: TooManyAttempts.self) {
            try await service.register(name: "Н", email: "free@example.org", phone: "067 000 00 00", password: Self.password, client: "10.2.0.1")
        }
        // The window passes.
        let throttle = RegistrationThrottle(perEmail: 1, perClientTaken: 1, window: 60)
        #expect(try await throttle.attempt(email: "e", client: "c") == nil)
        #expect(try await throttle.wait(email: "e", client: "c") != nil)
        #expect(try await throttle.wait(email: "e", client: "c", now: Date().addingTimeInterval(61)) == nil)
    }

    @Test("a login by email in any case; an unknown login, a wrong password and a disabled account (right password or not) fail alike")
    func login() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (account, _) = try await Self.register(service)
        for login in ["I1@Example.org", " i1@example.org "] {
            let tokens = try await service.login(login, password: Self.password, client: "127.0.0.1")
            #expect(try await service.authenticate(tokens.accessToken).accountID == account.id)
        }
        let wrongPassword = await #expect(throws: Unauthorized.self) { try await service.login("i1@example.org", password: "not it at all", client: "a") }
        let unknown = await #expect(throws: Unauthorized.self) { try await service.login("nobody@example.org", password: Self.password, client: "b") }
        #expect(wrongPassword == unknown)
        #expect(try await fixture.accounts.account(id: account.id)?.lastLoginAt != nil)
        _ = try await service.setDisabled(account.id, true)
        let lastLogin = try await fixture.accounts.account(id: account.id)?.lastLoginAt
        let disabledRight = await #expect(throws: Unauthorized.self) { try await service.login("i1@example.org", password: Self.password, client: "c") }
        let disabledWrong = await #expect(throws: Unauthorized.self) { try await service.login("i1@example.org", password: "not it at all", client: "c") }
        #expect(disabledRight == wrongPassword && disabledWrong == wrongPassword)
        #expect(try await fixture.accounts.account(id: account.id)?.lastLoginAt == lastLogin, "a refused login records nothing")
        // Logins no account can have are refused alike without a lookup (a NUL is refused by PostgreSQL's text).
        for impossible in ["i1@example.org\u{0}", String(repeating: "a", count: 60_000) + "@example.org", "no at sign"] {
            let refused = await #expect(throws: Unauthorized.self) { try await service.login(impossible, password: Self.password, client: "d") }
            #expect(refused == wrongPassword)
        }
    }

    @Test("5 failures of one login from one address hold back that address only; 20 from one address at any logins hold it back; the owner elsewhere signs in")
    func throttling() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        _ = try await Self.register(service, 1)
        _ = try await Self.register(service, 2)
        for i in 0..<5 { _ = try? await service.login("i1@example.org", password: "wrong \(i)", client: "attacker") }
        let tooMany = await #expect(throws: TooManyAttempts.self) { try await service.login("i1@example.org", password: Self.password, client: "attacker") }
        #expect((1...900).contains(tooMany?.retryAfter ?? 0))
        // Guesses from many addresses never lock the owner out.
        for address in 0..<10 {
            for i in 0..<5 { _ = try? await service.login("i1@example.org", password: "wrong \(i)", client: "10.9.0.\(address)") }
        }
        _ = try await service.login("i1@example.org", password: Self.password, client: "home")
        // The attacker may still try another account...
        _ = try await service.login("i2@example.org", password: Self.password, client: "attacker")
        // ...until it has failed 20 times from its address, at whatever logins.
        for i in 0..<15 { _ = try? await service.login("guess\(i)@example.org", password: "wrong", client: "attacker") }
        await #expect(throws: TooManyAttempts.self) { try await service.login("i2@example.org", password: Self.password, client: "attacker") }
        // The window passes.
        let throttle = LoginThrottle(perAccountAndClient: 2, perClient: 10, window: 60)
        let now = Date(), later = now.addingTimeInterval(61)
        #expect(try await throttle.attempt(login: "k", client: "c", now: now) == nil)
        #expect(try await throttle.attempt(login: "k", client: "c", now: now) == nil)
        #expect(try await throttle.wait(login: "k", client: "c", now: now) != nil)
        #expect(try await throttle.wait(login: "k", client: "c", now: later) == nil)
        #expect(try await throttle.wait(login: "k", client: "other") == nil)
        // A success forgets the login's failures from that client, and takes back its own count only.
        let started = Date()
        #expect(try await throttle.attempt(login: "j", client: "d", now: started) == nil)
        try await throttle.succeeded(login: "j", client: "d", at: started)
        for _ in 0..<9 { _ = try await throttle.attempt(login: "x\(UUID())", client: "d") }
        #expect(try await throttle.attempt(login: "j", client: "d") == nil, "9 counted for the address, not 10")
        #expect(try await throttle.attempt(login: "j", client: "d") != nil)
    }

    @Test("guesses sent in parallel cannot outrun the count: of 15 at once for one login from one address, at most 5 are checked; of 10 registrations at once naming taken emails, at most 3 are told")
    func parallelAttempts() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        for n in 1...10 { _ = try await Self.register(service, n) }
        let answers = await withTaskGroup(of: String.self) { group in
            for i in 0..<15 {
                group.addTask {
                    do { _ = try await service.login("i2@example.org", password: "wrong \(i)", client: "parallel"); return "signed in" }
                    catch is TooManyAttempts { return "429" } catch { return "401" }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(answers.filter { $0 == "401" }.count == 5 && answers.filter { $0 == "429" }.count == 10, "\(answers)")
        let registrations = await withTaskGroup(of: String.self) { group in
            for n in 1...10 {
                group.addTask {
                    do {
                        _ = try await service.register(name: "З", email: "i\(n)@example.org", phone: "067 000 00 00", password: Self.password, client: "enumerator")
                        return "created"
                    } catch is TooManyAttempts { return "429" } catch { return "422" }
                }
            }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(registrations.filter { $0 == "422" }.count == 3 && registrations.filter { $0 == "429" }.count == 7, "\(registrations)")
    }

    @Test("a refresh rotates the pair; presenting a used refresh token ends the session and its access tokens")
    func refreshRotation() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (_, first) = try await Self.register(service)
        let second = try await service.refresh(first.refreshToken)
        #expect(second.refreshToken != first.refreshToken && second.accessToken != first.accessToken)
        let third = try await service.refresh(second.refreshToken)
        let reuse = await #expect(throws: Unauthorized.self) { try await service.refresh(first.refreshToken) }
        #expect(reuse?.reason.contains("already used") == true)
        await #expect(throws: Unauthorized.self) { try await service.refresh(third.refreshToken) }
        await #expect(throws: Unauthorized.self) { try await service.authenticate(third.accessToken) }
        await #expect(throws: Unauthorized.self) { try await service.refresh("made-up") }
    }

    @Test("replicas share keys: one started after a rotation signs with the new key, another reads the keys again on its first failed check; each signs with the newest within a minute")
    func keysAcrossReplicas() async throws {
        let fixture = try TemporaryAccounts()
        let start = Date()
        let running = try await AccessTokens(fixture.accounts, now: start)
        let second = try await AccessTokens.rotate(fixture.accounts)
        let restarted = try await AccessTokens(fixture.accounts, now: start)
        #expect(restarted.signingKid.string == second && running.signingKid.string != second)
        let token = try await restarted.issue(accountID: 7, role: .inspector, sessionID: "s", now: start).token
        #expect(try await running.verify(token).sub.value == "7", "read the keys again, and took it")
        // A rotation later, the running replica signs with the newest key within a minute.
        let third = try await AccessTokens.rotate(fixture.accounts)
        let later = try await running.issue(accountID: 7, role: .inspector, sessionID: "s", now: Date().addingTimeInterval(61)).token
        let subject = try await restarted.verify(later).sub.value
        #expect(running.signingKid.string == third && subject == "7")
    }

    @Test("a refresh token's tag verifies on every replica while its key is kept (one rotation), not after two; never as a JWT's signature")
    func refreshTags() async throws {
        let fixture = try TemporaryAccounts()
        let first = try await AccessTokens(fixture.accounts)
        let token = RefreshToken(session: "abc", secret: "secret", tags: first)
        #expect(RefreshToken(token.text).provenSession(first) == "abc")
        _ = try await AccessTokens.rotate(fixture.accounts)
        #expect(RefreshToken(token.text).provenSession(try await AccessTokens(fixture.accounts)) == "abc", "its key is kept")
        _ = try await AccessTokens.rotate(fixture.accounts)
        #expect(RefreshToken(token.text).provenSession(try await AccessTokens(fixture.accounts)) == nil, "its key dropped: known by its hash alone")
        // A JWT's three parts are no tagged refresh token.
        let jwt = try await first.issue(accountID: 1, role: .inspector, sessionID: "abc").token
        #expect(RefreshToken(jwt).provenSession(first) == nil)
    }

    @Test("a copied refresh token is caught however many rotations later: the token names its session (a thief rotating 65 times had made the first one unknown)")
    func reuseAfterManyRotations() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (_, first) = try await Self.register(service)
        var latest = first
        for _ in 0..<(AccountService.rotatedKept + 1) { latest = try await service.refresh(latest.refreshToken) }
        let reuse = await #expect(throws: Unauthorized.self) { try await service.refresh(first.refreshToken) }
        #expect(reuse?.reason.contains("already used") == true, "\(String(describing: reuse))")
        await #expect(throws: Unauthorized.self) { try await service.refresh(latest.refreshToken) }
        await #expect(throws: Unauthorized.self) { try await service.authenticate(latest.accessToken) }
        // A token of the form given before (the secret alone) still rotates.
        let (_, other) = try await Self.register(service, 2)
        let parts = other.refreshToken.split(separator: ".").map(String.init)
        #expect(parts.count == 3 && RefreshToken(other.refreshToken).secret == parts[1] && RefreshToken(parts[1]).session == nil)
        let fromOld = try await service.refresh(parts[1])
        #expect(RefreshToken(fromOld.refreshToken).session == parts[0], "and comes back naming its session")
        // A session's id is no secret (access tokens carry it): a token made up around it, or
        // a real one's tag on another secret, is unknown, and the session lives on.
        for forged in [parts[0] + ".x.y", parts[0] + "." + String(repeating: "A", count: 43) + "." + parts[2]] {
            let refused = await #expect(throws: Unauthorized.self) { try await service.refresh(forged) }
            #expect(refused?.reason.contains("not valid") == true, "\(forged)")
        }
        _ = try await service.refresh(fromOld.refreshToken)
    }

    @Test("logout and a disabled account stop access tokens at once, and after a restart; a disabled account cannot sign in")
    func revocation() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (account, tokens) = try await Self.register(service)
        let other = try await service.login("i1@example.org", password: Self.password, client: "x")
        let identity = try await service.authenticate(tokens.accessToken)
        try await service.endSession(identity.sessionID, of: identity)
        await #expect(throws: Unauthorized.self) { try await service.authenticate(tokens.accessToken) }
        await #expect(throws: Unauthorized.self) { try await service.refresh(tokens.refreshToken) }
        _ = try await service.authenticate(other.accessToken)

        _ = try await service.setDisabled(account.id, true)
        await #expect(throws: Unauthorized.self) { try await service.authenticate(other.accessToken) }
        await #expect(throws: Unauthorized.self) { try await service.login("i1@example.org", password: Self.password, client: "x") }
        // A restarted server still refuses them.
        let restarted = try await Self.service(fixture)
        await #expect(throws: Unauthorized.self) { try await restarted.authenticate(other.accessToken) }
        _ = try await restarted.setDisabled(account.id, false)
        _ = try await restarted.login("i1@example.org", password: Self.password, client: "x")
    }

    @Test("the caller's account is remembered, yet a write made here is seen on the next read, and a read begun before a write is not kept")
    func knownAccounts() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (account, tokens) = try await Self.register(service)
        let identity = try await service.authenticate(tokens.accessToken)
        #expect(try await service.account(of: identity).name == account.name)
        _ = try await service.rename(identity, to: "Друге Ім'я")
        #expect(try await service.account(of: identity).name == "Друге Ім'я")
        let admin = AccountService.Identity(accountID: 0, role: .admin, sessionID: "")
        _ = try await service.administer(account.id, role: .supervisor, disabled: nil, by: admin)
        #expect(try await service.account(of: identity).role == .supervisor)

        var known = KnownAccounts()
        let readAt = known.generation
        known.forget(account.id)
        known.remember(account, readAt: readAt)
        #expect(known.accounts.isEmpty)
        known.remember(account, readAt: known.generation)
        #expect(known.accounts[account.id] == account)
    }

    @Test("a password change needs the old password, checks the new one, and ends every other session")
    func changePassword() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (_, mine) = try await Self.register(service)
        let elsewhere = try await service.login("i1@example.org", password: Self.password, client: "x")
        let me = try await service.authenticate(mine.accessToken)
        let wrongOld = await #expect(throws: ValidationErrors.self) { try await service.changePassword(of: me, old: "not it", new: "новий довгий пароль", client: "x") }
        #expect(wrongOld?.issues.map(\.field) == ["old_password"])
        let weak = await #expect(throws: ValidationErrors.self) { try await service.changePassword(of: me, old: Self.password, new: "1234567890", client: "x") }
        #expect(weak?.issues.map(\.field) == ["new_password"])
        try await service.changePassword(of: me, old: Self.password, new: "новий довгий пароль", client: "x")
        await #expect(throws: Unauthorized.self) { try await service.authenticate(elsewhere.accessToken) }
        _ = try await service.authenticate(mine.accessToken)
        await #expect(throws: Unauthorized.self) { try await service.login("i1@example.org", password: Self.password, client: "y") }
        _ = try await service.login("i1@example.org", password: "новий довгий пароль", client: "y")
        // Guesses of the old password are throttled as logins are: 5 from one address, then a wait.
        let now = try await service.authenticate(try await service.login("i1@example.org", password: "новий довгий пароль", client: "z").accessToken)
        for i in 0..<5 { _ = try? await service.changePassword(of: now, old: "guess \(i)", new: "ще один довгий пароль", client: "thief") }
        await #expect(throws: TooManyAttempts.self) { try await service.changePassword(of: now, old: "новий довгий пароль", new: "ще один довгий пароль", client: "thief") }
        try await service.changePassword(of: now, old: "новий довгий пароль", new: "ще один довгий пароль", client: "owner")
    }

    @Test("tampered tokens are refused: alg none, another key, expired, another audience or issuer, a changed payload")
    func tampered() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (account, tokens) = try await Self.register(service)
        let identity = try await service.authenticate(tokens.accessToken)
        let key = try #require(try await AccountServiceTests.signingKeys(fixture).first)
        func signed(secret: Data, kid: String = key.kid, _ change: (inout AccessClaims) -> Void) async throws -> String {
            var claims = AccessClaims(
                sub: .init(value: String(account.id)), role: "admin", sid: identity.sessionID, iss: .init(value: "posterwatch"),
                aud: .init(value: "posterwatch-api"), exp: .init(value: Date().addingTimeInterval(600)), iat: .init(value: Date()),
                jti: .init(value: "forged"))
            change(&claims)
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
            return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
        }
        // The real key signs a valid token (so the forgeries below fail for their own fault).
        #expect(try await service.authenticate(try await signed(secret: key.secret) { _ in }).role == .admin)
        var forgeries = [
            try await signed(secret: Data(repeating: 7, count: 32)) { _ in },
            try await signed(secret: Data(repeating: 7, count: 32), kid: "other") { _ in },
            try await signed(secret: key.secret) { $0.exp = .init(value: Date().addingTimeInterval(-1)) },
            try await signed(secret: key.secret) { $0.aud = .init(value: "someone-else") },
            try await signed(secret: key.secret) { $0.iss = .init(value: "someone-else") },
            "", "Bearer", "a.b.c", tokens.accessToken + "x",
        ]
        func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let parts = tokens.accessToken.split(separator: ".")
        forgeries.append(base64URL(#"{"alg":"none","typ":"JWT","kid":"\#(key.kid)"}"#) + "." + parts[1] + ".")
        let payload = String(decoding: Data(base64Encoded: String(parts[1]).padding(toLength: (parts[1].count + 3) / 4 * 4, withPad: "=", startingAt: 0)
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")) ?? Data(), as: UTF8.self)
        forgeries.append(parts[0] + "." + base64URL(payload.replacingOccurrences(of: "\"inspector\"", with: "\"admin\"")) + "." + parts[2])
        for token in forgeries {
            await #expect(throws: Unauthorized.self, "\(token.prefix(60))") { try await service.authenticate(token) }
        }
    }

    @Test("a rotated key keeps the tokens it signed valid; two rotations later they are refused")
    func keyRotation() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await Self.service(fixture)
        let (_, tokens) = try await Self.register(service)
        let firstKid = try #require(try await AccountServiceTests.signingKeys(fixture).first?.kid)
        let newKid = try await AccessTokens.rotate(fixture.accounts)
        let restarted = try await Self.service(fixture)
        _ = try await restarted.authenticate(tokens.accessToken)
        let fresh = try await restarted.login("i1@example.org", password: Self.password, client: "x")
        #expect(fresh.accessToken.split(separator: ".").first.map { String(decoding: Data(base64Encoded: String($0) + "==") ?? Data(), as: UTF8.self) }?.contains(newKid) == true)
        _ = try await AccessTokens.rotate(fixture.accounts)
        #expect(try await AccountServiceTests.signingKeys(fixture).map(\.kid).contains(firstKid) == false)
        let later = try await Self.service(fixture)
        await #expect(throws: Unauthorized.self) { try await later.authenticate(tokens.accessToken) }
        _ = try await later.authenticate(fresh.accessToken)
    }
}

@Suite("Access tokens checked by an independent implementation")
struct IndependentTokenTests {
    /// joserfc (PyPI; `make test` installs it) verifies the token with the stored key, HS256
    /// only, and checks its claims.
    @Test("joserfc verifies an access token's signature, algorithm and claims")
    func joserfc() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await AccountServiceTests.service(fixture)
        let (account, tokens) = try await AccountServiceTests.register(service)
        let key = try #require(try await AccountServiceTests.signingKeys(fixture).first)
        let script = """
            import json, os, sys, time
            from joserfc import jwt
            from joserfc.jwk import OctKey
            from joserfc.jwt import JWTClaimsRegistry
            key = OctKey.import_key(bytes.fromhex(os.environ["KEY"]))
            token = jwt.decode(os.environ["TOKEN"], key, algorithms=["HS256"])
            JWTClaimsRegistry(iss={"essential": True, "value": "posterwatch"}, aud={"essential": True, "value": "posterwatch-api"},
                              exp={"essential": True}, sub={"essential": True}).validate(token.claims)
            print(json.dumps({"header": token.header, "claims": token.claims}, sort_keys=True))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["KEY": key.secret.map { String(format: "%02x", $0) }.joined(), "TOKEN": tokens.accessToken]) { $1 }
        let out = Pipe.unshared(), err = Pipe.unshared()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(errors)")
        let json = try #require(try JSONSerialization.jsonObject(with: output) as? [String: [String: Any]])
        #expect(json["header"]?["alg"] as? String == "HS256" && json["header"]?["kid"] as? String == key.kid)
        let claims = try #require(json["claims"])
        #expect(claims["sub"] as? String == String(account.id) && claims["role"] as? String == "inspector" && claims["sid"] is String)
        let lifetime = (claims["exp"] as? Double ?? 0) - (claims["iat"] as? Double ?? 0)
        #expect(lifetime == 900)
    }
}

@Suite("API keys")
struct APIKeyTests {
    @Test("a key is shown once, stored as a hash, authenticates as an integration, and stops when revoked")
    func lifecycle() async throws {
        let fixture = try TemporaryAccounts()
        let service = try await AccountServiceTests.service(fixture)
        let (key, secret) = try await service.createAPIKey(name: "Оператор: синхронізація")
        #expect(secret.hasPrefix("pwk_") && secret.count >= 47)
        let stored = try await fixture.store.pool.read { db in try String.fetchAll(db, sql: "SELECT quote(key_hash) || name FROM api_key") }
        #expect(!stored.joined().contains(String(secret.dropFirst(4))))
        let identity = try await service.authenticate(secret)
        #expect(identity.role == .integration && identity.apiKeyID == key.id)
        await #expect(throws: Unauthorized.self) { try await service.authenticate(secret + "x") }
        await #expect(throws: Unauthorized.self) { try await service.authenticate("pwk_") }
        try await service.revokeAPIKey(key.id)
        await #expect(throws: Unauthorized.self) { try await service.authenticate(secret) }
        #expect(try await service.apiKeys().first?.revokedAt != nil)
        await #expect(throws: APIKeyNotFound(id: 99)) { try await service.revokeAPIKey(99) }
        await #expect(throws: ValidationErrors.self) { try await service.createAPIKey(name: " ") }
        await #expect(throws: ValidationErrors.self) { try await service.createAPIKey(name: "x", role: .admin) }
    }
}
