import Foundation
import PostgresStore
import StorePorts
import Testing
import TestSupport

/// What every ``AttemptLedger`` must do, against the window arithmetic a brute force does:
/// counted per key within the window, given back and forgotten exactly, and checked and
/// counted in one step, even by several replicas at once.
@Suite("Store conformance: the attempts the throttles count")
struct AttemptLedgerConformance {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("a key waits once it counted its limit in the window, until the oldest leaves it; give back and forget undo exactly what they name", arguments: AccountStoreUnderTest.all)
    func window(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        defer { _ = keep }
        let ledger = storage.attempts
        let keys = [(key: "pair", limit: 2), (key: "client", limit: 3)]
        #expect(try await ledger.take(keys, window: 60, now: Self.t0) == nil)
        #expect(try await ledger.take(keys, window: 60, now: Self.t0 + 10) == nil)
        // The pair counted 2 of 2: held back until the first leaves the window (t0 + 60).
        #expect(try await ledger.wait(keys, window: 60, now: Self.t0 + 20) == 40)
        #expect(try await ledger.take(keys, window: 60, now: Self.t0 + 20) == 40, "a refused take counts nothing")
        #expect(try await ledger.wait([(key: "client", limit: 3)], window: 60, now: Self.t0 + 20) == nil, "the client counted 2 of 3")

        try await ledger.giveBack(["pair"], at: Self.t0 + 10)
        #expect(try await ledger.wait(keys, window: 60, now: Self.t0 + 20) == nil, "one given back: 1 of 2")
        #expect(try await ledger.take([(key: "client", limit: 3)], window: 60, now: Self.t0 + 30) == nil)
        #expect(try await ledger.wait([(key: "client", limit: 3)], window: 60, now: Self.t0 + 30) == 30, "the client's 3: t0, t0 + 10, t0 + 30")
        try await ledger.forget(["client"])
        #expect(try await ledger.wait([(key: "client", limit: 1)], window: 60, now: Self.t0 + 30) == nil)
        #expect(try await ledger.wait([(key: "other", limit: 1)], window: 60, now: Self.t0 + 30) == nil, "keys are apart")
        // Any text is a key: a login is whatever was typed.
        let typed = [(key: "login:x\u{0}'; --\u{1F}ж", limit: 1)]
        #expect(try await ledger.take(typed, window: 60, now: Self.t0 + 30) == nil)
        #expect(try await ledger.wait(typed, window: 60, now: Self.t0 + 31) == 59)
        // The window passes (time only goes forward here, as a clock's does).
        #expect(try await ledger.take([(key: "late", limit: 1)], window: 60, now: Self.t0 + 40) == nil)
        #expect(try await ledger.wait([(key: "late", limit: 1)], window: 60, now: Self.t0 + 99) == 1)
        #expect(try await ledger.wait([(key: "late", limit: 1)], window: 60, now: Self.t0 + 101) == nil, "it left the window")
    }

    @Test("takes at once cannot outrun the count: of 12 at once on a limit of 5, exactly 5 are counted", arguments: AccountStoreUnderTest.all)
    func atOnce(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        defer { _ = keep }
        let ledger = storage.attempts
        let passed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<12 {
                group.addTask { try await ledger.take([(key: "guessed", limit: 5)], window: 600, now: Self.t0 + Double(i) / 1000) == nil }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(passed == 5)
    }

    @Test("two replicas on one PostgreSQL database count together: of 12 takes at once through either, exactly 5 pass", .enabled(if: TestPostgres.url != nil))
    func replicasCountTogether() async throws {
        let database = try await TestPostgres.fresh()
        let other = try await PostgresDatabase(url: TestPostgres.url(of: database.name))
        let ledgers = [PostgresAccounts(database.database).attempts, PostgresAccounts(other).attempts]
        let passed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<12 {
                group.addTask { try await ledgers[i % 2].take([(key: "guessed", limit: 5)], window: 600, now: Self.t0 + Double(i) / 1000) == nil }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(passed == 5)
        #expect(try await ledgers[1].wait([(key: "guessed", limit: 5)], window: 600, now: Self.t0 + 1) != nil, "the other replica sees the count")
    }
}
