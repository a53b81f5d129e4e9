import Foundation
import PostgresStore
import StorePorts
import Testing
import TestSupport

/// The copy of a saved index PostgreSQL keeps for new replicas (``SharedIndexStorage``):
/// stored in parts, read back byte for byte, replaced only by a later change, and dropped by
/// an import of a new data set.
@Suite("PostgreSQL: the shared saved index", .enabled(if: TestPostgres.url != nil))
struct PostgresSharedIndexTests {
    /// `count` bytes no two parts of which are alike.
    static func bytes(_ count: Int, salt: UInt64) -> Data {
        var state = salt
        return Data((0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        })
    }

    @Test("none at first; a file of several parts read back byte for byte; an earlier or equal change does not replace it, a later one does whole; an import drops it")
    func keptAndReplaced() async throws {
        let database = try await TestPostgres.fresh()
        let reports = PostgresReports(database.database)
        let directory = try TemporaryDirectory()
        func copy() async throws -> (Int64?, Data?) {
            let path = directory.path("copy-\(UUID().uuidString)")
            let change = try await reports.copySharedIndex(to: path)
            return (change, FileManager.default.contents(atPath: path))
        }
        #expect(try await reports.sharedIndexChange() == nil)
        #expect(try await copy() == (nil, nil), "no copy: no file either")

        // Two parts of 8 MiB and a bit.
        let large = Self.bytes(16 << 20 + 12_345, salt: 1), small = Self.bytes(1_000, salt: 2)
        let (a, b) = (directory.path("a"), directory.path("b"))
        try large.write(to: URL(fileURLWithPath: a))
        try small.write(to: URL(fileURLWithPath: b))
        #expect(try await reports.share(file: a, change: 10))
        #expect(try TestPostgres.psql("SELECT count(*) FROM saved_index_part", database: database.name) == ["3"])
        #expect(try await reports.sharedIndexChange() == 10)
        #expect(try await copy() == (10, large))
        #expect(try await reports.share(file: b, change: 9) == false)
        #expect(try await reports.share(file: b, change: 10) == false)
        #expect(try await copy() == (10, large))
        #expect(try await reports.share(file: b, change: 11))
        #expect(try await copy() == (11, small), "no part of the larger copy left behind")

        // Two replicas sharing at once: the later change's copy is kept, whole.
        async let one = reports.share(file: a, change: 20)
        async let two = reports.share(file: b, change: 21)
        _ = try await (one, two)
        #expect(try await copy() == (21, small))

        _ = try await PostgresImportTests.importing(PostgresImportTests.drafts(10, seed: 3), into: reports)
        #expect(try await reports.sharedIndexChange() == nil, "an import drops the copy of the data set before it")
    }
}
