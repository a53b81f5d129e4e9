import Foundation
import ReportModel
import SQLiteStore
import StorePorts
import Synchronization
import Testing
import TestSupport

/// What every ``AccountStorage`` must do, checked against what a brute-force model
/// expects: the port's requirements, one test each, on every store.
@Suite("Store conformance: accounts")
struct AccountStorageConformance {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// Whether writers still write (an Atomic cannot be captured by an escaping closure).
    final class Writing: Sendable { let on = Atomic<Bool>(true) }

    static func new(_ n: Int, email: String? = nil, phone: String = "380671234567", role: Role = .inspector) -> NewAccount {
        let email = email ?? "n\(n)@example.org"
        return NewAccount(name: "N\(n)", email: email, emailKey: email.lowercased(), phone: phone, role: role, passwordHash: "hash-\(n)")
    }

    /// The events after `seq`, their events only.
    static func events(_ storage: any AccountStorage, after seq: Int64 = 0) async throws -> [AccountEvent] {
        try await storage.accountEvents(after: seq, limit: 10_000).map(\.event)
    }

    @Test("an account is found by its email key, with its hash; a taken email key writes nothing; phones may repeat", arguments: AccountStoreUnderTest.all)
    func accounts(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        let created = try await storage.createAccount(Self.new(1, email: "Oksana@Example.org"), now: Self.t0)
        #expect(created.email == "Oksana@Example.org" && created.role == .inspector && !created.disabled && created.lastLoginAt == nil)
        let found = try #require(try await storage.account(emailKey: "oksana@example.org"))
        #expect(found.account == created && found.passwordHash == "hash-1")
        #expect(try await storage.account(emailKey: "someone@example.org") == nil)
        #expect(try await storage.account(id: created.id) == created)
        #expect(try await storage.account(id: 999) == nil)
        await #expect(throws: EmailTaken.self) { try await storage.createAccount(Self.new(2, email: "oksana@example.org"), now: Self.t0) }
        _ = try await storage.createAccount(Self.new(3), now: Self.t0)
        #expect(try await storage.accounts(role: nil, after: 0, limit: 10).map(\.phone) == ["380671234567", "380671234567"])
        // Two registrations of one email at once: one account.
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for n in 0..<2 { group.addTask { (try? await storage.createAccount(Self.new(10 + n, email: "same@example.org"), now: Self.t0)) != nil } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1)
        #expect(try await storage.accounts(role: nil, after: 0, limit: 10).count == 3)
        _ = keep
    }

    @Test("accounts list in id order, by role and page; an update changes what is given, writes an event, and disabling ends the sessions", arguments: AccountStoreUnderTest.all)
    func listAndUpdate(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        var ids: [Int64] = []
        for i in 0..<7 { ids.append(try await storage.createAccount(Self.new(i, role: i % 3 == 0 ? .supervisor : .inspector), now: Self.t0).id) }
        #expect(try await storage.accounts(role: nil, after: 0, limit: 3).map(\.id) == Array(ids.prefix(3)))
        #expect(try await storage.accounts(role: nil, after: ids[2], limit: 3).map(\.id) == Array(ids[3..<6]))
        #expect(try await storage.accounts(role: .supervisor, after: 0, limit: 10).map(\.id) == [ids[0], ids[3], ids[6]])
        let session = Session(id: "s1", accountID: ids[1], createdAt: Self.t0, lastUsedAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(3_600))
        try await storage.startSession(session, refreshHash: Data("r1".utf8), forgetBefore: .distantPast, ifPasswordHash: nil)
        let before = try await storage.accountEvents(after: 0, limit: 100).last?.seq ?? 0
        let changed = try await storage.updateAccount(id: ids[1], role: .admin, name: "Нове ім'я", disabled: true, now: Self.t0)
        #expect(changed.role == .admin && changed.name == "Нове ім'я" && changed.disabled)
        #expect(try await Self.events(storage, after: before) == [
            .accountChanged(id: ids[1], role: .admin, disabled: true), .sessionEnded(sessionID: "s1", accountID: ids[1]),
        ])
        #expect(try await storage.openSessions(accountID: ids[1], now: Self.t0).isEmpty)
        #expect(try await storage.updateAccount(id: ids[1], role: nil, name: nil, disabled: false, now: Self.t0).role == .admin)
        let eventsBefore = try await Self.events(storage)
        await #expect(throws: AccountNotFound(id: 999)) { try await storage.updateAccount(id: 999, role: .admin, name: nil, disabled: nil, now: Self.t0) }
        #expect(try await Self.events(storage) == eventsBefore, "a refused update writes no event")
        try await storage.recordLogin(id: ids[0], at: Self.t0)
        #expect(try await storage.account(id: ids[0])?.lastLoginAt == Self.t0)
        // A password change ends the other sessions in its transaction.
        for id in ["p1", "p2"] {
            try await storage.startSession(
                Session(id: id, accountID: ids[0], createdAt: Self.t0, lastUsedAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(3_600)),
                refreshHash: Data(id.utf8), forgetBefore: .distantPast, ifPasswordHash: nil)
        }
        try await storage.setPasswordHash(id: ids[0], "new-hash", endingSessionsExcept: "p2", now: Self.t0)
        #expect(try await storage.passwordHash(id: ids[0]) == "new-hash")
        #expect(try await storage.openSessions(accountID: ids[0], now: Self.t0).map(\.id) == ["p2"])
        #expect(try await Self.events(storage).last == .sessionEnded(sessionID: "p1", accountID: ids[0]))
        await #expect(throws: AccountNotFound(id: 999)) { try await storage.setPasswordHash(id: 999, "x", endingSessionsExcept: nil, now: Self.t0) }
        _ = keep
    }

    @Test("a session starts only while the password a login checked is still the account's and the account is enabled", arguments: AccountStoreUnderTest.all)
    func sessionAfterCheck(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        let id = try await storage.createAccount(Self.new(1), now: Self.t0).id
        func start(_ name: String, _ hash: String) async throws -> Bool {
            let session = Session(id: name, accountID: id, createdAt: Self.t0, lastUsedAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(3_600))
            return try await storage.startSession(session, refreshHash: Data(name.utf8), forgetBefore: .distantPast, ifPasswordHash: hash)
        }
        #expect(try await start("a", "hash-1"))
        #expect(try await !start("b", "an older hash"))
        // The password changed while a login checked the old one: that login starts nothing.
        try await storage.setPasswordHash(id: id, "hash-2", endingSessionsExcept: nil, now: Self.t0)
        #expect(try await !start("c", "hash-1"))
        _ = try await storage.updateAccount(id: id, role: nil, name: nil, disabled: true, now: Self.t0)
        #expect(try await !start("d", "hash-2"), "nor on a disabled account")
        #expect(try await storage.openSessions(accountID: id, now: Self.t0).isEmpty)
        _ = keep
    }

    @Test("a token that names its session ends it when it is not the current one, however many rotations ago it was replaced; one naming another session is unknown", arguments: AccountStoreUnderTest.all)
    func sessionNamedByToken(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        let account = try await storage.createAccount(Self.new(1), now: Self.t0)
        for id in ["s1", "s2"] {
            let session = Session(id: id, accountID: account.id, createdAt: Self.t0, lastUsedAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(3_600))
            try await storage.startSession(session, refreshHash: Data("\(id)-0".utf8), forgetBefore: .distantPast, ifPasswordHash: nil)
        }
        // More rotations than are remembered: the first token is forgotten, but it names its session.
        for i in 1...70 {
            let now = Self.t0.addingTimeInterval(Double(i))
            let outcome = try await storage.rotateRefresh(
                presented: Data("s1-\(i - 1)".utf8), session: "s1", next: Data("s1-\(i)".utf8), expiresAt: now.addingTimeInterval(3_600), kept: 64, now: now)
            #expect(Self.rotated(outcome) == "s1")
        }
        let now = Self.t0.addingTimeInterval(100)
        #expect(try await storage.rotateRefresh(presented: Data("s2-0".utf8), session: "s1", next: Data("x".utf8), expiresAt: now, kept: 64, now: now) == .unknown,
                "s2's token naming s1 is no token")
        #expect(try await Self.events(storage).isEmpty)
        #expect(try await storage.rotateRefresh(presented: Data("s1-0".utf8), session: "s1", next: Data("x".utf8), expiresAt: now, kept: 64, now: now) == .reused(sessionID: "s1"))
        #expect(try await Self.events(storage) == [.sessionEnded(sessionID: "s1", accountID: account.id)])
        #expect(try await storage.rotateRefresh(presented: Data("s1-70".utf8), session: "s1", next: Data("x".utf8), expiresAt: now, kept: 64, now: now) == .unknown,
                "the session is ended: its current token too")
        #expect(Self.rotated(try await storage.rotateRefresh(presented: Data("s2-0".utf8), session: "s2", next: Data("s2-1".utf8), expiresAt: now, kept: 64, now: now)) == "s2")
        _ = keep
    }

    /// The id of the session a rotation rotated, if it did.
    static func rotated(_ outcome: RefreshOutcome) -> String? {
        if case .rotated(let session) = outcome { return session.id }
        return nil
    }

    @Test("a refresh token rotates once; the session remembers its last replaced hashes, and one presented again ends it with an event; old sessions are forgotten", arguments: AccountStoreUnderTest.all)
    func sessions(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        let account = try await storage.createAccount(Self.new(1), now: Self.t0)
        let session = Session(id: "s1", accountID: account.id, createdAt: Self.t0, lastUsedAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(3_600))
        try await storage.startSession(session, refreshHash: Data("h0".utf8), forgetBefore: .distantPast, ifPasswordHash: nil)
        for i in 1...70 {
            let now = Self.t0.addingTimeInterval(Double(i))
            let outcome = try await storage.rotateRefresh(
                presented: Data("h\(i - 1)".utf8), session: nil, next: Data("h\(i)".utf8), expiresAt: now.addingTimeInterval(3_600), kept: 64, now: now)
            #expect(outcome == .rotated(Session(id: "s1", accountID: account.id, createdAt: Self.t0, lastUsedAt: now, expiresAt: now.addingTimeInterval(3_600))))
        }
        // The last rotation moved the expiry.
        #expect(try await storage.openSessions(accountID: account.id, now: Self.t0).first?.expiresAt == Self.t0.addingTimeInterval(70 + 3_600))
        let now = Self.t0.addingTimeInterval(100)
        // 70 rotations presented h0…h69; the last 64 (h6…h69) are remembered.
        #expect(try await storage.rotateRefresh(presented: Data("h5".utf8), session: nil, next: Data("x".utf8), expiresAt: now, kept: 64, now: now) == .unknown)
        #expect(try await Self.events(storage).isEmpty, "an unknown token ends nothing")
        #expect(try await storage.rotateRefresh(presented: Data("h6".utf8), session: nil, next: Data("x".utf8), expiresAt: now, kept: 64, now: now) == .reused(sessionID: "s1"))
        #expect(try await Self.events(storage) == [.sessionEnded(sessionID: "s1", accountID: account.id)])
        #expect(try await storage.rotateRefresh(presented: Data("h70".utf8), session: nil, next: Data("x".utf8), expiresAt: now, kept: 64, now: now) == .unknown,
                "an ended session's token is no token")

        // An expired session's token is no token either, and the session is not listed.
        try await storage.startSession(
            Session(id: "e", accountID: account.id, createdAt: now, lastUsedAt: now, expiresAt: now.addingTimeInterval(10)),
            refreshHash: Data("e".utf8), forgetBefore: .distantPast, ifPasswordHash: nil)
        let later = now.addingTimeInterval(20)
        #expect(try await storage.rotateRefresh(presented: Data("e".utf8), session: nil, next: Data("x".utf8), expiresAt: later, kept: 64, now: later) == .unknown)
        #expect(try await storage.openSessions(accountID: account.id, now: later).isEmpty)

        // Sessions listed newest first, ended one by one and all but one, with an event each.
        for (n, id) in ["a", "b", "c"].enumerated() {
            let created = later.addingTimeInterval(Double(n))
            try await storage.startSession(
                Session(id: id, accountID: account.id, createdAt: created, lastUsedAt: created, expiresAt: created.addingTimeInterval(3_600)),
                refreshHash: Data(id.utf8), forgetBefore: .distantPast, ifPasswordHash: nil)
        }
        #expect(try await storage.openSessions(accountID: account.id, now: later).map(\.id) == ["c", "b", "a"])
        #expect(try await storage.endSessions(.one(id: "a", accountID: account.id + 1), now: later) == 0, "another account's session")
        #expect(try await storage.endSessions(.one(id: "a", accountID: account.id), now: later) == 1)
        #expect(try await storage.endSessions(.all(accountID: account.id, except: "c"), now: later) == 2, "b, and e though it had expired")
        #expect(try await storage.openSessions(accountID: account.id, now: later).map(\.id) == ["c"])
        #expect(Set(try await Self.events(storage).suffix(3)) == Set(["a", "b", "e"].map { AccountEvent.sessionEnded(sessionID: $0, accountID: account.id) }))
        // Ended or expired before `forgetBefore`: forgotten when a session starts, their tokens with them.
        try await storage.startSession(
            Session(id: "d", accountID: account.id, createdAt: later, lastUsedAt: later, expiresAt: later.addingTimeInterval(3_600)),
            refreshHash: Data("d".utf8), forgetBefore: later.addingTimeInterval(1), ifPasswordHash: nil)
        #expect(try await storage.revocations(since: .distantPast).endedSessions.isEmpty)
        #expect(try await storage.rotateRefresh(presented: Data("h60".utf8), session: nil, next: Data("x".utf8), expiresAt: later, kept: 64, now: later) == .unknown,
                "a forgotten session's replaced tokens are forgotten too")
        #expect(try await storage.openSessions(accountID: account.id, now: later).map(\.id).sorted() == ["c", "d"])
        _ = keep
    }

    @Test("of two rotations of one refresh token at once, one rotates and the other finds it used", arguments: AccountStoreUnderTest.all)
    func rotationRace(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        let account = try await storage.createAccount(Self.new(1), now: Self.t0)
        for round in 0..<20 {
            let id = "s\(round)"
            try await storage.startSession(
                Session(id: id, accountID: account.id, createdAt: Self.t0, lastUsedAt: Self.t0, expiresAt: Self.t0.addingTimeInterval(3_600)),
                refreshHash: Data(id.utf8), forgetBefore: .distantPast, ifPasswordHash: nil)
            let outcomes = try await withThrowingTaskGroup(of: RefreshOutcome.self) { group in
                for n in 0..<2 {
                    group.addTask {
                        try await storage.rotateRefresh(presented: Data(id.utf8), session: nil, next: Data("\(id)-\(n)".utf8), expiresAt: Self.t0.addingTimeInterval(3_600), kept: 64, now: Self.t0)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let rotated = outcomes.filter { if case .rotated = $0 { true } else { false } }
            #expect(rotated.count == 1 && outcomes.contains(.reused(sessionID: id)), "\(outcomes)")
        }
        _ = keep
    }

    @Test("API keys: found by hash until revoked; a revocation is an event once; signing keys keep the newest", arguments: AccountStoreUnderTest.all)
    func keys(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        let key = try await storage.createAPIKey(name: "sync", role: .integration, keyHash: Data("k".utf8), now: Self.t0)
        #expect(try await storage.apiKey(hash: Data("k".utf8)) == key)
        #expect(try await storage.apiKey(hash: Data("other".utf8)) == nil)
        try await storage.revokeAPIKey(id: key.id, now: Self.t0)
        try await storage.revokeAPIKey(id: key.id, now: Self.t0.addingTimeInterval(1))
        #expect(try await storage.apiKey(hash: Data("k".utf8)) == nil)
        #expect(try await storage.apiKeys().first?.revokedAt == Self.t0)
        #expect(try await Self.events(storage) == [.apiKeyRevoked(id: key.id)])
        await #expect(throws: APIKeyNotFound(id: 99)) { try await storage.revokeAPIKey(id: 99, now: Self.t0) }
        #expect(try await storage.revocations(since: .distantPast).revokedKeys == [key.id])

        let first = SigningKey(kid: "k1", secret: Data(repeating: 1, count: 32), createdAt: Self.t0)
        #expect(try await storage.signingKeys(storingIfNone: first) == [first])
        #expect(try await storage.signingKeys(storingIfNone: SigningKey(kid: "unused", secret: Data(repeating: 9, count: 32), createdAt: Self.t0)) == [first])
        // In the order added, whatever their times.
        for n in 2...4 {
            try await storage.addSigningKey(
                SigningKey(kid: "k\(n)", secret: Data(repeating: UInt8(n), count: 32), createdAt: Self.t0.addingTimeInterval(Double(-n))), keeping: 2)
        }
        #expect(try await storage.signingKeys(storingIfNone: first).map(\.kid) == ["k4", "k3"])
        _ = keep
    }

    @Test("account events from writers at once: every reader sees each once, numbered in commit order; the snapshot agrees with the model", arguments: AccountStoreUnderTest.all)
    func eventsInOrder(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        var accounts: [Int64] = []
        for n in 0..<8 { accounts.append(try await storage.createAccount(Self.new(n), now: Self.t0).id) }
        // A reader pages through the events while they are written: it must meet each one,
        // in order, never one below what it has seen.
        let writing = Writing()
        let reader = Task { () throws -> [Int64] in
            var seen: [Int64] = [], cursor: Int64 = 0
            while true {
                let stillWriting = writing.on.load(ordering: .acquiring)
                let page = try await storage.accountEvents(after: cursor, limit: 7)
                for numbered in page {
                    #expect(numbered.seq > cursor)
                    seen.append(numbered.seq)
                    cursor = numbered.seq
                }
                if page.isEmpty && !stillWriting { return seen }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (w, account) in accounts.enumerated() {
                group.addTask {
                    for step in 0..<15 {
                        let now = Self.t0.addingTimeInterval(Double(step))
                        switch step % 3 {
                        case 0:
                            try await storage.startSession(
                                Session(id: "w\(w)s\(step)", accountID: account, createdAt: now, lastUsedAt: now, expiresAt: now.addingTimeInterval(3_600)),
                                refreshHash: Data("w\(w)s\(step)".utf8), forgetBefore: .distantPast, ifPasswordHash: nil)
                        case 1: _ = try await storage.endSessions(.all(accountID: account, except: nil), now: now)
                        default: _ = try await storage.updateAccount(id: account, role: step % 2 == 0 ? .supervisor : .inspector, name: nil, disabled: step == 14, now: now)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        writing.on.store(false, ordering: .releasing)
        let all = try await storage.accountEvents(after: 0, limit: 10_000)
        #expect(all.count == 8 * (5 + 5), "a session ended and an account changed per round, for 5 rounds of each account")
        let first = try #require(all.first?.seq)
        #expect(all.map(\.seq) == Array(first..<(first + Int64(all.count))), "numbered one after another")
        #expect(try await reader.value == all.map(\.seq), "the reader met every event once, in order")
        var disabled: Set<Int64> = [], roles: [Int64: Role] = [:], ended: Set<String> = []
        for numbered in all {
            switch numbered.event {
            case .accountChanged(let id, let role, let isDisabled):
                roles[id] = role
                if isDisabled { disabled.insert(id) } else { disabled.remove(id) }
            case .sessionEnded(let session, _): ended.insert(session)
            case .apiKeyRevoked: break
            }
        }
        let snapshot = try await storage.revocations(since: .distantPast)
        #expect(snapshot.seq == all.last?.seq && snapshot.disabledAccounts == disabled && Set(snapshot.endedSessions.keys) == ended)
        #expect(Dictionary(snapshot.roleChanges.map { ($0.accountID, $0.role) }, uniquingKeysWith: { $1 }) == roles)
        for id in accounts {
            let account = try await storage.account(id: id)
            #expect(account?.role == roles[id] && account?.disabled == disabled.contains(id))
        }
        _ = keep
    }

    @Test("account events older than the retention are pruned as new ones are written, never the newest, and no number is given twice", arguments: AccountStoreUnderTest.all)
    func pruning(_ store: AccountStoreUnderTest) async throws {
        let (storage, keep) = try await store.open()
        let id = try await storage.createAccount(Self.new(1), now: Self.t0).id
        for _ in 0..<3 { _ = try await storage.updateAccount(id: id, role: .supervisor, name: nil, disabled: nil, now: Self.t0) }
        let old = try await storage.accountEvents(after: 0, limit: 10).map(\.seq)
        #expect(old.count == 3)
        let later = Self.t0.addingTimeInterval(eventRetention + 1)
        _ = try await storage.updateAccount(id: id, role: .admin, name: nil, disabled: nil, now: later)
        let kept = try await storage.accountEvents(after: 0, limit: 10)
        #expect(kept.map(\.event) == [.accountChanged(id: id, role: .admin, disabled: false)] && kept.first!.seq == old.last! + 1)
        // A reader that had seen the first event finds that the next one it gets is not the next number.
        #expect(try await storage.accountEvents(after: old[0], limit: 10).first?.seq != old[0] + 1)
        // A snapshot keeps the role changes within its horizon only.
        #expect(try await storage.revocations(since: later).roleChanges.map(\.role) == [.admin])
        #expect(try await storage.revocations(since: Self.t0).roleChanges.map(\.role) == [.admin], "the pruned ones are gone")
        _ = keep
    }
}
