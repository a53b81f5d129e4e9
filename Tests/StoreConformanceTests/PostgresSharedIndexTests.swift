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

    @Test("none at first; a file of several parts read back byte for byte; an earlier or equal change, or one within the slack, does not replace it, a later one does whole, and any with no slack; an import drops it, and an index saved before it is not shared after it")
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
        #expect(try await reports.share(file: a, change: 10, unlessWithin: 0))
        #expect(try TestPostgres.psql("SELECT count(*) FROM saved_index_part", database: database.name) == ["3"])
        #expect(try await reports.sharedIndexChange() == 10)
        #expect(try await copy() == (10, large))
        #expect(try await reports.share(file: b, change: 9, unlessWithin: 0) == false)
        #expect(try await reports.share(file: b, change: 10, unlessWithin: 0) == false)
        #expect(try await copy() == (10, large))
        #expect(try await reports.share(file: b, change: 11, unlessWithin: 0))
        #expect(try await copy() == (11, small), "no part of the larger copy left behind")
        #expect(try await reports.share(file: a, change: 16, unlessWithin: 5) == false, "5 changes ahead: within the slack")
        #expect(try await reports.share(file: b, change: 17, unlessWithin: 5))
        #expect(try await copy() == (17, small))

        // Two replicas sharing at once: the later change's copy is kept, whole.
        async let one = reports.share(file: a, change: 20, unlessWithin: 0)
        async let two = reports.share(file: b, change: 21, unlessWithin: 0)
        _ = try await (one, two)
        #expect(try await copy() == (21, small))
        #expect(try await reports.share(file: a, change: 5, unlessWithin: nil), "no slack: a copy no replica could read is replaced by any")
        #expect(try await copy() == (5, large))

        let before = try await reports.lastChange()
        var options = ImportOptions()
        options.marksDataSetChanged = true
        var pending = [Drafts.records(PostgresImportTests.drafts(10, seed: 3))]
        _ = try await reports.importRecords(options: options, now: Date(), next: { pending.popLast() }, progress: { _ in })
        let imported = try await reports.lastChange()
        #expect(imported > before)
        #expect(try await reports.sharedIndexChange() == nil, "an import drops the copy of the data set before it")
        #expect(try await reports.share(file: b, change: before, unlessWithin: 0) == false, "saved before the import, shared after it")
        #expect(try await reports.share(file: b, change: before, unlessWithin: nil) == false)
        #expect(try await reports.share(file: b, change: imported, unlessWithin: 0))
    }
}
