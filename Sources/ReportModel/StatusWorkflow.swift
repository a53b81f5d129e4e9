import Geometry

/// Which status may follow which, and who may make each step: data (the `transitions` of
/// `statuses.json`), not code in handlers.
///
/// `by` names roles (`inspector`, `supervisor`, `admin`; a role also covers the roles
/// above it) and `filer`, the account that filed the report.
public struct StatusTransition: Sendable, Hashable, Codable {
    public var from: [String]
    public var to: String
    public var by: [String]
    /// The step needs a note (why a report is rejected).
    public var noteRequired: Bool
    /// The step needs `duplicate_of`: an existing report that is not itself a duplicate.
    public var duplicateOfRequired: Bool

    enum CodingKeys: String, CodingKey {
        case from, to, by
        case noteRequired = "note_required"
        case duplicateOfRequired = "duplicate_of_required"
    }

    /// The word of `by` that names the report's filer.
    public static let filer = "filer"
    /// The words `by` may hold.
    public static let actors = ["filer", "inspector", "supervisor", "admin"]

    public init(from: [String], to: String, by: [String], noteRequired: Bool = false, duplicateOfRequired: Bool = false) {
        self.from = from
        self.to = to
        self.by = by
        self.noteRequired = noteRequired
        self.duplicateOfRequired = duplicateOfRequired
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            from: try c.decode([String].self, forKey: .from), to: try c.decode(String.self, forKey: .to),
            by: try c.decode([String].self, forKey: .by),
            noteRequired: try c.decodeIfPresent(Bool.self, forKey: .noteRequired) ?? false,
            duplicateOfRequired: try c.decodeIfPresent(Bool.self, forKey: .duplicateOfRequired) ?? false)
    }
}

extension ReferenceData {
    /// The steps that leave `status`, in table order.
    public func transitions(from status: String) -> [StatusTransition] {
        transitions.filter { $0.from.contains(status) }
    }

    /// The step from `status` to `target`, if the table has one.
    public func transition(from status: String, to target: String) -> StatusTransition? {
        transitions.first { $0.from.contains(status) && $0.to == target }
    }

    /// Whether `code` is a status that still needs work.
    public func isOpen(_ code: String) -> Bool {
        statuses.first { $0.code == code }?.open ?? false
    }

    func checkTransitions() throws(ValidationError) {
        let codes = Set(statuses.map(\.code))
        for t in transitions {
            for code in t.from + [t.to] where !codes.contains(code) {
                throw ValidationError(field: "transitions", "refers to unknown status \"\(code)\"")
            }
            guard !t.by.isEmpty, t.by.allSatisfy(StatusTransition.actors.contains) else {
                throw ValidationError(field: "transitions", "\(t.from) → \(t.to): `by` must name some of \(StatusTransition.actors.joined(separator: ", "))")
            }
            guard !t.from.contains(t.to) else { throw ValidationError(field: "transitions", "\(t.to) → \(t.to) is no step") }
        }
        let pairs = transitions.flatMap { t in t.from.map { "\($0) → \(t.to)" } }
        if let twice = Dictionary(grouping: pairs, by: { $0 }).first(where: { $0.value.count > 1 }) {
            throw ValidationError(field: "transitions", "\(twice.key) appears twice")
        }
    }
}
