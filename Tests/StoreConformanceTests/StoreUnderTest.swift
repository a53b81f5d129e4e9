import Foundation
import PostgresStore
import SQLiteStore
import StorePorts
import Testing
import TestSupport

/// A store to hand the suite: its name, and a fresh, empty database's stores on each call
/// (with what keeps the database alive while a test runs).
struct StoreUnderTest: Sendable, CustomTestStringConvertible {
    let name: String
    let open: @Sendable () async throws -> (stores: Stores, keep: AnyObject)
    var testDescription: String { name }

    /// Every store: SQLite, and PostgreSQL when the test cluster runs
    /// (`scripts/with-postgres.sh`, which `make test` always starts).
    static let all = [
        StoreUnderTest(name: "SQLite") {
            let directory = try TemporaryDirectory()
            return (try Stores.sqlite(path: directory.path("test.sqlite")), directory)
        }
    ] + (TestPostgres.url == nil ? [] : [
        StoreUnderTest(name: "PostgreSQL") {
            let database = try await TestPostgres.fresh()
            let stores = Stores(
                reports: PostgresReports(database.database), accounts: PostgresAccounts(database.database), webhooks: PostgresWebhooks(database.database))
            return (stores, database)
        }
    ])
}

/// A store of accounts to hand the accounts' part of the suite: SQLite, and PostgreSQL
/// when the test cluster runs (`scripts/with-postgres.sh`, which `make test` always starts).
struct AccountStoreUnderTest: Sendable, CustomTestStringConvertible {
    let name: String
    let open: @Sendable () async throws -> (storage: any AccountStorage, keep: AnyObject)
    var testDescription: String { name }

    static let all = StoreUnderTest.all.map { store in
        AccountStoreUnderTest(name: store.name) {
            let (stores, keep) = try await store.open()
            return (stores.accounts, keep)
        }
    }
}

/// Databases of the test cluster, each a fresh copy of `posterwatch_test` (PostGIS and
/// pg_trgm in it), dropped when the value goes away.
final class TestPostgres: Sendable {
    static let url = ProcessInfo.processInfo.environment["POSTERWATCH_TEST_POSTGRES"]

    let name: String
    let database: PostgresDatabase

    private init(name: String, database: PostgresDatabase) {
        (self.name, self.database) = (name, database)
    }

    /// A new database, migrated.
    static func fresh() async throws -> TestPostgres {
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try psql("CREATE DATABASE \(name) TEMPLATE posterwatch_test")
        return TestPostgres(name: name, database: try await PostgresDatabase(url: Self.url(of: name)))
    }

    deinit { try? Self.psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }

    /// The URL of another database of the test cluster.
    static func url(of database: String) -> String { String(url!.dropLast("posterwatch_test".count)) + database }

    /// Runs statements on a database of the cluster (by default the maintenance one)
    /// through psql; the lines it printed, unaligned.
    @discardableResult
    static func psql(_ sql: String, database: String = "postgres") throws -> [String] {
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

struct TestPostgresFailed: Error { var statement: String }
