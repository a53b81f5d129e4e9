import Foundation
import PostgresStore
import ReportModel
import StorePorts
import Testing
import TestSupport

/// The PostgreSQL store's schema on the test cluster: migrated once however many replicas
/// open a new database at once, and left alone when a newer release wrote it.
@Suite("The PostgreSQL schema", .enabled(if: TestPostgres.url != nil))
struct PostgresSchemaTests {
    /// The migrations a database records.
    static func applied(_ name: String) throws -> [String] {
        try TestPostgres.psql("SELECT identifier FROM schema_migration ORDER BY identifier", database: name)
    }

    @Test("four replicas opening a new database at once migrate it once, and all of them use it")
    func replicasAtOnce() async throws {
        let fresh = try await TestPostgres.fresh()
        let url = TestPostgres.url(of: fresh.name)
        try TestPostgres.psql("DROP SCHEMA public CASCADE; CREATE SCHEMA public", database: fresh.name)  // as new: no tables at all
        let opened = try await withThrowingTaskGroup(of: PostgresDatabase.self) { group in
            for _ in 0..<4 { group.addTask { try await PostgresDatabase(url: url) } }
            return try await group.reduce(into: [PostgresDatabase]()) { $0.append($1) }
        }
        #expect(opened.count == 4)
        let applied = try Self.applied(fresh.name)
        #expect(applied.count == Set(applied).count && !applied.isEmpty, "each migration recorded once: \(applied)")
    }

    @Test("a database a newer release migrated is refused, naming the migration, and left as it was")
    func newerRelease() async throws {
        let fresh = try await TestPostgres.fresh()
        try TestPostgres.psql("INSERT INTO schema_migration (identifier) VALUES ('v99: from the future')", database: fresh.name)
        let before = try Self.applied(fresh.name)
        await #expect(throws: PostgresSchemaFromNewerRelease.self) { _ = try await PostgresDatabase(url: TestPostgres.url(of: fresh.name)) }
        #expect(try Self.applied(fresh.name) == before)
    }

    @Test("a database that is not there is refused at once, in words")
    func missingDatabase() async throws {
        do {
            _ = try await PostgresDatabase(url: TestPostgres.url(of: "no_such_city"))
            Issue.record("a missing database was opened")
        } catch let error as PostgresUnavailable {
            #expect(error.description.hasSuffix("no_such_city on 127.0.0.1:\(URLComponents(string: TestPostgres.url!)!.port!): it has no such database"), "\(error)")
        }
    }

    @Test("a row the schema refuses is logged by its rule, without the row's values (a password's hash among them)")
    func refusedRowLogged() async throws {
        let fresh = try await TestPostgres.fresh()
        // Past the schema's 254 code points; no AccountDraft would let it through.
        let email = "a@" + String(repeating: "e", count: 300) + ".ua"
        let hash = "$2b$04$" + String(repeating: "S", count: 53)
        do {
            _ = try await PostgresAccounts(fresh.database).createAccount(
                NewAccount(name: "Оксана", email: email, emailKey: email, phone: "380671234567", role: .inspector, passwordHash: hash), now: Date())
            Issue.record("the row was taken")
        } catch {
            let logged = try #require((error as? any RedactedError)?.logDescription, "\(type(of: error)) is logged whole")
            #expect(logged.contains("23514") && logged.contains("account"), "\(logged)")
            #expect(!logged.contains(hash) && !logged.contains("eeeeeeeeee") && !logged.contains("380671234567"), "\(logged)")
            #expect(String(reflecting: error).contains("eeeeeeeeee"), "the full description does hold the row: what the log must not take")
        }
    }

    @Test("a URL that cannot be used is refused by rule, without repeating its password")
    func badURLs() async throws {
        for url in ["mysql://u:secret@h/db", "postgres://h/db", "postgres://u:secret@h", "postgres://u:secret@/db"] {
            do {
                _ = try await PostgresDatabase(url: url)
                Issue.record("\(url) was taken")
            } catch let error as PostgresURLInvalid {
                #expect(!error.description.contains("secret"), "\(error)")
            }
        }
    }
}
