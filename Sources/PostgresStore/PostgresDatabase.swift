import Foundation
import Logging
import PostgresNIO

/// A PostgreSQL database as the store uses it: a pool of connections (postgres-nio's
/// `PostgresClient`, run for as long as this value lives) and the schema, brought to this
/// release's by numbered migrations when it opens.
///
/// Several processes may open one database at once (replicas): the migrations run under
/// an advisory lock, so one of them migrates and the others find the work done.
public final class PostgresDatabase: Sendable {
    let client: PostgresClient
    private let running: Task<Void, Never>
    let logger: Logger

    /// Opens the database a `postgres://user[:password]@host[:port]/database` URL names and
    /// migrates it. The password may also come from `password` (from the environment or a
    /// file, not the command line). Errors never repeat the URL: it may hold a password.
    public init(url: String, password: String? = nil, maximumConnections: Int = 20) async throws {
        var configuration = try Self.configuration(url, password: password)
        configuration.options.maximumConnections = maximumConnections
        client = PostgresClient(configuration: configuration)
        let client = self.client
        running = Task { await client.run() }
        var logger = Logger(label: "posterwatch.postgres")
        logger.logLevel = .warning
        self.logger = logger
        try await PostgresSchema.migrate(self)
    }

    deinit { running.cancel() }

    /// The client's configuration from a URL: plain TCP, as on a private network or loopback.
    static func configuration(_ url: String, password: String?) throws -> PostgresClient.Configuration {
        guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme?.lowercased() ?? ""),
              let host = parts.host, !host.isEmpty, let user = parts.user, !user.isEmpty
        else { throw PostgresURLInvalid(reason: "it must be postgres://user[:password]@host[:port]/database") }
        let database = String(parts.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw PostgresURLInvalid(reason: "it names no database (postgres://user@host/database)") }
        return PostgresClient.Configuration(
            host: host, port: parts.port ?? 5432, username: user.removingPercentEncoding ?? user,
            password: password ?? parts.password?.removingPercentEncoding, database: database, tls: .disable)
    }

    /// Runs `body` in one transaction on one connection; it commits when `body` returns and
    /// rolls back when it throws.
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            // The refusal the body threw (AccountNotFound, …), once it is rolled back.
            if let refusal = error.closureError, error.rollbackError == nil { throw refusal }
            throw error
        }
    }
}

/// A `--database` URL for PostgreSQL that cannot be used, and why (never the URL itself).
public struct PostgresURLInvalid: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { "the PostgreSQL URL cannot be used: \(reason)" }
}
