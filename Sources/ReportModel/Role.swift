import Geometry

/// What a caller may do. Each role may do what the roles below it may, and more:
/// - `inspector` files reports and follows its own (what a self-registration gets);
/// - `supervisor` works reports and phones;
/// - `admin` manages accounts;
/// - `integration` is a machine client (an operator's blocklist sync, a push gateway):
///   API keys only, never a person's account, and ranked apart from the people's roles.
public enum Role: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case inspector, supervisor, admin, integration

    /// The roles a person's account may have.
    public static let people: [Role] = [.inspector, .supervisor, .admin]

    /// Whether this role may do what `role` may (people's roles only rank among themselves).
    public func includes(_ role: Role) -> Bool {
        switch (self, role) {
        case (.integration, .integration): true
        case (.integration, _), (_, .integration): false
        default: Self.people.firstIndex(of: self)! >= Self.people.firstIndex(of: role)!
        }
    }

    public var description: String { rawValue }

    /// The role of a person's account that `text` names; anything else is an error on `role`.
    public init(person text: String) throws(ValidationError) {
        guard let role = Role(rawValue: text), Role.people.contains(role) else {
            throw ValidationError(field: "role", "must be inspector, supervisor or admin, got \"\(text.prefix(40))\"")
        }
        self = role
    }

    /// The same check for a role already typed.
    public static func checkPerson(_ role: Role) throws(ValidationError) { _ = try Role(person: role.rawValue) }
}
