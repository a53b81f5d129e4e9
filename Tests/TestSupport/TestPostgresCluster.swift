import Foundation

/// A database of the test PostgreSQL cluster (`scripts/with-postgres.sh`, which `make test`
/// always starts; its URL in `POSTERWATCH_TEST_POSTGRES`), a fresh copy of
/// `posterwatch_test` (PostGIS and pg_trgm in it), dropped when the value goes away.
public final class TestPostgresDatabase: Sendable {
    /// The cluster's template database, or nil when no cluster runs.
    public static let clusterURL = ProcessInfo.processInfo.environment["POSTERWATCH_TEST_POSTGRES"]

    public let name: String

    /// A new, empty database (not migrated).
    public init() throws {
        name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try Self.psql("CREATE DATABASE \(name) TEMPLATE posterwatch_test")
    }

    /// Dropped on a thread of its own, never waited for: a deinit runs on one of Swift's
    /// two cooperative threads here, and DROP DATABASE waits until every backend has taken
    /// its signal, which a backend in COPY FROM STDIN does only when its client sends more.
    /// If that client is a task of this process, blocking the pool deadlocked the run.
    deinit {
        let statement = "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"
        Thread.detachNewThread { _ = try? Self.psql(statement) }
    }

    /// This database's URL.
    public var url: String { Self.url(of: name) }

    /// The URL of a database of the test cluster.
    public static func url(of database: String) -> String { String(clusterURL!.dropLast("posterwatch_test".count)) + database }

    /// Runs statements on a database of the cluster (by default the maintenance one)
    /// through psql; the lines it printed, unaligned.
    @discardableResult
    public static func psql(_ sql: String, database: String = "postgres") throws -> [String] {
        try psql(statements: [sql], database: database)
    }

    /// One psql session running `statements` in order, each its own `-c`.
    static func psql(statements: [String], database: String) throws -> [String] {
        let sql = statements.joined(separator: "; ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", url(of: database)] + statements.flatMap { ["-c", $0] }
        let output = Pipe.unshared()
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestPostgresFailed(statement: sql) }
        return String(decoding: printed, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

extension TestPostgresDatabase {
    /// ``psql(_:database:)`` on a thread of its own, so that a wait inside PostgreSQL (a
    /// lock another session holds) never holds one of Swift's cooperative threads.
    public static func psqlOffPool(_ sql: String, database: String) async throws -> [String] {
        try await session([sql], database: database)
    }

    /// One psql session running `statements` in order, ended when they are (a transaction
    /// a test holds open while the code under test runs), on a thread of its own.
    @discardableResult
    public static func session(_ statements: [String], database: String) async throws -> [String] {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try psql(statements: statements, database: database) }) }
        }
    }
}

public struct TestPostgresFailed: Error { public var statement: String }
