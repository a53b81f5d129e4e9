import Geometry

/// Where a record stands in an input file, for error messages: `line 12` or `feature 7`.
public enum RecordLocation: Sendable, Hashable, CustomStringConvertible {
    /// A 1-based line of a line-oriented file (CSV, GeoJSON text sequences).
    case line(Int)
    /// A 1-based position in a FeatureCollection's `features` array.
    case feature(Int)

    public var description: String {
        switch self {
        case .line(let n): "line \(n)"
        case .feature(let n): "feature \(n)"
        }
    }
}

/// One record read from an input file: a draft, or the rule its text broke.
public struct DraftRecord: Sendable, Hashable {
    public var location: RecordLocation
    public var draft: Result<ReportDraft, ValidationError>

    public init(location: RecordLocation, draft: Result<ReportDraft, ValidationError>) {
        self.location = location
        self.draft = draft
    }
}

/// A record that cannot be imported, and why.
public struct RecordIssue: Sendable, Hashable, CustomStringConvertible {
    public var location: RecordLocation
    public var error: ValidationError

    public init(location: RecordLocation, error: ValidationError) {
        self.location = location
        self.error = error
    }

    public var description: String { "\(location): \(error.field): \(error.message)" }
}
