@testable import Accounts
import Foundation
import Geometry
import ReportModel
import SQLiteStore
import Testing
import TestSupport

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
        // bcrypt stops at a NUL: "\0" followed by anything would be the empty password's hash.
        for control in ["\u{0}aaaaaaaaaa", "kashtan\u{0}u dvori", "kashtan u\ndvori", "kashtan\u{7F}dvori"] {
            let refused = #expect(throws: ValidationErrors.self) {
                try AccountDraft(name: "A", email: "a@b.c", phone: "067 123 45 67", password: control)
            }
            #expect(refused?.issues.map(\.field) == ["password"] && refused?.issues.first?.message.contains("control") == true)
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
        // Counted in code points, as the stores' CHECKs count: 206 characters, 406 code points.
        ("a@" + String(repeating: "e\u{301}", count: 200) + ".ua", false), ("a@" + String(repeating: "e", count: 200) + ".ua", true),
        (String(repeating: "e\u{301}", count: 40) + "@b.ua", false),
        // Look-alikes of another account's address: decomposed accents, invisible characters.
        ("jos\u{E9}@example.org", true), ("jose\u{301}@example.org", false), ("olena\u{200B}@example.org", false), ("ole\u{AD}na@example.org", false),
        ("admin\u{202E}gro.elpmaxe@x.org", false),
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
        // A password of no one now, whose hash bcrypt would make of what precedes its NUL.
        let empty = Self.passwords.hash("")
        #expect(Self.passwords.verify("", hash: empty) && !Self.passwords.verify("\u{0}aaaaaaaaaa", hash: empty))
        #expect(Passwords().cost == 12)
    }
}
