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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        process.arguments = ["-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", url(of: database), "-c", sql]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestPostgresFailed(statement: sql) }
        return String(decoding: printed, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

public struct TestPostgresFailed: Error { public var statement: String }
