import Foundation
import Geometry
import ReportModel
import StorePorts

/// What a new account is made of, checked: every broken rule is reported at once.
public struct AccountDraft: Sendable {
    public var name: String
    public var email: String
    public var phone: String
    public var password: String
    public var role: Role

    /// The fields checked and normalized: the name trimmed, the phone normalized, the
    /// password of 10 to 128 characters and not a common one. Throws ``ValidationErrors``.
    public init(name: String, email: String, phone: String, password: String, role: Role = .inspector) throws(ValidationErrors) {
        var issues: [ValidationError] = []
        var trimmedName = name
        do { trimmedName = try Names.checked(name) } catch { issues.append(error) }
        let email = email.trimmingCharacters(in: .whitespacesAndNewlines)
        if let problem = Self.emailProblem(email) { issues.append(ValidationError(field: "email", problem)) }
        var normalizedPhone = phone
        do { normalizedPhone = try Phone.normalize(phone, field: "phone") } catch { issues.append(error) }
        if let problem = Passwords.problem(password) { issues.append(ValidationError(field: "password", problem)) }
        do { try Role.checkPerson(role) } catch { issues.append(error) }
        guard issues.isEmpty else { throw ValidationErrors(issues) }
        (self.name, self.email, self.phone, self.password, self.role) = (trimmedName, email, normalizedPhone, password, role)
    }

    /// What is wrong with an email address, or nil: one `@` with text on both sides, a dot
    /// in the domain, no spaces, control or invisible (format) characters, in Unicode's
    /// composed form (NFC), at most 254 characters (RFC 5321). Keys are compared byte by
    /// byte: without the last two rules `josé` and `jose` with a combining accent, or a
    /// name with a zero-width space in it, would be two accounts that look alike.
    static func emailProblem(_ email: String) -> String? {
        if email.unicodeScalars.contains(where: { $0.properties.generalCategory == .format })
            || !email.unicodeScalars.elementsEqual(email.precomposedStringWithCanonicalMapping.unicodeScalars)
        {
            return "must be an email address such as name@example.org, its letters composed (NFC), without invisible characters"
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        // Counted in code points, as the stores' checks count.
        guard (3...254).contains(email.unicodeScalars.count), parts.count == 2, !parts[0].isEmpty, parts[0].unicodeScalars.count <= 64,
              parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else { return "must be an email address such as name@example.org" }
        return nil
    }

    /// Whether a login could name an account at all: the length an address may have, no
    /// control characters. (Looser than ``emailProblem(_:)``, so that an address taken
    /// under an earlier release's rules still signs in.)
    static func couldBeLogin(_ login: String) -> Bool {
        (3...254).contains(login.unicodeScalars.count) && !login.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// The form an email is compared by: lowercased (emails differ by no case).
    static func key(email: String) -> String { email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }

    /// The account as a store keeps it, with its password hashed.
    func new(passwordHash: String) -> NewAccount {
        NewAccount(name: name, email: email, emailKey: Self.key(email: email), phone: phone, role: role, passwordHash: passwordHash)
    }
}
