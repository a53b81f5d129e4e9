@testable import Accounts
import Foundation
import GRDB
import ReportModel
import SQLiteStore
import Synchronization
import Testing
import TestSupport

/// What ends or narrows an account's power, in the process that made it and in another
/// one on the same database (here a second service over its own connection to the file,
/// as a second `serve` has; `TwoProcessTests` runs two real servers).
@Suite("Revocation: every process, every role change, every long-lived answer")
struct RevocationTests {
    static let password = AccountServiceTests.password

    /// Two services on one database file, each with its own connections and memory, an
    /// administrator's identity, and an account `user` signed in on the first.
    struct TwoProcesses {
        let fixture: TemporaryAccounts
        let here: AccountService
        let there: AccountService
        let admin = AccountService.Identity(accountID: 0, role: .admin, sessionID: "")

        init() async throws {
            fixture = try TemporaryAccounts()
            here = try await AccountServiceTests.service(fixture)
            let other = try SQLiteReports(path: fixture.database.directory.path("test.sqlite"))
            there = try await AccountService(storage: SQLiteAccounts(other), passwords: Passwords(cost: 4))
        }

        /// An account of `role`, signed in on the first service.
        func user(_ role: Role, _ n: Int = 1) async throws -> (account: Account, tokens: AccountService.TokenPair) {
            let draft = try AccountDraft(name: "U\(n)", email: "u\(n)@example.org", phone: "067 000 00 0\(n)", password: RevocationTests.password, role: role)
            let account = try await here.create(draft)
            return (account, try await here.login(draft.email, password: RevocationTests.password, client: "t"))
        }
    }

    @Test("a logout, a disabled account, a refresh reuse and a password change refuse the token here at once and there once it follows")
    func acrossProcesses() async throws {
        let p = try await TwoProcesses()
        let (account, tokens) = try await p.user(.supervisor)
        _ = try await p.there.authenticate(tokens.accessToken)

        // Logout.
        let identity = try await p.here.authenticate(tokens.accessToken)
        try await p.here.endSession(identity.sessionID, of: identity)
        await #expect(throws: Unauthorized.self) { try await p.here.authenticate(tokens.accessToken) }
        _ = try await p.there.authenticate(tokens.accessToken)  // until it follows the events
        try await p.there.followAccountEvents()
        await #expect(throws: Unauthorized.self) { try await p.there.authenticate(tokens.accessToken) }

        // A detected refresh reuse, made through the second service.
        let second = try await p.here.login("u1@example.org", password: Self.password, client: "t")
        _ = try await p.there.refresh(second.refreshToken)
        let stolen = try await p.here.authenticate(second.accessToken)
        await #expect(throws: Unauthorized.self) { try await p.there.refresh(second.refreshToken) }
        await #expect(throws: Unauthorized.self) { try await p.there.authenticate(second.accessToken) }
        try await p.here.followAccountEvents()
        await #expect(throws: Unauthorized.self) { try await p.here.authenticate(second.accessToken) }
        #expect(stolen.accountID == account.id)

        // A password change ends the other sessions.
        let third = try await p.here.login("u1@example.org", password: Self.password, client: "t")
        let fourth = try await p.here.login("u1@example.org", password: Self.password, client: "t")
        let me = try await p.there.authenticate(fourth.accessToken)
        _ = try await p.here.authenticate(third.accessToken)
        try await p.there.changePassword(of: me, old: Self.password, new: "новий довгий пароль", client: "x")
        try await p.here.followAccountEvents()
        await #expect(throws: Unauthorized.self) { try await p.here.authenticate(third.accessToken) }
        _ = try await p.here.authenticate(fourth.accessToken)

        // Disabling, then enabling: the sessions it ended stay ended.
        _ = try await p.here.administer(account.id, role: nil, disabled: true, by: p.admin)
        await #expect(throws: Unauthorized.self) { try await p.here.authenticate(fourth.accessToken) }
        try await p.there.followAccountEvents()
        await #expect(throws: Unauthorized.self) { try await p.there.authenticate(fourth.accessToken) }
        _ = try await p.here.administer(account.id, role: nil, disabled: false, by: p.admin)
        try await p.there.followAccountEvents()
        await #expect(throws: Unauthorized.self) { try await p.there.authenticate(fourth.accessToken) }
        let fresh = try await p.there.login("u1@example.org", password: "новий довгий пароль", client: "t")
        _ = try await p.here.authenticate(fresh.accessToken)
    }

    @Test("a token issued before a demotion grants nothing above the new role, here and there; one issued before a promotion grants the old role until refreshed")
    func roleChanges() async throws {
        let p = try await TwoProcesses()
        let (account, tokens) = try await p.user(.admin)
        #expect(try await p.there.authenticate(tokens.accessToken).role == .admin)
        _ = try await p.here.administer(account.id, role: .inspector, disabled: nil, by: p.admin)
        #expect(try await p.here.authenticate(tokens.accessToken).role == .inspector)
        try await p.there.followAccountEvents()
        let demoted = try await p.there.authenticate(tokens.accessToken)
        #expect(demoted.role == .inspector)
        // The narrowed identity cannot administer (the climb the attacker made).
        await #expect(throws: Forbidden.self) { try await p.there.administer(4, role: .supervisor, disabled: nil, by: demoted) }
        #expect(try await p.there.account(of: demoted).role == .inspector)

        let asInspector = try await p.here.login("u1@example.org", password: Self.password, client: "t")
        _ = try await p.there.administer(account.id, role: .supervisor, disabled: nil, by: p.admin)
        try await p.here.followAccountEvents()
        #expect(try await p.here.authenticate(tokens.accessToken).role == .supervisor, "the lower of the token's role and the account's now")
        #expect(try await p.here.authenticate(asInspector.accessToken).role == .inspector, "a promotion comes with the next token")
        let refreshed = try await p.here.refresh(asInspector.refreshToken)
        #expect(try await p.there.authenticate(refreshed.accessToken).role == .supervisor)
        // A restarted process knows the role changes of the last token life.
        _ = try await p.there.administer(account.id, role: .inspector, disabled: nil, by: p.admin)
        let restarted = try await AccountServiceTests.service(p.fixture)
        #expect(try await restarted.authenticate(tokens.accessToken).role == .inspector)
        #expect(try await restarted.authenticate(refreshed.accessToken).role == .inspector)
    }

    @Test("a watch ends once, when the session ends, the role drops below the one watched, the token expires or the key is revoked; an API key revoked by the CLI's store reaches every process")
    func watches() async throws {
        let p = try await TwoProcesses()
        let (account, tokens) = try await p.user(.supervisor)
        let ends = Mutex<[String]>([])
        func watch(_ service: AccountService, _ identity: AccountService.Identity, _ name: String) -> CredentialWatch {
            service.watch(identity, while: .supervisor) { ends.withLock { $0.append(name) } }
        }
        let identity = try await p.there.authenticate(tokens.accessToken)
        let loggedOut = watch(p.there, identity, "logout")
        let kept = watch(p.there, try await p.there.authenticate(try await p.here.login("u1@example.org", password: Self.password, client: "t").accessToken), "kept")
        try await p.here.endSession(identity.sessionID, of: identity)
        #expect(!loggedOut.isEnded)
        try await p.there.followAccountEvents()
        try await p.there.followAccountEvents()
        #expect(loggedOut.isEnded && !kept.isEnded && ends.withLock { $0 } == ["logout"])

        _ = try await p.here.administer(account.id, role: .inspector, disabled: nil, by: p.admin)
        try await p.there.followAccountEvents()
        #expect(kept.isEnded && ends.withLock { $0 } == ["logout", "kept"])

        // Already without the role: ended at once.
        let (_, inspector) = try await p.user(.inspector, 2)
        let refused = watch(p.here, try await p.here.authenticate(inspector.accessToken), "inspector")
        #expect(refused.isEnded)

        // Expiry.
        var soon = try await p.here.authenticate(try await p.user(.admin, 3).tokens.accessToken)
        soon.expiresAt = Date().addingTimeInterval(0.3)
        let expiring = watch(p.here, soon, "expired")
        try await eventually("the expired token's watch to end", every: .milliseconds(50)) { expiring.isEnded }

        // An API key, revoked through the store as `posterwatch apikey revoke` does; an
        // unwatched watch is never called.
        let (key, secret) = try await p.here.createAPIKey(name: "integration")
        let keyIdentity = try await p.there.authenticate(secret)
        let keyWatch = p.there.watch(keyIdentity, while: .integration) { ends.withLock { $0.append("key") } }
        let unwatched = watch(p.there, try await p.there.authenticate(try await p.user(.supervisor, 4).tokens.accessToken), "unwatched")
        p.there.unwatch(unwatched)
        try await SQLiteAccounts(p.fixture.store).revokeAPIKey(id: key.id, now: Date())
        await #expect(throws: Unauthorized.self) { try await p.here.authenticate(secret) }
        try await p.there.followAccountEvents()
        #expect(keyWatch.isEnded && !unwatched.isEnded)
        #expect(ends.withLock { $0 } == ["logout", "kept", "inspector", "expired", "key"])
    }

    @Test("events older than a day are pruned as new ones come; a process that missed pruned events reloads from the tables")
    func prunedEvents() async throws {
        let p = try await TwoProcesses()
        let (account, tokens) = try await p.user(.supervisor)
        _ = try await p.there.authenticate(tokens.accessToken)
        _ = try await p.here.setDisabled(account.id, true)
        // Everything up to now is forgotten as if a day had passed, and one more event comes.
        try await p.fixture.store.pool.write { db in try db.execute(sql: "UPDATE account_event SET at = 0") }
        let (key, _) = try await p.here.createAPIKey(name: "a key to revoke")
        try await p.fixture.accounts.revokeAPIKey(id: key.id, now: Date())
        #expect(try await p.fixture.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM account_event") } == 1)
        try await p.there.followAccountEvents()
        await #expect(throws: Unauthorized.self) { try await p.there.authenticate(tokens.accessToken) }

    }
}
