import Foundation
import Logging
import PostgresNIO
import ReportModel

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
    /// Where the pool connects, for the connections a store keeps of its own (the
    /// writer's, the listener's).
    let target: PostgresConnection.Configuration
    /// The vocabularies the database was seeded with.
    public let reference: ReferenceData

    /// Opens the database a `postgres://user[:password]@host[:port]/database` URL names and
    /// migrates it (a new database is seeded with `reference`, by default the bundled
    /// reference data). The password may also come from `password` (from the environment
    /// or a file, not the command line). Errors never repeat the URL: it may hold a password.
    public init(url: String, password: String? = nil, maximumConnections: Int = 20, reference seed: ReferenceData? = nil) async throws {
        let place = try PostgresTarget(url, password: password)
        var configuration = PostgresClient.Configuration(
            host: place.host, port: place.port, username: place.user, password: place.password, database: place.database, tls: .disable)
        configuration.options.maximumConnections = maximumConnections
        target = PostgresConnection.Configuration(
            host: place.host, port: place.port, username: place.user, password: place.password, database: place.database, tls: .disable)
        var logger = Logger(label: "posterwatch.postgres")
        logger.logLevel = .warning
        self.logger = logger
        // One connection first: a wrong address, password or name fails here at once, in
        // words, where the pool would go on retrying.
        do {
            let probe = try await PostgresConnection.connect(configuration: target, id: 0, logger: logger)
            try? await probe.close()
        } catch {
            throw PostgresUnavailable(place: place, error: error)
        }
        client = PostgresClient(configuration: configuration)
        let client = self.client
        running = Task { await client.run() }
        try await PostgresSchema.migrate(client, logger: logger, seed: try seed ?? ReferenceData.bundled())
        reference = try await PostgresSchema.reference(client, logger: logger)
    }

    deinit { running.cancel() }

    /// A connection of its own, outside the pool (closed by its holder).
    func connect() async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration: target, id: 0, logger: logger)
    }

    /// Runs `body` in one transaction on one connection; it commits when `body` returns and
    /// rolls back when it throws.
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await Self.transaction(client, logger: logger, body)
    }

    static func transaction<T: Sendable>(_ client: PostgresClient, logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch let error as PostgresTransactionError {
            // The refusal the body threw (AccountNotFound, …), once it is rolled back.
            if let refusal = error.closureError, error.rollbackError == nil { throw refusal }
            throw error
        }
    }
}

/// Where a `postgres://` URL points: plain TCP, as on a private network or loopback.
struct PostgresTarget {
    var host: String, port: Int, user: String, password: String?, database: String

    init(_ url: String, password: String?) throws {
        guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme?.lowercased() ?? ""),
              let host = parts.host, !host.isEmpty, let user = parts.user, !user.isEmpty
        else { throw PostgresURLInvalid(reason: "it must be postgres://user[:password]@host[:port]/database") }
        let database = String(parts.path.drop { $0 == "/" })
        guard !database.isEmpty else { throw PostgresURLInvalid(reason: "it names no database (postgres://user@host/database)") }
        self.host = host
        self.port = parts.port ?? 5432
        self.user = user.removingPercentEncoding ?? user
        self.password = password ?? parts.password?.removingPercentEncoding
        self.database = database
    }
}

/// A PostgreSQL database that cannot be reached or entered, and why: its host, port and
/// name, never its password.
public struct PostgresUnavailable: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(place: PostgresTarget, error: any Error) {
        let reason = switch (error as? PSQLError)?.serverInfo?[.sqlState] {
        case "28P01", "28000"?: "it refused the user or the password"
        case "3D000"?: "it has no such database"
        case let state?: "it answered with SQLSTATE \(state)"
        case nil: "nothing answered there"
        }
        description = "cannot connect to the PostgreSQL database \(place.database) on \(place.host):\(place.port): \(reason)"
    }
}

/// A `--database` URL for PostgreSQL that cannot be used, and why (never the URL itself).
public struct PostgresURLInvalid: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { "the PostgreSQL URL cannot be used: \(reason)" }
}
