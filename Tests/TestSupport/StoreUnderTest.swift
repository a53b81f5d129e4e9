import Foundation
import PostgresStore
import SQLiteStore
import StorePorts
import Testing

/// A store to hand the suite: its name, and a fresh, empty database's stores on each call
/// (with what keeps the database alive while a test runs).
public struct StoreUnderTest: Sendable, CustomTestStringConvertible {
    public let name: String
    public let open: @Sendable () async throws -> (stores: Stores, keep: AnyObject)
    /// Stores of reports on one fresh database, as many as asked, each with connections of
    /// its own, as replicas (or processes) have.
    public let replicas: @Sendable (Int) async throws -> (reports: [any ReportStorage], keep: AnyObject)
    public var testDescription: String { name }

    /// Every store: SQLite, and PostgreSQL when the test cluster runs
    /// (`scripts/with-postgres.sh`, which `make test` always starts).
    public static let all = [
        StoreUnderTest(name: "SQLite") {
            let directory = try TemporaryDirectory()
            return (try Stores.sqlite(path: directory.path("test.sqlite")), directory)
        } replicas: { count in
            let directory = try TemporaryDirectory()
            return (try (0..<count).map { _ in try SQLiteReports(path: directory.path("test.sqlite")) }, directory)
        }
    ] + (TestPostgres.url == nil ? [] : [
        StoreUnderTest(name: "PostgreSQL") {
            let database = try await TestPostgres.fresh()
            let stores = Stores(
                reports: PostgresReports(database.database), accounts: PostgresAccounts(database.database), webhooks: PostgresWebhooks(database.database))
            return (stores, database)
        } replicas: { count in
            let database = try await TestPostgres.fresh()
            return ((0..<count).map { _ in PostgresReports(database.database) }, database)
        }
    ])
}

/// A store of accounts to hand the accounts' part of the suite: SQLite, and PostgreSQL
/// when the test cluster runs (`scripts/with-postgres.sh`, which `make test` always starts).
public struct AccountStoreUnderTest: Sendable, CustomTestStringConvertible {
    public let name: String
    public let open: @Sendable () async throws -> (storage: any AccountStorage, keep: AnyObject)
    public var testDescription: String { name }

    public static let all = StoreUnderTest.all.map { store in
        AccountStoreUnderTest(name: store.name) {
            let (stores, keep) = try await store.open()
            return (stores.accounts, keep)
        }
    }
}

/// Databases of the test cluster, migrated by the PostgreSQL store.
public final class TestPostgres: Sendable {
    public static let url = TestPostgresDatabase.clusterURL

    public let cluster: TestPostgresDatabase
    public let database: PostgresDatabase

    public var name: String { cluster.name }

    private init(cluster: TestPostgresDatabase, database: PostgresDatabase) {
        (self.cluster, self.database) = (cluster, database)
    }

    /// A new database, migrated.
    public static func fresh() async throws -> TestPostgres {
        let cluster = try TestPostgresDatabase()
        return TestPostgres(cluster: cluster, database: try await PostgresDatabase(url: cluster.url))
    }

    public static func url(of database: String) -> String { TestPostgresDatabase.url(of: database) }

    @discardableResult
    public static func psql(_ sql: String, database: String = "postgres") throws -> [String] { try TestPostgresDatabase.psql(sql, database: database) }
}
