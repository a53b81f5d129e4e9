import Foundation
import Generator
import Geometry
import GRDB
import ReportModel
@testable import SQLiteStore
import StorePorts
import Testing
import TestSupport

/// `SQLiteReports.create`: a new database built aside (its phone index on a second core,
/// its pages written once) and moved into place.
@Suite("A new database from an import")
struct CreateTests {
    static func drafts(_ count: Int, seed: UInt64) -> [ReportDraft] {
        var rng = SplitMix64(state: seed)
        // Shared phones, so that fragments match several reports; some ids given, some not.
        let phones = (0..<40).map { _ in Drafts.randomPhone(using: &rng) }
        return Drafts.positions(count, using: &rng).enumerated().map { i, position in
            let some = (0..<Int.random(in: 1...3, using: &rng)).map { _ in phones.randomElement(using: &rng)! }
            return Drafts.make(position, id: i % 3 == 0 ? Int64(10 * i + 7) : nil, phones: some, using: &rng)
        }
    }

    @Test(
        "holds what an import row by row through the triggers holds, with every index whole, and takes later writes (sorted in memory, and in runs on disc)",
        arguments: [(1_500, ImportOptions().sortMemory), (20_000, ImportOptions().sortMemory), (20_000, 7 << 16)])
    func sameAsImport(count: Int, sortMemory: Int) throws {
        let folder = try TemporaryDirectory()
        let drafts = Self.drafts(count, seed: 71)
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        let records = Drafts.records(drafts)
        var batches = stride(from: 0, to: count, by: 700).map { Array(records[$0..<min($0 + 700, count)]) }.reversed().map { $0 }
        var options = ImportOptions()
        options.sortMemory = sortMemory
        let summary = try SQLiteReports.create(path: folder.path("new.sqlite"), options: options, now: now, next: { batches.popLast() })
        #expect(summary.imported == count && summary.rebuiltIndexes)
        #expect(folder.files() == ["new.sqlite"])  // no partial file, scratch database, log or journal left

        let reference = try TemporaryStore()
        var one = [records]
        try reference.store.importRecords(options: ImportOptions(bulkBelow: 0), now: now, next: { one.popLast() })

        let created = try SQLiteReports(path: folder.path("new.sqlite"))
        #expect(try created.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try created.checkIndexes() == "ok")
        #expect(try created.all() == reference.store.all())
        var rng = SplitMix64(state: 72)
        let fragments = ["7", "38", "380"] + (0..<60).map { i in
            let phone = Drafts.randomPhone(using: &rng)
            let length = [3, 4, 5, 7, 12][i % 5]
            return String(phone.suffix(length))
        } + (try reference.store.all().prefix(20).map { String($0.phones[0].dropFirst(5).prefix(4)) })
        for fragment in fragments {
            #expect(try created.search(fragment, limit: 50) == reference.store.search(fragment, limit: 50), "\(fragment)")
            #expect(try created.searchCount(fragment) == reference.store.searchCount(fragment), "\(fragment)")
        }

        // The copied phone index takes the triggers' writes like one built in place.
        let inserted = try created.insert(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), phones: ["380999000111"], using: &rng))
        #expect(try created.search("999000", limit: 10).map(\.id) == [inserted.id])
        let gone = try created.all()[5]
        try created.delete(id: gone.id)
        #expect(try !created.search(gone.phones[0], limit: 1_000).map(\.id).contains(gone.id))
        #expect(try created.checkIndexes() == "ok")
    }

    @Test("invalid records create nothing; with skipInvalid the valid ones are kept")
    func invalid() throws {
        let folder = try TemporaryDirectory()
        var drafts = Self.drafts(50, seed: 73)
        drafts[4].district = "atlantis"
        var batches = [Drafts.records(drafts)]
        #expect(throws: RecordsRejected.self) {
            try SQLiteReports.create(path: folder.path("new.sqlite"), next: { batches.popLast() })
        }
        #expect(folder.files().isEmpty)

        batches = [Drafts.records(drafts)]
        let summary = try SQLiteReports.create(path: folder.path("new.sqlite"), options: ImportOptions(skipInvalid: true), next: { batches.popLast() })
        #expect(summary.imported == 49 && summary.skipped == 1)
        #expect(try SQLiteReports(path: folder.path("new.sqlite")).checkIndexes() == "ok")
    }

    @Test("an input that fails midway creates nothing, leaves no scratch file, and its error is the input's")
    func inputFailsMidway() throws {
        struct Broken: Error {}
        let folder = try TemporaryDirectory()
        var calls = 0
        let records = Drafts.records(Self.drafts(300, seed: 77))
        #expect(throws: Broken.self) {
            try SQLiteReports.create(path: folder.path("new.sqlite"), next: {
                calls += 1
                if calls == 2 { throw Broken() }
                return calls == 1 ? Array(records) : nil
            })
        }
        #expect(folder.files().isEmpty)
        // The same into an existing store: nothing is kept, and it takes the next import.
        let store = try TemporaryStore()
        calls = 0
        #expect(throws: Broken.self) {
            try store.store.importRecords(next: {
                calls += 1
                if calls == 2 { throw Broken() }
                return calls == 1 ? Array(records) : nil
            })
        }
        #expect(try store.store.count() == 0)
        #expect(!store.directory.files().contains { $0.contains(".import-") })
        var once = [records]
        #expect(try store.store.importRecords(next: { once.popLast() }).imported == 300)
        #expect(try store.store.checkIndexes() == "ok")
    }

    @Test("an existing database is refused and left alone; a partial file left by a killed import is replaced")
    func existing() throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("db.sqlite")
        var batches = [Drafts.records(Self.drafts(10, seed: 74))]
        try SQLiteReports.create(path: path, next: { batches.popLast() })
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        batches = [Drafts.records(Self.drafts(10, seed: 75))]
        #expect(throws: StoreUnavailable.self) {
            try SQLiteReports.create(path: path, next: { batches.popLast() })
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let other = folder.path("other.sqlite")
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: other + ".partial"))
        batches = [Drafts.records(Self.drafts(10, seed: 76))]
        #expect(try SQLiteReports.create(path: other, next: { batches.popLast() }).imported == 10)
        #expect(try SQLiteReports(path: other).count() == 10)
        #expect(!folder.files().contains("other.sqlite.partial"))
    }
}

extension TemporaryDirectory {
    /// What the directory holds, by name, sorted: what a creation left behind.
    fileprivate func files() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }
}
