/// A rule that an input broke, named so that a person can fix the input.
///
/// Every layer reports bad input with this one type, so the CLI can print it as one
/// sentence and the HTTP service can answer `{"error": {"code", "message", "field"}}`
/// without translating between error vocabularies.
///
/// ```swift
/// throw ValidationError(field: "bbox", "south (51.0) must not be greater than north (50.0)")
/// ```
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input field (parameter, column or property) at fault, e.g. `bbox` or `phones`.
    public var field: String
    /// What is wrong, as a sentence fragment that names the rule.
    public var message: String

    public init(field: String, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String { "\(field): \(message)" }
}

/// Every rule an input broke, all at once (a form with three bad fields hears of all three).
public struct ValidationErrors: Error, Sendable, Hashable, CustomStringConvertible {
    public var issues: [ValidationError]

    public init(_ issues: [ValidationError]) { self.issues = issues }

    public var description: String { issues.map(\.description).joined(separator: "; ") }
}
