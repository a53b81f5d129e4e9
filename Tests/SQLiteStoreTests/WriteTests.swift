import Foundation
import GRDB
import Generator
import Geometry
import ReportModel
@testable import SQLiteStore
import StorePorts
import Synchronization
import Testing
import TestSupport

@Suite("Writes, indexes and imports")
struct WriteTests {
    @Test("a new database holds the bundled reference data")
    func reference() throws {
        let fixture = try TemporaryStore()
        #expect(fixture.store.reference == Drafts.reference)
        #expect(try fixture.store.count() == 0)
        #expect(try fixture.store.checkIndexes() == "ok")
    }

    @Test("a transaction that cannot start (another process holds the lock past the busy timeout) fails each write, and the next one writes")
    func lockedOut() throws {
        let fixture = try TemporaryStore()
        let store = try SQLiteReports(path: fixture.directory.path("test.sqlite"), tuning: QueryTuning(busySeconds: 0.2))
        let holder = try DatabaseQueue(path: fixture.directory.path("test.sqlite"))
        var rng = SplitMix64(state: 5)
        let drafts = try (0..<3).map { _ in try store.reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng)) }
        let writes: [(any ReportTransaction) throws -> Report] = drafts.map { draft in { t in try t.insert(draft, filer: nil, author: .system, now: Date()) } }
        // The other process's write, held while this one tries (it used to trap on the writes never run).
        let refused = try holder.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            return store.commit(writes)
        }
        #expect(refused.count == 3 && refused.allSatisfy { if case .failure(let error) = $0 { error is StoreBusy } else { false } })
        #expect(try store.commit(writes).map { try $0.get().id } == [1, 2, 3])
    }

    @Test("an account or webhook write that cannot start (another process holds the lock past the busy timeout) throws StoreBusy, not SQLite's error, and writes nothing; the next one writes")
    func accountsLockedOut() async throws {
        let fixture = try TemporaryStore()
        let store = try SQLiteReports(path: fixture.directory.path("test.sqlite"), tuning: QueryTuning(busySeconds: 0.2))
        let accounts = SQLiteAccounts(store), webhooks = SQLiteWebhooks(store)
        let account = NewAccount(name: "Оксана", email: "o@example.org", emailKey: "o@example.org", phone: "380671234567", role: .inspector, passwordHash: "hash")
        let hook = try WebhookDraft(url: "http://127.0.0.1:9/hook", events: ["report.created"], description: nil)
        // The other process's write, held on a thread of its own while these try.
        let (holding, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let holder = try DatabaseQueue(path: fixture.directory.path("test.sqlite"))
        Thread.detachNewThread {
            try? holder.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN IMMEDIATE")
                holding.signal()
                release.wait()
                try db.execute(sql: "ROLLBACK")
            }
        }
        holding.wait()
        await #expect(throws: StoreBusy.self) { _ = try await accounts.createAccount(account, now: Date()) }
        await #expect(throws: StoreBusy.self) { _ = try await webhooks.registerWebhook(hook, key: Data(repeating: 7, count: 32), limit: 10, now: Date()) }
        release.signal()
        let (noAccounts, noHooks) = (try await accounts.accounts(role: nil, after: 0, limit: 10), try await webhooks.webhooks())
        #expect(noAccounts.isEmpty && noHooks.isEmpty)
        _ = try await accounts.createAccount(account, now: Date())
        _ = try await webhooks.registerWebhook(hook, key: Data(repeating: 7, count: 32), limit: 10, now: Date())
        let (written, hooks) = (try await accounts.accounts(role: nil, after: 0, limit: 10), try await webhooks.webhooks())
        #expect(written.count == 1 && hooks.count == 1)
    }

    @Test("a report round-trips exactly, with defaults for id, status and times")
    func roundTrip() throws {
        let fixture = try TemporaryStore()
        let now = Date(timeIntervalSince1970: 1_750_000_000.123)
        let draft = ReportDraft(
            coordinate: Coordinate(longitude: 30.523_456_789_012_3, latitude: 50.450_123_456_789),
            address: "  вул. Хрещатик, 1 ", city: "Київ", district: "shevchenkivskyi", objectType: "lighting_pole",
            balanceHolder: "kyivmiskvitlo", violator: "", phones: ["067-123-45-67", "+380 67 123 45 67", "(050)1112233"])
        let stored = try fixture.store.insert(draft, now: now)
        #expect(stored.id == 1)
        #expect(stored.coordinate == draft.coordinate)
        #expect(stored.address == "вул. Хрещатик, 1")
        #expect(stored.violator == nil)
        #expect(stored.phones == ["380671234567", "380501112233"])
        #expect(stored.status == "new")
        #expect(stored.createdAt == now && stored.updatedAt == now)
        #expect(try fixture.store.report(id: 1) == stored)
        #expect(try fixture.store.report(id: 2) == nil)
    }

    @Test("invalid drafts are rejected with the field and nothing is written")
    func rejected() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 1)
        let good = Drafts.make(Coordinate(longitude: 30, latitude: 50), using: &rng)
        var wrongHolder = good
        wrongHolder.objectType = "tree"
        wrongHolder.balanceHolder = "kyivpastrans"
        var badPhone = good
        badPhone.phones = ["12"]
        var badLat = good
        badLat.coordinate.latitude = .nan
        for (draft, field) in [(wrongHolder, "balance_holder"), (badPhone, "phones"), (badLat, "latitude")] {
            #expect(throws: RecordsRejected.self) { try fixture.store.insert([good, draft]) }
            do {
                try fixture.store.insert(draft)
            } catch let error as ValidationError {
                #expect(error.field == field)
            }
        }
        #expect(try fixture.store.count() == 0)
    }

    @Test("inserts, moves, phone changes and deletes keep both indexes consistent")
    func indexesFollowWrites() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 9)
        try fixture.store.importDrafts(Drafts.positions(300, using: &rng).map { Drafts.make($0, using: &rng) })
        for step in 0..<200 {
            let all = try fixture.store.all()
            let victim = all.randomElement(using: &rng)!
            switch step % 4 {
            case 0: try fixture.store.insert(Drafts.make(Drafts.positions(1, using: &rng)[0], using: &rng))
            case 1:
                var moved = ReportDraft(victim)
                moved.coordinate = Coordinate(longitude: .random(in: -180...180, using: &rng), latitude: .random(in: -90...90, using: &rng))
                try fixture.store.update(id: victim.id, with: moved)
            case 2:
                var renumbered = ReportDraft(victim)
                renumbered.phones = [Drafts.randomPhone(using: &rng)]
                try fixture.store.update(id: victim.id, with: renumbered)
            default: try fixture.store.delete(id: victim.id)
            }
        }
        #expect(try fixture.store.checkIndexes() == "ok")
        let all = try fixture.store.all()
        for box in BoxQueryTests.boxes(through: all, using: &rng) {
            #expect(try fixture.store.reports(in: box).map(\.id).sorted() == all.filter { box.contains($0.coordinate) }.map(\.id))
        }
        for report in all.prefix(50) {
            let phone = report.phones[0]
            let fragment = String(phone.dropFirst(4).prefix(6))
            #expect(try fixture.store.search(fragment, limit: 10_000).contains { $0.id == report.id })
            #expect(try fixture.store.searchCount(fragment) == all.filter { $0.phones.contains { $0.contains(fragment) } || String($0.id).contains(fragment) }.count)
        }
        #expect(throws: ReportNotFound.self) { try fixture.store.delete(id: 999_999) }
    }

    @Test("an import with invalid records reports all of them and writes nothing")
    func importRollback() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 5)
        try fixture.store.insert(Drafts.make(Coordinate(longitude: 30, latitude: 50), id: 7, using: &rng))
        var drafts = (0..<50).map { _ in Drafts.make(Coordinate(longitude: 30.5, latitude: 50.5), using: &rng) }
        drafts[3].district = "atlantis"
        drafts[10].id = 7  // taken in the database
        drafts[20].id = 100
        drafts[21].id = 100  // taken within the file
        var records = Drafts.records(drafts)
        records.append(DraftRecord(location: .line(99), draft: .failure(ValidationError(field: "geometry", "must be a Point"))))
        var batches = [records]
        do {
            _ = try fixture.store.importRecords(next: { batches.popLast() })
            Issue.record("the import should have failed")
        } catch let rejected as RecordsRejected {
            #expect(rejected.issueCount == 4)
            #expect(rejected.issues.map(\.location) == [.line(5), .line(12), .line(23), .line(99)])
            #expect(rejected.issues.map(\.error.field) == ["district", "id", "id", "geometry"])
            #expect(rejected.issues[2].error.message == "100 is already used in this input, at line 22")
        }
        #expect(try fixture.store.count() == 1)
        #expect(try fixture.store.checkIndexes() == "ok")
        #expect(try fixture.store.search("7", limit: 10).map(\.id) == [7])

        batches = [records]
        let summary = try fixture.store.importRecords(options: ImportOptions(skipInvalid: true), next: { batches.popLast() })
        #expect(summary.imported == 47)
        #expect(summary.skipped == 4)
        #expect(summary.issues.map(\.location) == [.line(5), .line(12), .line(23), .line(99)])
        #expect(try fixture.store.count() == 48)
        #expect(try fixture.store.checkIndexes() == "ok")
    }

    @Test("an import into a large table indexes rows one by one; the bulk load restores every trigger and index")
    func incrementalImport() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 6)
        let schema = { try fixture.store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE tbl_name = 'report' AND sql IS NOT NULL ORDER BY name")
        } }
        let original = try schema()
        let first = try fixture.store.importDrafts(Drafts.positions(400, using: &rng).map { Drafts.make($0, using: &rng) })
        #expect(first.rebuiltIndexes)
        #expect(try schema() == original)
        let second = try fixture.store.importDrafts(
            Drafts.positions(20, using: &rng).map { Drafts.make($0, using: &rng) }, options: ImportOptions(bulkBelow: 400))
        #expect(!second.rebuiltIndexes)
        #expect(try fixture.store.checkIndexes() == "ok")
        let all = try fixture.store.all()
        #expect(all.count == 420)
        for box in BoxQueryTests.boxes(through: all, using: &rng).prefix(50) {
            #expect(try fixture.store.reports(in: box).map(\.id).sorted() == all.filter { box.contains($0.coordinate) }.map(\.id))
        }
    }

    @Test("statistics count by status, district and object type")
    func statistics() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 8)
        let drafts = (0..<200).map { _ in Drafts.make(Coordinate(longitude: 30.5, latitude: 50.4), using: &rng) }
        try fixture.store.importDrafts(drafts)
        let stats = try fixture.store.statistics()
        #expect(stats.total == 200)
        for count in stats.byStatus { #expect(count.count == drafts.filter { $0.status == count.code }.count) }
        for count in stats.byDistrict { #expect(count.count == drafts.filter { $0.district == count.code }.count) }
        #expect(stats.byObjectType.map(\.count).reduce(0, +) == 200)
        #expect(stats.extent == (try BoundingBox(west: 30.5, south: 50.4, east: 30.5, north: 50.4)))
    }
}

@Suite("Report numbers")
struct SequenceTests {
    @Test("ids are handed out after the highest ever given, even when it was deleted")
    func neverReused() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 31)
        let first = try fixture.store.insert(Drafts.make(Coordinate(longitude: 30, latitude: 50), using: &rng))
        let explicit = try fixture.store.insert(Drafts.make(Coordinate(longitude: 30, latitude: 50), id: 500, using: &rng))
        #expect(first.id == 1 && explicit.id == 500)
        try fixture.store.delete(id: 500)
        #expect(try fixture.store.insert(Drafts.make(Coordinate(longitude: 31, latitude: 51), using: &rng)).id == 501)
        // A bulk import continues the same sequence.
        let summary = try fixture.store.importDrafts((0..<3).map { _ in Drafts.make(Coordinate(longitude: 30, latitude: 50), using: &rng) })
        #expect(summary.rebuiltIndexes)
        #expect(try fixture.store.all().map(\.id) == [1, 501, 502, 503, 504])
        #expect(throws: ValidationError.self) {
            try fixture.store.insert(Drafts.make(Coordinate(longitude: 30, latitude: 50), id: ReportLimits.maxID + 1, using: &rng))
        }
        #expect(try fixture.store.checkIndexes() == "ok")
    }
}

@Suite("Writes sharing one transaction")
struct SharedTransactionTests {
    struct Refused: Error {}

    @Test("a write that fails after changing rows is undone alone: the transaction runs again without it; one that fails before writing just fails")
    func undoneAlone() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 12)
        let drafts = Drafts.positions(5, using: &rng).map { try! fixture.store.reference.validate(Drafts.make($0, using: &rng)) }
        let now = Date()
        let writes: [(any ReportTransaction) throws -> Int64] = [
            { try $0.insert(drafts[0], filer: nil, author: .system, now: now).id },
            { t in _ = try t.insert(drafts[1], filer: nil, author: .system, now: now); throw Refused() },
            { _ in throw Refused() },
            { try $0.insert(drafts[3], filer: nil, author: .system, now: now).id },
            { try $0.setStatus(999_999, to: "verifying", note: nil, author: .system, now: now).after.id },
            { try $0.insert(drafts[4], filer: nil, author: .system, now: now).id },
        ]
        let outcomes = fixture.store.commit(writes)
        let stored = try outcomes.compactMap { try? $0.get() }.map { try #require(try fixture.store.report(id: $0)) }
        #expect(stored.map(\.address) == [drafts[0], drafts[3], drafts[4]].map(\.address))
        #expect(outcomes.map { (try? $0.get()) == nil } == [false, true, true, false, true, false])
        #expect(try fixture.store.count() == 3)
        #expect(try fixture.store.checkIndexes() == "ok")
        let history = try fixture.store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM report_history") }
        #expect(history == 3)
    }

    @Test("shared commits leave checkpoints to the checkpointer: the writer's log grows, and the database file alone then holds every commit")
    func checkpointsAside() throws {
        let fixture = try TemporaryStore()
        var rng = SplitMix64(state: 13)
        let drafts = Drafts.positions(200, using: &rng).map { try! fixture.store.reference.validate(Drafts.make($0, using: &rng)) }
        for batch in stride(from: 0, to: drafts.count, by: 10) {
            let writes: [(any ReportTransaction) throws -> Int64] = drafts[batch..<batch + 10].map { draft in
                { try $0.insert(draft, filer: nil, author: .system, now: Date()).id }
            }
            _ = fixture.store.commit(writes)
        }
        let autocheckpoint = try fixture.store.pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        #expect(autocheckpoint == 0)
        let checkpointer = try #require(fixture.store.checkpointer.withLock { $0 })
        // A run that starts after the last commit has copied it.
        let before = checkpointer.runs.load(ordering: .relaxed)
        checkpointer.nudge()
        let deadline = Date().addingTimeInterval(Double(patience.components.seconds))
        while checkpointer.runs.load(ordering: .relaxed) < before + 2 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let copy = fixture.directory.path("file-alone.sqlite")
        try FileManager.default.copyItem(atPath: fixture.directory.path("test.sqlite"), toPath: copy)
        let alone = try DatabaseQueue(path: copy)
        #expect(try alone.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM report") } == drafts.count)
    }
}
