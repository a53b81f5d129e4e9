import Foundation
import Geometry

/// A report that does not exist.
public struct ReportNotFound: Error, Sendable, CustomStringConvertible {
    public var id: Int64
    public init(id: Int64) { self.id = id }
    public var description: String { "report \(id) does not exist" }
}

/// Records that broke a rule; nothing of their batch was written.
public struct RecordsRejected: Error, Sendable, CustomStringConvertible {
    /// The first ``ImportOptions/maxReportedIssues`` issues, in input order.
    public var issues: [RecordIssue]
    /// How many records were invalid in all.
    public var issueCount: Int

    public init(issues: [RecordIssue], issueCount: Int) {
        self.issues = issues
        self.issueCount = issueCount
    }

    public var description: String {
        let first = issues.first.map { " First: \($0)." } ?? ""
        return "\(issueCount) invalid record(s); nothing was written.\(first)"
    }
}

/// An error whose full description may hold values no log may keep (PostgreSQL's detail
/// of a refused row lists the row, a password's hash with it): a log takes
/// ``logDescription`` instead.
public protocol RedactedError: Error {
    /// What the error is, without the values it was about.
    var logDescription: String { get }
}

/// An error in words for a log line or a note: a ``RedactedError``'s own, else its description.
public func loggable(_ error: any Error) -> String {
    (error as? any RedactedError)?.logDescription ?? "\(error)"
}

/// The database could not take a write in time: another process holds its lock (an
/// import into the served file). The write was not made; trying again later may.
public struct StoreBusy: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "the database is busy with another process's write; nothing was written, try again" }
}
