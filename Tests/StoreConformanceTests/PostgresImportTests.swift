import Foundation
import Generator
import Geometry
import PostgresStore
import ReportModel
import StorePorts
import Testing
import TestSupport

/// An import into an empty PostgreSQL database: its rows loaded beside `report` and swapped
/// in (``ReportTableSwap``), so the database after it must be the one the migrations make,
/// with what a city added to it (grants) kept.
@Suite("PostgreSQL: an import into an empty database", .enabled(if: TestPostgres.url != nil))
struct PostgresImportTests {
    static let reader = "posterwatch_gis_reader", owner = "posterwatch_table_owner"

    /// The schema as `pg_dump` prints it, owners and grants included (without the random
    /// key of its `\restrict` lines).
    static func schema(_ name: String) async throws -> String {
        let dump = try await ToolRun.run("/usr/bin/pg_dump", ["--schema-only", TestPostgres.url(of: name)])
        #expect(dump.status == 0, "\(dump.errors)")
        return dump.text.split(separator: "\n").filter { !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict") }
            .joined(separator: "\n")
    }

    /// A migrated database whose GIS staff were given the public reports (and, as a city
    /// might, the table itself, with the right to pass it on), its tables owned by a role
    /// other than the one importing.
    static func granted() async throws -> TestPostgres {
        let database = try await TestPostgres.fresh()
        for role in [reader, owner] {
            try TestPostgres.psql("DO $$ BEGIN CREATE ROLE \(role); EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        }
        try TestPostgres.psql("GRANT SELECT ON public_report TO \(reader)", database: database.name)
        try TestPostgres.psql("GRANT SELECT ON report TO \(reader) WITH GRANT OPTION", database: database.name)
        try TestPostgres.psql("ALTER TABLE report OWNER TO \(owner)", database: database.name)
        try TestPostgres.psql("ALTER TABLE report_phone OWNER TO \(owner)", database: database.name)
        return database
    }

    static func drafts(_ count: Int, seed: UInt64) -> [ReportDraft] {
        var rng = SplitMix64(state: seed)
        let phones = (0..<7).map { _ in Drafts.randomPhone(using: &rng) }
        return Drafts.positions(count, using: &rng).enumerated().map { i, position in
            Drafts.make(position, id: Int64(i + 1), phones: i % 4 == 0 ? [phones[i % 7], phones[(i + 3) % 7]] : [phones[i % 7]], using: &rng)
        }
    }

    static func importing(_ drafts: [ReportDraft], into storage: PostgresReports) async throws -> ImportSummary {
        var pending = [Drafts.records(drafts)]
        return try await storage.importRecords(options: ImportOptions(), now: ReportStorageConformance.t0, next: { pending.popLast() }, progress: { _ in })
    }

    static func strayTables(_ name: String) throws -> [String] {
        try TestPostgres.psql("SELECT relname FROM pg_class WHERE relname LIKE '%\\_load' OR relname LIKE '%\\_retired' ORDER BY relname", database: name)
    }

    @Test("the schema after the import is a new database's, grants on the table and on the view kept, nothing left beside it; every row, number and trigger as before")
    func swappedIn() async throws {
        let (imported, untouched) = (try await Self.granted(), try await Self.granted())
        let storage = PostgresReports(imported.database)
        let drafts = Self.drafts(300, seed: 61)
        let summary = try await Self.importing(drafts, into: storage)
        #expect(summary.imported == 300 && summary.rebuiltIndexes)

        let (importedSchema, untouchedSchema) = (try await Self.schema(imported.name), try await Self.schema(untouched.name))
        #expect(importedSchema == untouchedSchema)
        #expect(try Self.strayTables(imported.name).isEmpty)
        #expect(try TestPostgres.psql("SELECT has_table_privilege('\(Self.reader)', 'report', 'SELECT'), has_table_privilege('\(Self.reader)', 'public_report', 'SELECT')", database: imported.name) == ["t|t"])
        #expect(try TestPostgres.psql("SELECT count(*) FROM public_report", database: imported.name) == ["300"])
        for phone in Set(drafts.flatMap(\.phones)) {
            let holding = drafts.filter { $0.phones.contains(phone) }.map { $0.id! }.sorted(by: >)
            #expect(try await storage.holders(of: phone, limit: 1_000).map(\.reportID) == holding, "+\(phone)")
        }
        let fragment = String(drafts[0].phones[0].suffix(6).prefix(5))
        let matching = drafts.filter { $0.phones.contains { $0.contains(fragment) } || String($0.id!).contains(fragment) }.count
        #expect(try await storage.searchWithCount(fragment, limit: 10).matched == matching, "the trigram index answers")
        // The numbers' trigger works on the new table: a filing after the import is found by its number.
        var rng = SplitMix64(state: 62)
        let later = try ReportStorageConformance.one(storage) { t in
            try t.insert(
                storage.reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), phones: ["380991234567"], using: &rng)),
                filer: nil, author: Author(accountID: nil, apiKeyID: nil), now: ReportStorageConformance.t0)
        }
        #expect(try await storage.holders(of: "380991234567", limit: 10).map(\.reportID) == [later.id])
    }

    @Test("an import refused whole leaves the empty table and nothing beside it; tables an import that died left are dropped by the next")
    func refusedAndLeftovers() async throws {
        let database = try await Self.granted()
        let storage = PostgresReports(database.database)
        var drafts = Self.drafts(40, seed: 63)
        drafts[39].id = 7
        await #expect(throws: RecordsRejected.self) { _ = try await Self.importing(drafts, into: storage) }
        #expect(try TestPostgres.psql("SELECT count(*) FROM report", database: database.name) == ["0"])
        #expect(try Self.strayTables(database.name).isEmpty)

        try TestPostgres.psql("CREATE TABLE report_load (id bigint); INSERT INTO report_load VALUES (1); CREATE TABLE report_phone_load (x int)", database: database.name)
        let summary = try await Self.importing(Self.drafts(40, seed: 64), into: storage)
        #expect(summary.imported == 40 && summary.rebuiltIndexes)
        #expect(try Self.strayTables(database.name).isEmpty)
        #expect(try TestPostgres.psql("SELECT count(*) FROM report", database: database.name) == ["40"])
    }

    @Test("a materialized view over the reports, or a table whose foreign key refers to them, which a swap would not carry: the rows go into the table in place, both kept")
    func inPlace() async throws {
        let database = try await Self.granted()
        try TestPostgres.psql("CREATE MATERIALIZED VIEW district_count AS SELECT district, count(*) FROM report GROUP BY district", database: database.name)
        let storage = PostgresReports(database.database)
        let summary = try await Self.importing(Self.drafts(50, seed: 65), into: storage)
        #expect(summary.imported == 50 && !summary.rebuiltIndexes)
        try TestPostgres.psql("REFRESH MATERIALIZED VIEW district_count", database: database.name)
        #expect(try TestPostgres.psql("SELECT sum(count) FROM district_count", database: database.name) == ["50"])

        let other = try await Self.granted()
        try TestPostgres.psql("CREATE TABLE inspection (report_id bigint REFERENCES report(id))", database: other.name)
        let again = try await Self.importing(Self.drafts(50, seed: 66), into: PostgresReports(other.database))
        #expect(again.imported == 50 && !again.rebuiltIndexes)
        try TestPostgres.psql("INSERT INTO inspection VALUES (7)", database: other.name)
    }
}
