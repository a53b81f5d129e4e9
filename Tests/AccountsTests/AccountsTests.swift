import Foundation
import Geometry
import ReportStore
import Testing
import TestSupport
@testable import Accounts
import ReportModel

@Suite("Accounts")
struct AccountsTests {
    static let passwords = Passwords(cost: 4)

    @Test("a draft reports every broken rule at once, each with its field")
    func everyRuleAtOnce() {
        let error = #expect(throws: ValidationErrors.self) {
            try AccountDraft(name: "  ", email: "not-an-email", phone: "12", password: "short", role: .integration)
        }
        #expect(error?.issues.map(\.field) == ["name", "email", "phone", "password", "role"])
        let common = #expect(throws: ValidationErrors.self) {
            try AccountDraft(name: "Оксана", email: "o@example.org", phone: "067 123 45 67", password: "QwertyUIOP")
        }
        #expect(common?.issues.map(\.field) == ["password"])
        #expect(common?.issues.first?.message.contains("most common") == true)
        #expect(throws: ValidationErrors.self) {
            try AccountDraft(name: "A", email: "a@b.c", phone: "067 123 45 67", password: String(repeating: "x", count: 129))
        }
    }

    @Test("a valid draft is trimmed and its phone normalized")
    func normalized() throws {
        let draft = try AccountDraft(name: " Оксана Петренко ", email: " Oksana@Example.org ", phone: "(067) 123-45-67", password: "кашта́н у дворі")
        #expect(draft.name == "Оксана Петренко")
        #expect(draft.email == "Oksana@Example.org")
        #expect(draft.phone == "380671234567")
        #expect(draft.role == .inspector)
    }

    @Test("emails: one @, text on both sides, a dotted domain, no spaces", arguments: [
        ("a@b.c", true), ("name.surname+tag@sub.example.org", true), ("ім'я@приклад.укр", true),
        ("a@b", false), ("@b.c", false), ("a@.c", false), ("a@b.", false), ("a b@c.d", false), ("a@@b.c", false), ("a@b.c\u{0}", false),
    ])
    func emails(email: String, valid: Bool) {
        #expect((AccountDraft.emailProblem(email) == nil) == valid)
    }

    @Test("roles include the ones below them; integrations stand apart")
    func roles() {
        #expect(Role.admin.includes(.supervisor) && Role.admin.includes(.inspector) && Role.supervisor.includes(.inspector))
        #expect(!Role.inspector.includes(.supervisor) && !Role.supervisor.includes(.admin))
        #expect(Role.integration.includes(.integration) && !Role.integration.includes(.inspector) && !Role.admin.includes(.integration))
    }

    @Test("passwords verify against their own hash only; an unknown account never verifies")
    func hashing() {
        let hash = Self.passwords.hash("кашта́н у дворі")
        #expect(hash.hasPrefix("$2b$04$"))
        #expect(Self.passwords.verify("кашта́н у дворі", hash: hash))
        #expect(!Self.passwords.verify("каштан у дворі", hash: hash))
        #expect(!Self.passwords.verify("кашта́н у дворі", hash: nil))
        #expect(Passwords().cost == 12)
    }

    @Test("an account is found by its email in any case, never by its phone")
    func login() throws {
        let fixture = try TemporaryAccounts()
        let draft = try AccountDraft(name: "Оксана", email: "Oksana@Example.org", phone: "067 123 45 67", password: "кашта́н у дворі")
        let created = try fixture.accounts.create(draft, passwordHash: Self.passwords.hash(draft.password))
        #expect(created.role == .inspector && !created.disabled && created.lastLoginAt == nil)
        for login in ["oksana@example.org", "OKSANA@EXAMPLE.ORG", " Oksana@example.org "] {
            let found = try #require(try fixture.accounts.account(login: login), "\(login)")
            #expect(found.account == created)
            #expect(Self.passwords.verify("кашта́н у дворі", hash: found.passwordHash))
        }
        #expect(try fixture.accounts.account(login: "someone@example.org") == nil)
        for phone in ["0671234567", "+38 (067) 123-45-67", "067 123 45 67"] { #expect(try fixture.accounts.account(login: phone) == nil) }
    }

    @Test("an email already registered (in any case) is refused and nothing is written; a phone may be on several accounts")
    func unique() throws {
        let fixture = try TemporaryAccounts()
        let first = try AccountDraft(name: "A", email: "a@example.org", phone: "067 123 45 67", password: "кашта́н у дворі")
        _ = try fixture.accounts.create(first, passwordHash: "x")
        let sameEmail = try AccountDraft(name: "B", email: "A@EXAMPLE.org", phone: "067 000 00 00", password: "кашта́н у дворі")
        #expect(throws: EmailTaken.self) { try fixture.accounts.create(sameEmail, passwordHash: "x") }
        #expect(try fixture.accounts.list(limit: 10).count == 1)
        let samePhone = try AccountDraft(name: "C", email: "c@example.org", phone: "+380671234567", password: "кашта́н у дворі")
        _ = try fixture.accounts.create(samePhone, passwordHash: "x")
        #expect(try fixture.accounts.list(limit: 10).map(\.phone) == ["380671234567", "380671234567"])
    }

    @Test("accounts are listed in id order, by role and page; role, name and state change; an unknown id is named")
    func listAndUpdate() throws {
        let fixture = try TemporaryAccounts()
        var ids: [Int64] = []
        for i in 0..<7 {
            let draft = try AccountDraft(
                name: "N\(i)", email: "n\(i)@example.org", phone: "067 123 45 6\(i)", password: "кашта́н у дворі", role: i % 3 == 0 ? .supervisor : .inspector)
            ids.append(try fixture.accounts.create(draft, passwordHash: "x").id)
        }
        #expect(try fixture.accounts.list(limit: 3).map(\.id) == Array(ids.prefix(3)))
        #expect(try fixture.accounts.list(after: ids[2], limit: 3).map(\.id) == Array(ids[3..<6]))
        #expect(try fixture.accounts.list(role: .supervisor, limit: 10).map(\.id) == [ids[0], ids[3], ids[6]])
        let changed = try fixture.accounts.update(id: ids[1], role: .admin, name: "Нове ім'я", disabled: true)
        #expect(changed.role == .admin && changed.name == "Нове ім'я" && changed.disabled)
        #expect(try fixture.accounts.update(id: ids[1], disabled: false).role == .admin)
        #expect(throws: AccountNotFound(id: 999)) { try fixture.accounts.update(id: 999, role: .admin) }
        try fixture.accounts.recordLogin(id: ids[0], at: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(try fixture.accounts.account(id: ids[0])?.lastLoginAt == Date(timeIntervalSince1970: 1_800_000_000))
    }
}

@Suite("Sessions")
struct SessionStoreTests {
    @Test("a session remembers its last 64 replaced refresh tokens; sessions over a month gone are forgotten at the next sign-in")
    func bounded() throws {
        let fixture = try TemporaryAccounts()
        let sessions = SessionStore(fixture.accounts)
        let draft = try AccountDraft(name: "S", email: "s@example.org", phone: "067 111 22 33", password: "кашта́н у дворі")
        let account = try fixture.accounts.create(draft, passwordHash: "x")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var (session, token) = try sessions.start(accountID: account.id, now: start)
        var used = [token]
        for i in 1...70 {
            let (outcome, next) = try sessions.refresh(token, now: start.addingTimeInterval(Double(i)))
            #expect(outcome == .rotated(Session(
                id: session.id, accountID: account.id, createdAt: start, lastUsedAt: start.addingTimeInterval(Double(i)),
                expiresAt: start.addingTimeInterval(Double(i) + SessionStore.lifetime))))
            token = try #require(next)
            used.append(token)
        }
        let remembered = try fixture.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM session_rotated") }
        #expect(remembered == 64)
        #expect(try sessions.refresh(used[0], now: start.addingTimeInterval(100)).outcome == .unknown)
        #expect(try sessions.refresh(used[60], now: start.addingTimeInterval(100)).outcome == .reused(sessionID: session.id))

        // Ended over a month ago: gone at the next sign-in (of anyone), with its tokens.
        let later = start.addingTimeInterval(SessionStore.lifetime + 200)
        (session, token) = try sessions.start(accountID: account.id, now: later)
        let left = try fixture.store.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM session"), try Int.fetchOne(db, sql: "SELECT count(*) FROM session_rotated"))
        }
        #expect(left.0 == 1 && left.1 == 0)
    }
}
