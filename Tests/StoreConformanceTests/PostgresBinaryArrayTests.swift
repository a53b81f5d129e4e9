import PostgresNIO
@testable import PostgresStore
import Testing
import TestSupport

/// ``BinaryArrays`` against postgres-nio's own decoding of the same cells, as the server sends them.
@Suite("PostgreSQL: arrays read from their binary form by hand", .enabled(if: TestPostgres.url != nil))
struct PostgresBinaryArrayTests {
    /// The first cell of the answer to `sql`.
    static func cell(_ sql: String, _ database: PostgresStore.PostgresDatabase) async throws -> PostgresCell {
        let rows = try await database.client.query(PostgresQuery(unsafeSQL: sql)).collect()
        return try #require(rows.first?.first { _ in true })
    }

    @Test("numbers and texts read as postgres-nio reads them: extremes, empty arrays, a lower bound other than 1, 10,000 elements")
    func sameAsTheDriver() async throws {
        let fresh = try await TestPostgres.fresh()
        let db = fresh.database
        for sql in [
            "SELECT ARRAY[0, 1, -1, 9223372036854775807, -9223372036854775808]::int8[]", "SELECT '{}'::int8[]",
            "SELECT array_agg(g::int8 * 1000003) FROM generate_series(1, 10000) g",
        ] {
            let c = try await Self.cell(sql, db)
            #expect(try BinaryArrays.int64s(c) == c.decode([Int64].self), "\(sql)")
        }
        // postgres-nio refuses a lower bound other than 1; the elements are the same.
        #expect(try BinaryArrays.int64s(try await Self.cell("SELECT '[5:6]={7,8}'::int8[]", db)) == [7, 8])
        for sql in ["SELECT ARRAY[0, 2147483647, -2147483648, 42]::int4[]", "SELECT '{}'::int4[]"] {
            let c = try await Self.cell(sql, db)
            #expect(try BinaryArrays.int32s(c) == c.decode([Int32].self), "\(sql)")
        }
        for sql in [
            "SELECT '{0,-0,1.5,30.523456789012345,Infinity,-Infinity,1e308,5e-324}'::float8[]", "SELECT '{}'::float8[]",
            "SELECT array_agg(g / 7.0::float8) FROM generate_series(1, 10000) g",
        ] {
            let c = try await Self.cell(sql, db)
            #expect(try BinaryArrays.doubles(c).map(\.bitPattern) == c.decode([Double].self).map(\.bitPattern), "\(sql)")
        }
        let nan = try BinaryArrays.doubles(try await Self.cell("SELECT '{NaN}'::float8[]", db))
        #expect(nan.count == 1 && nan[0].isNaN)
        for sql in ["SELECT ARRAY['380671234567', '', 'Київ ✓', 'a;b', repeat('9', 5000)]::text[]", "SELECT '{}'::text[]"] {
            let c = try await Self.cell(sql, db)
            #expect(try BinaryArrays.texts(c) == c.decode([String].self), "\(sql)")
        }
    }

    @Test("refused, naming the column: a NULL array or element, two dimensions, another type")
    func refused() async throws {
        let fresh = try await TestPostgres.fresh()
        let db = fresh.database
        for (sql, found) in [
            ("SELECT ARRAY[1, NULL]::int8[] AS a", "a NULL element"), ("SELECT NULL::int8[] AS a", "NULL"),
            ("SELECT ARRAY[[1, 2], [3, 4]]::int8[] AS a", "2 dimensions"), ("SELECT ARRAY[1]::int4[] AS a", "not a binary"),
            ("SELECT 1::int8 AS a", "not a binary"),
        ] {
            let cell = try await Self.cell(sql, db)
            let error = #expect(throws: BinaryArrayUnexpected.self, "\(sql)") { try BinaryArrays.int64s(cell) }
            #expect(error?.description.hasPrefix("column a: ") == true && error?.description.contains(found) == true, "\(sql): \(String(describing: error))")
        }
    }
}
