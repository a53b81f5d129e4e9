import Foundation
import Testing
import TestSupport

/// The throwaway PostgreSQL that `make test` starts (`scripts/with-postgres.sh`): the
/// PostgreSQL store's conformance runs on it. Under `make test` it must be there; a
/// `swift test` without it leaves these out.
@Suite("The test PostgreSQL")
struct PostgresHarnessTests {
    static let url = TestPostgres.url
    static let required = ProcessInfo.processInfo.environment["POSTERWATCH_REQUIRE_POSTGRES"] == "1"


    @Test("make test runs the suite beside a PostgreSQL of its own: never a skip there")
    func present() {
        if Self.required { #expect(Self.url != nil, "make test starts PostgreSQL (scripts/with-postgres.sh); it did not") }
    }

    @Test("it is PostgreSQL 15 with PostGIS 3 and pg_trgm, and answers a distance and a trigram", .enabled(if: url != nil))
    func extensions() throws {
        // A copy: a session on the template itself would make the copies other tests take
        // at the same moment wait for it, and fail after 5 s.
        let database = try TestPostgresDatabase()
        func psql(_ sql: String) throws -> [String] { try TestPostgres.psql(sql, database: database.name) }
        #expect(try psql("SHOW server_version_num").first?.hasPrefix("15") == true)
        #expect(try psql("SELECT postgis_lib_version()").first?.hasPrefix("3.") == true)
        // Two points in Kyiv some 70 m apart, and a phone fragment's similarity to a number.
        let metres = try psql("SELECT round(ST_Distance('SRID=4326;POINT(30.5234 50.4501)'::geography, 'SRID=4326;POINT(30.5244 50.4501)'::geography))")
        #expect(metres == ["71"])
        #expect(try psql("SELECT '380671234567' LIKE '%71234%' AND similarity('380671234567', '067123') > 0") == ["t"])
    }
}
