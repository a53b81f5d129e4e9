import Accounts
import Foundation
import Generator
import Geometry
import GRDB
import ReportModel
@testable import ReportService
@testable import SQLiteStore
import Testing
import TestSupport

/// Databases of earlier releases open with this one, migrated in place in one
/// transaction; one of a newer release is refused untouched.
@Suite("Migrations")
struct MigrationTests {
    static let supervisor = Caller(accountID: 1, role: .supervisor)
    static let inspector = Caller(accountID: 2, role: .inspector)
    /// The numbers the v7 fixture verifies and blocks.
    static let blocked = "380671110001"

    /// A copy of a fixture in a temporary folder, to open and change.
    static func copy(_ name: String, into folder: TemporaryDirectory) throws -> String {
        let path = folder.path(name)
        try FileManager.default.copyItem(at: SchemaFixtures.url(name), to: URL(fileURLWithPath: path))
        return path
    }

    /// The schema's statements, as SQLite keeps them.
    static func schema(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    }

    static func foreignKeyProblems(_ reader: some DatabaseReader) throws -> [Row] {
        try reader.read { try Row.fetchAll($0, sql: "PRAGMA foreign_key_check") }
    }

    /// What a database holds, in counts.
    struct Contents: Equatable {
        var ids: [Int64]
        var history, changes, accounts: Int
    }

    static func contents(_ reader: some DatabaseReader) throws -> Contents {
        try reader.read { db in
            Contents(
                ids: try Int64.fetchAll(db, sql: "SELECT id FROM report ORDER BY id"), history: try Int.fetchOne(db, sql: "SELECT count(*) FROM report_history")!,
                changes: try Int.fetchOne(db, sql: "SELECT count(*) FROM report_change")!, accounts: try Int.fetchOne(db, sql: "SELECT count(*) FROM account")!)
        }
    }

    static func layout(_ reader: some DatabaseReader) throws -> (schema: [String], applied: [String], problems: [String]) {
        try reader.read { db in (try schema(db), try migrations(db), try String.fetchAll(db, sql: "PRAGMA integrity_check")) }
    }

    static func migrations(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
    }

    @Test("the fixtures of earlier releases and of this one open, migrate in place to exactly a new database's schema, keep their data and take writes", arguments: ["schema-v6.sqlite", "schema-v7.sqlite", "schema-v8.sqlite"])
    func opens(_ fixture: String) async throws {
        let folder = try TemporaryDirectory()
        let path = try Self.copy(fixture, into: folder)
        let before = try Self.contents(DatabaseQueue(path: path))
        #expect(before.ids.count >= 100)

        let store = try SQLiteReports(path: path)
        let fresh = try TemporaryStore()
        let migrated = try Self.layout(store.pool)
        #expect(migrated.applied == Schema.migrator(seed: store.reference).list.map(\.identifier))
        #expect(migrated.schema == (try Self.layout(fresh.store.pool).schema), "a migrated database has a new one's schema")
        #expect(migrated.problems == ["ok"])
        #expect(try Self.contents(store.pool) == before)

        // The index built from it, and every write path on it.
        let service = try await ReportService(storage: store)
        #expect(service.reportCount == (try store.count()))
        var rng = SplitMix64(state: 3)
        let filed = try await service.file(Drafts.make(Coordinate(longitude: 30.52, latitude: 50.45), phones: ["380671110002"], using: &rng), by: Self.inspector)
        _ = try await service.transition(filed.report.id, to: "verifying", note: nil, duplicateOf: nil, by: Self.supervisor)
        _ = try await service.transition(filed.report.id, to: "confirmed", note: nil, duplicateOf: nil, by: Self.supervisor)
        _ = try await service.verify("380671110002", outcome: .violator, note: "перевірено", by: Self.supervisor)
        let block = try await service.block("380671110002", note: nil, by: Self.supervisor)
        #expect(block.moved.map(\.id).contains(filed.report.id))
        #expect(try await service.report(id: filed.report.id)?.status == "phone_blocked")
        if fixture != "schema-v6.sqlite" {
            #expect(try await service.phoneRecord(Self.blocked, for: nil)?.status == .blocked, "the fixture's own block survived")
        }
        if fixture == "schema-v8.sqlite" {
            let events = try await SQLiteAccounts(store).accountEvents(after: 0, limit: 100).map(\.event)
            #expect(events.contains { if case .sessionEnded = $0 { true } else { false } }, "the fixture's account events survived")
        }
        #expect(try Self.foreignKeyProblems(store.pool).isEmpty)
    }

    @Test("a migration that fails leaves the database as it was, the migrations pending before it included")
    func failedMigration() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.copy("schema-v6.sqlite", into: folder)
        let pool = try DatabasePool(path: path)
        let (schemaBefore, appliedBefore) = try pool.read { (try Self.schema($0), try Self.migrations($0)) }
        var migrations = Schema.migrator(seed: try ReferenceData.bundled())
        migrations.registerMigration("test: a table") { db in try db.execute(sql: "CREATE TABLE test_table (x INTEGER)") }
        migrations.registerMigration("test: a failure") { db in try db.execute(sql: "INSERT INTO no_such_table VALUES (1)") }
        #expect(throws: DatabaseError.self) { try migrations.migrate(pool) }
        let (schemaAfter, appliedAfter) = try pool.read { (try Self.schema($0), try Self.migrations($0)) }
        #expect(appliedAfter == appliedBefore && !appliedAfter.contains { $0.hasPrefix("v7") }, "v7 was pending too, and rolled back with the rest")
        #expect(schemaAfter == schemaBefore)
        #expect(try pool.read { try $0.tableExists("phone") || $0.tableExists("test_table") } == false)
    }

    @Test("a database of a newer release is refused with a message that says so, and not touched")
    func newerRelease() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.copy("schema-v7.sqlite", into: folder)
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from a later release')") }
        try Self.checkpoint(queue)
        try queue.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            _ = try SQLiteReports(path: path)
        } throws: { error in
            "\(error)".contains("newer release") && "\(error)".contains("v99: from a later release") && "\(error)".contains("untouched")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
    }

    /// Writes the fixtures of this release (run by hand, once, when a release changes the
    /// schema: `POSTERWATCH_WRITE_FIXTURES=1 swift test --filter writeFixtures`).
    @Test("write the fixtures", .enabled(if: ProcessInfo.processInfo.environment["POSTERWATCH_WRITE_FIXTURES"] == "1"))
    func writeFixtures() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("fixture.sqlite")
        let store = try SQLiteReports(path: path)
        // Account 1 a supervisor, 2 an inspector: the callers above.
        let accounts = try await AccountService(storage: SQLiteAccounts(store), passwords: Passwords(cost: 4))
        for (n, role) in [Role.supervisor, .inspector].enumerated() {
            _ = try await accounts.create(
                try AccountDraft(name: "Fixture \(role)", email: "\(role)@example.org", phone: "+38067000000\(n)", password: "пароль для зразка бази", role: role))
        }
        let service = try await ReportService(storage: store)
        try service.insert(
            ReportGenerator(count: 150, seed: 77, distribution: .kyiv, reference: store.reference).map { ReportDraft(filing: $0) },
            now: Date(timeIntervalSince1970: 1_780_000_000))
        var rng = SplitMix64(state: 77)
        var filed: [Int64] = []
        let places = ReportGenerator(count: 20, seed: 78, distribution: .kyiv, reference: store.reference).map(\.coordinate)
        for (i, c) in places.enumerated() {
            let phones = i < 5 ? [Self.blocked] : Drafts.make(c, using: &rng).phones
            filed.append(try await service.file(Drafts.make(c, phones: phones, using: &rng), by: Self.inspector).report.id)
        }
        for id in filed.prefix(8) {
            _ = try await service.transition(id, to: "verifying", note: nil, duplicateOf: nil, by: Self.supervisor)
            _ = try await service.transition(id, to: "confirmed", note: "підтверджено", duplicateOf: nil, by: Self.supervisor)
        }
        _ = try await service.transition(filed[10], to: "rejected", note: "не реклама", duplicateOf: nil, by: Self.supervisor)
        _ = try await service.hide(filed[11], note: "образливе", by: Self.supervisor)
        _ = try await service.edit(filed[12], by: Self.inspector, ifMatch: nil) { report in
            var draft = ReportDraft(report)
            draft.address = "вул. Змінена, 1"
            return draft
        }
        _ = try await service.verify(Self.blocked, outcome: .violator, note: "номер рекламодавця", by: Self.supervisor)
        _ = try await service.block(Self.blocked, note: nil, by: Self.supervisor)
        // v8: account events (a session ended, a role changed).
        let signedIn = try await accounts.login("inspector@example.org", password: "пароль для зразка бази", client: "fixture")
        let identity = try await accounts.authenticate(signedIn.accessToken)
        try await accounts.endSession(identity.sessionID, of: identity)
        try Self.checkpoint(store.pool)
        // This release's; those of earlier releases were written by them and stay as they are.
        try Self.save(path, as: "schema-v8.sqlite", folder: folder) { _ in }
    }

    static func checkpoint(_ writer: some DatabaseWriter) throws {
        try writer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// Copies the database at `path`, changed by `edit`, vacuumed, into the fixtures.
    static func save(_ path: String, as name: String, folder: TemporaryDirectory, _ edit: (Database) throws -> Void) throws {
        let copy = folder.path(name)
        try DatabaseQueue(path: path).backup(to: try DatabaseQueue(path: copy))
        try DatabaseQueue(path: copy).writeWithoutTransaction { db in
            try db.inTransaction { try edit(db); return .commit }
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try? FileManager.default.removeItem(at: SchemaFixtures.url(name))
        try FileManager.default.copyItem(at: URL(fileURLWithPath: copy), to: SchemaFixtures.url(name))
    }
}
