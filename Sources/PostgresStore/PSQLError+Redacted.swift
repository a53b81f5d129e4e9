import PostgresNIO
import ReportModel

/// PostgreSQL's code and message, which name the rule and the table but no value: the
/// detail and the query, which `String(reflecting:)` prints, can hold a refused row or a
/// statement's text.
extension PSQLError: RedactedError {
    public var logDescription: String {
        guard let info = serverInfo else { return "PostgreSQL client error: \(code)" }
        return "PostgreSQL error \(info[.sqlState] ?? "?"): \(info[.message] ?? "no message")"
    }
}
