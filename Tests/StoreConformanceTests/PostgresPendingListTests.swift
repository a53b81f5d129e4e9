import Foundation
import Generator
import Geometry
import PostgresStore
import ReportModel
import StorePorts
import Testing
import TestSupport

/// The trigram index's pending list, merged by a replica that writes rather than by the
/// filing that fills it (``PendingListFlusher``), read with `pgstattuple`.
@Suite("PostgreSQL: the trigrams' pending list merged aside", .enabled(if: TestPostgres.url != nil))
struct PostgresPendingListTests {
    static func pendingPages(_ database: String) throws -> Int {
        Int(try TestPostgres.psql("SELECT pending_pages FROM pgstatginindex('report_search')", database: database)[0])!
    }

    /// Files `count` reports in one transaction, each with a number of its own.
    static func file(_ count: Int, into storage: PostgresReports, seed: UInt64) throws -> [Report] {
        var rng = SplitMix64(state: seed)
        let drafts = try (0..<count).map { _ in
            try storage.reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), phones: [Drafts.randomPhone(using: &rng)], using: &rng))
        }
        return try ReportStorageConformance.one(storage) { t in try drafts.map { try t.insert($0, filer: nil, author: .system, now: ReportStorageConformance.t0) } }
    }

    /// Waits until `done`, looking every 50 ms for at most 30 s.
    static func eventually(_ done: () throws -> Bool) async throws -> Bool {
        for _ in 0..<600 {
            if try done() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try done()
    }

    @Test("filings wait in the pending list until a replica that wrote merges it; then every number is found by its fragments")
    func mergedByTheReplica() async throws {
        let fresh = try await TestPostgres.fresh()
        try TestPostgres.psql("CREATE EXTENSION IF NOT EXISTS pgstattuple", database: fresh.name)
        // An autovacuum or analyze would merge the list too.
        try TestPostgres.psql("ALTER TABLE report SET (autovacuum_enabled = false)", database: fresh.name)
        #expect(try TestPostgres.psql("SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 'report_search'", database: fresh.name) == ["gin_pending_list_limit=8192"])

        let waiting = PostgresReports(fresh.database, mergingEvery: .seconds(3_600))
        let filed = try Self.file(200, into: waiting, seed: 71)
        #expect(try Self.pendingPages(fresh.name) > 0, "200 filings are in the pending list, under its limit")

        let merging = PostgresReports(fresh.database, mergingEvery: .milliseconds(100))
        let last = try Self.file(1, into: merging, seed: 72)
        // Its merge is counted once its statement has returned, which may be after the pages are merged.
        #expect(try await Self.eventually { try Self.pendingPages(fresh.name) == 0 && merging.pendingListMerges.count >= 1 }, "merged by the replica that wrote")
        #expect(!merging.pendingListMerges.leftToWriters)
        // Every number found by its fragment, through the store and through the index itself.
        for (i, report) in (filed + last).enumerated() {
            let fragment = String(report.phones[0].suffix(7))
            let found = try await merging.searchWithCount(fragment, limit: 500)
            #expect(found.reports.contains { $0.id == report.id }, "\(fragment) finds report \(report.id)")
            guard i % 10 == 0 else { continue }
            let plan = try TestPostgres.psql(
                "SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT id FROM report WHERE search_text LIKE '%\(fragment)%'", database: fresh.name)
            #expect(plan.contains { $0.contains("report_search") }, "\(plan)")
            let ids = try TestPostgres.psql("SET enable_seqscan = off; SELECT id FROM report WHERE search_text LIKE '%\(fragment)%'", database: fresh.name)
            #expect(ids.contains(String(report.id)), "\(fragment): \(ids)")
        }
    }

    @Test("a role that does not own the index migrates to v13 without setting the index's limit, leaves the merging to the writers, and files all the same")
    func leftToTheWriters() async throws {
        let fresh = try await TestPostgres.fresh()
        let role = "posterwatch_lesser"
        try TestPostgres.psql("DO $$ BEGIN CREATE ROLE \(role) LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        try TestPostgres.psql(
            "GRANT USAGE, CREATE ON SCHEMA public TO \(role); GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role); GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role)",
            database: fresh.name)
        // As a database before v13, which this role is the first to open.
        try TestPostgres.psql(
            "DELETE FROM schema_migration WHERE identifier LIKE 'v13:%'; ALTER INDEX report_search RESET (gin_pending_list_limit)", database: fresh.name)
        let url = TestPostgres.url(of: fresh.name).replacingOccurrences(of: "//posterwatch@", with: "//\(role)@")
        let lesser = PostgresReports(try await PostgresDatabase(url: url), mergingEvery: .milliseconds(100))
        #expect(try TestPostgres.psql("SELECT count(*) FROM schema_migration WHERE identifier LIKE 'v13:%'", database: fresh.name) == ["1"])
        #expect(try TestPostgres.psql("SELECT reloptions IS NULL FROM pg_class WHERE relname = 'report_search'", database: fresh.name) == ["t"])
        let filed = try Self.file(20, into: lesser, seed: 73)
        #expect(try await Self.eventually { lesser.pendingListMerges.leftToWriters })
        #expect(lesser.pendingListMerges.count == 0)
        let more = try Self.file(1, into: lesser, seed: 74)
        #expect(try await lesser.count(in: .world) == filed.count + more.count)
    }
}
