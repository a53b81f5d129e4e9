import Foundation
import Generator
import Geometry
import PostgresStore
import ReportModel
import ReportService
import StorePorts
import Testing
import TestSupport

/// Autodial's rows on every store: campaigns start and end with the number's history and
/// change, claims hold the rules against every call written (the interval, the day's most,
/// the channels, a call never finished), and the automatic ends happen in the transaction
/// that makes a campaign pointless.
@Suite("Store conformance: autodial campaigns and calls")
struct AutodialStorageConformance {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let boss = Caller(accountID: 7, role: .supervisor)

    /// A store with `count` reports carrying one number, verified as the advertiser's, and
    /// the service over it.
    static func violator(_ store: StoreUnderTest, count: Int = 3) async throws -> (service: ReportService, storage: any ReportStorage, number: String, ids: [Int64], keep: AnyObject) {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        var rng = SplitMix64(state: 31)
        let number = "380671112233"
        let drafts = try (0..<count).map { _ in
            try storage.reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), phones: [number], status: "new", using: &rng))
        }
        let reports = try storage.commit([{ t in try drafts.map { try t.insert($0, filer: nil, author: .system, now: Self.t0) } }])[0].get()
        let service = try await ReportService(storage: storage)
        _ = try await service.verify(number, outcome: .violator, note: nil, by: boss, now: t0)
        return (service, storage, number, reports.map(\.id), keep)
    }

    static func claim(_ campaign: Int64, at now: Date, maxPerDay: Int = 100, channels: Int = 4, interval: TimeInterval = 300) -> CallClaim {
        CallClaim(
            campaignID: campaign, now: now, lastCallBy: now - interval, dayStart: now - 3_600, maxPerDay: maxPerDay, channels: channels,
            leaseUntil: now + 90)
    }

    @Test("a campaign starts on a violator only, once at a time, with the number's history and change; its status stays; a stop ends it", arguments: StoreUnderTest.all)
    func startAndStop(_ store: StoreUnderTest) async throws {
        let (service, storage, number, _, keep) = try await Self.violator(store)
        let before = try await storage.phoneRecord(number)!
        let lastSeq = try await storage.lastChange()
        let started = try await service.startAutodial(number, note: "дзвонимо", by: Self.boss, now: Self.t0 + 10)
        #expect(started.campaign.isActive && started.campaign.note == "дзвонимо" && started.campaign.startedBy.accountID == 7)
        let record = try await storage.phoneRecord(number)!
        #expect(record.status == .violator && record.changedAt == before.changedAt, "a campaign leaves the status and its time")
        #expect(record.history.map(\.action) == [.verified, .autodialStarted])
        let changes = try await storage.changes(after: lastSeq, limit: 10).rows
        #expect(changes.map(\.action) == [.phoneAutodialStarted] && changes.first?.phone == number)
        await #expect(throws: CampaignConflict.self) { try await service.startAutodial(number, note: nil, by: Self.boss) }
        await #expect(throws: Forbidden.self) { try await service.startAutodial(number, note: nil, by: Caller(accountID: 9, role: .inspector)) }
        await #expect(throws: Forbidden.self) { try await service.stopAutodial(number, note: nil, by: Caller(accountID: nil, apiKeyID: 3, role: .integration)) }
        // An unverified number, and one nobody carries.
        var rng = SplitMix64(state: 5)
        let other = try storage.reference.validate(Drafts.make(Coordinate(longitude: 30.6, latitude: 50.4), phones: ["380679998877"], using: &rng))
        _ = try storage.commit([{ t in try t.insert(other, filer: nil, author: .system, now: Self.t0) }])[0].get()
        await #expect(throws: PhoneStatusConflict.self) { try await service.startAutodial("380679998877", note: nil, by: Self.boss) }
        await #expect(throws: PhoneNotFound.self) { try await service.startAutodial("380000000000", note: nil, by: Self.boss) }

        let stopped = try await service.stopAutodial(number, note: "досить", by: Self.boss, now: Self.t0 + 20)
        #expect(stopped.campaign.endReason == .stopped && stopped.campaign.endNote == "досить" && stopped.campaign.endedAt == Self.t0 + 20)
        await #expect(throws: CampaignConflict.self) { try await service.stopAutodial(number, note: nil, by: Self.boss) }
        let campaigns = try await service.campaigns(of: number, for: Self.boss)
        #expect(campaigns == [stopped.campaign])
        // A blocked number may be called too; a new campaign after the last one ended.
        _ = try await service.block(number, note: nil, by: Self.boss)
        let again = try await service.startAutodial(number, note: nil, by: Self.boss, now: Self.t0 + 30)
        #expect(try await service.campaigns(of: number, for: Self.boss).map(\.id) == [again.campaign.id, stopped.campaign.id])
        _ = keep
    }

    @Test("claims: the interval, the day's most and the channels are held against every call written, finished or not; a lapsed claim is interrupted and still counts", arguments: StoreUnderTest.all)
    func claims(_ store: StoreUnderTest) async throws {
        let (service, storage, number, _, keep) = try await Self.violator(store)
        let campaign = try await service.startAutodial(number, note: nil, by: Self.boss, now: Self.t0).campaign
        let t = Self.t0 + 100
        let first = try await service.claimCall(Self.claim(campaign.id, at: t)).get()
        #expect(first.number == number && first.outcome == .placing && first.placedAt == t)
        #expect(try await service.claimCall(Self.claim(campaign.id, at: t + 299)) == .failure(.tooSoon))
        // The clock went back: a call "in the future" is too soon as well.
        #expect(try await service.claimCall(Self.claim(campaign.id, at: t - 1_000)) == .failure(.tooSoon))
        let finished = try await service.finishCall(first.id, CallResult(outcome: .answered, sipCode: 200, secondsPlayed: 3.9, reason: "end of file", endedAt: t + 10))
        #expect(finished?.outcome == .answered && finished?.sipCode == 200 && finished?.secondsPlayed == 3.9 && finished?.endedAt == t + 10)
        let second = try await service.claimCall(Self.claim(campaign.id, at: t + 300)).get()
        // A call still under way (its lease not ended) holds its number whatever the interval: two calls never ring it at once.
        #expect(try await service.claimCall(Self.claim(campaign.id, at: t + 370, interval: 60)) == .failure(.tooSoon))
        #expect(try await service.claimCall(Self.claim(campaign.id, at: t + 600, maxPerDay: 2)) == .failure(.dayFull))

        // Channels: the second call still holds one until its lease ends.
        let other = try await Self.secondCampaign(service, storage)
        #expect(try await service.claimCall(Self.claim(other.id, at: t + 310, channels: 1)) == .failure(.channelsBusy))
        // Its dialer died: once the lease is past, the call is interrupted, frees its channel, and still counts.
        #expect(try await service.expireCalls(now: t + 300 + 89) == 0)
        #expect(try await service.expireCalls(now: t + 300 + 90) == 1)
        _ = try await service.claimCall(Self.claim(other.id, at: t + 400, channels: 1)).get()
        #expect(try await service.claimCall(Self.claim(campaign.id, at: t + 500)) == .failure(.tooSoon))
        let calls = try await service.calls(of: number, before: nil, limit: 10, for: Self.boss)
        #expect(calls.map(\.id) == [second.id, first.id] && calls.map(\.outcome) == [.interrupted, .answered])
        #expect(try await service.calls(of: number, before: second.id, limit: 10, for: Self.boss).map(\.id) == [first.id])
        await #expect(throws: Forbidden.self) { try await service.calls(of: number, before: nil, limit: 10, for: Caller(accountID: 1, role: .inspector)) }

        let dialer = try await service.dialerCampaigns(callsSince: t - 1)
        #expect(dialer.map(\.campaign.id) == [campaign.id, other.id])
        #expect(dialer[0].recentCalls == [t, t + 300] && dialer[1].recentCalls == [t + 400])
        #expect(try await service.dialerCampaigns(callsSince: t + 301)[0].recentCalls.isEmpty)

        // A stopped campaign takes no claim.
        _ = try await service.stopAutodial(number, note: nil, by: Self.boss, now: t + 2_000)
        #expect(try await service.claimCall(Self.claim(campaign.id, at: t + 3_000)) == .failure(.campaignEnded))
        _ = keep
    }

    static func secondCampaign(_ service: ReportService, _ storage: any ReportStorage) async throws -> Campaign {
        var rng = SplitMix64(state: 77)
        let draft = try storage.reference.validate(Drafts.make(Coordinate(longitude: 30.52, latitude: 50.44), phones: ["380935554433"], using: &rng))
        _ = try storage.commit([{ t in try t.insert(draft, filer: nil, author: .system, now: Self.t0) }])[0].get()
        _ = try await service.verify("380935554433", outcome: .violator, note: nil, by: boss, now: t0)
        return try await service.startAutodial("380935554433", note: nil, by: boss, now: t0).campaign
    }

    @Test("a campaign ends by itself when its last poster is gone, when the number is found not to be the advertiser's, and after the most days; each end says why", arguments: StoreUnderTest.all)
    func automaticEnds(_ store: StoreUnderTest) async throws {
        let (service, storage, number, ids, keep) = try await Self.violator(store)
        _ = try await service.startAutodial(number, note: nil, by: Self.boss, now: Self.t0)
        // Two of three reports gone: the campaign runs on; the third hidden: it ends.
        for id in ids.prefix(2) {
            _ = try await service.transition(id, to: "rejected", note: "не наше", duplicateOf: nil, by: Self.boss, now: Self.t0 + 5)
            #expect(try await service.campaigns(of: number, for: Self.boss)[0].isActive)
        }
        _ = try await service.hide(ids[2], note: "спам", by: Self.boss, now: Self.t0 + 6)
        let gone = try await service.campaigns(of: number, for: Self.boss)[0]
        #expect(gone.endReason == .posterGone && gone.endedAt == Self.t0 + 6 && gone.endedBy == .system)
        let history = try await storage.phoneRecord(number)!.history
        #expect(history.last?.action == .autodialStopped && history.last?.note == CampaignEnd.posterGone.explanation)
        // Its posters all gone, a campaign does not start (it would call until its last day).
        let refused = await #expect(throws: CampaignConflict.self) { try await service.startAutodial(number, note: nil, by: Self.boss, now: Self.t0 + 6) }
        let campaigns = try await service.campaigns(of: number, for: Self.boss)
        #expect(refused?.description.contains("posters are gone") == true && campaigns.count == 1)

        // Back, and verified as someone else's.
        _ = try await service.unhide(ids[2], note: nil, by: Self.boss)
        _ = try await service.startAutodial(number, note: nil, by: Self.boss, now: Self.t0 + 7)
        _ = try await service.verify(number, outcome: .notViolator, note: "підстава", by: Self.boss, now: Self.t0 + 8)
        #expect(try await service.campaigns(of: number, for: Self.boss)[0].endReason == .notViolator)

        // The dialer ends one past its days; ending it twice changes nothing.
        _ = try await service.verify(number, outcome: .violator, note: nil, by: Self.boss, now: Self.t0 + 9)
        let third = try await service.startAutodial(number, note: nil, by: Self.boss, now: Self.t0 + 10).campaign
        try await service.endExpiredCampaign(third, now: Self.t0 + 86_400 * 31)
        try await service.endExpiredCampaign(third, now: Self.t0 + 86_400 * 32)
        let ended = try await service.campaigns(of: number, for: Self.boss)
        #expect(ended.map(\.endReason) == [.maxDays, .notViolator, .posterGone] && ended[0].endedAt == Self.t0 + 86_400 * 31)
        let actions = try await storage.changes(after: 0, limit: 100).rows.filter(\.action.isPhone).map(\.action)
        #expect(actions.filter { $0 == .phoneAutodialStopped }.count == 3)
        _ = keep
    }

    @Test("what a campaign did: its calls and answers, and the reports carrying its number in equal periods before and after it started", arguments: StoreUnderTest.all)
    func effects(_ store: StoreUnderTest) async throws {
        let (service, storage, number, _, keep) = try await Self.violator(store, count: 0 + 1)
        var rng = SplitMix64(state: 8)
        // Reports of the number filed 3 and 1 days before the start, and 1 day after.
        let start = Self.t0 + 10 * 86_400
        for offset in [-3.0, -1, 1] {
            var draft = Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), phones: [number], using: &rng)
            draft.createdAt = start + offset * 86_400
            let checked = try storage.reference.validate(draft)
            _ = try storage.commit([{ t in try t.insert(checked, filer: nil, author: .system, now: start) }])[0].get()
        }
        let campaign = try await service.startAutodial(number, note: nil, by: Self.boss, now: start).campaign
        let call = try await service.claimCall(Self.claim(campaign.id, at: start + 60)).get()
        try await service.finishCall(call.id, CallResult(outcome: .answered, sipCode: 200, secondsPlayed: 4, endedAt: start + 70))
        _ = try await service.claimCall(Self.claim(campaign.id, at: start + 400)).get()
        // Two days on: the periods are two days each.
        let effects = try await service.campaignEffects(before: nil, limit: 10, for: Self.boss, now: start + 2 * 86_400)
        #expect(effects.count == 1)
        #expect(effects[0].calls == 2 && effects[0].answered == 1 && effects[0].period == 2 * 86_400)
        #expect(effects[0].reportsBefore == 1 && effects[0].reportsAfter == 1)
        await #expect(throws: Forbidden.self) { try await service.campaignEffects(before: nil, limit: 10, for: Caller(accountID: 1, role: .inspector)) }
        _ = keep
    }

    /// Two replicas of one PostgreSQL database claim at once: each call goes to one only,
    /// and the channels hold across both.
    @Test("PostgreSQL: replicas claiming at once never both place one call, and never pass the channels together", .enabled(if: TestPostgres.url != nil))
    func replicasClaimOnce() async throws {
        let store = StoreUnderTest.all.first { $0.name == "PostgreSQL" }!
        let (service, storage, number, _, keep) = try await Self.violator(store)
        let postgres = try #require(keep as? TestPostgres)
        // Three more replicas, each with a pool and a writer of its own.
        var replicas = [service]
        for _ in 0..<3 { replicas.append(try await ReportService(storage: PostgresReports(try await PostgresDatabase(url: postgres.cluster.url)))) }
        let twin = replicas[1]
        let campaign = try await service.startAutodial(number, note: nil, by: Self.boss, now: Self.t0).campaign
        let other = try await Self.secondCampaign(service, storage)
        for round in 0..<30 {
            let now = Self.t0 + Double(1_000 + round * 400)
            // Every replica claims both numbers at once, with two channels: each number once.
            let results = try await withThrowingTaskGroup(of: Result<CallAttempt, ClaimRefusal>.self) { group in
                for s in replicas + replicas {
                    for c in [campaign, other] { group.addTask { try await s.claimCall(Self.claim(c.id, at: now, channels: 2)) } }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let placed = results.compactMap { try? $0.get() }
            #expect(placed.count == 2 && Set(placed.map(\.campaignID)) == [campaign.id, other.id], "round \(round)")
            for call in placed { try await twin.finishCall(call.id, CallResult(outcome: .busy, sipCode: 486, endedAt: now + 1)) }
        }
        // One channel, every replica, both numbers: one call.
        let now = Self.t0 + 20_000
        let results = try await withThrowingTaskGroup(of: Result<CallAttempt, ClaimRefusal>.self) { group in
            for s in replicas { for c in [campaign, other] { group.addTask { try await s.claimCall(Self.claim(c.id, at: now, channels: 1)) } } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.filter { (try? $0.get()) != nil }.count == 1)

        // The turn-taking itself, without a race to win: another session takes the lock,
        // claims a call and holds its transaction open. A claim meanwhile waits for it,
        // then sees its call (without the lock it would see nothing and claim too).
        let later = now + 1_000
        let database = postgres.name
        async let holder = TestPostgresDatabase.session([
            "BEGIN", "SELECT id FROM autodial_lock FOR UPDATE",
            "INSERT INTO autodial_call (campaign_id, number, placed_at, lease_until, outcome) VALUES (\(campaign.id), '\(number)', \(later.milliseconds), \(later.milliseconds + 90_000), 'placing')",
            "SELECT pg_sleep(1)", "COMMIT",
        ], database: database)
        let locked = "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'autodial_lock' AND l.mode = 'RowShareLock' AND l.granted"
        while try await TestPostgresDatabase.psqlOffPool(locked, database: database) == ["0"] { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try await replicas[2].claimCall(Self.claim(campaign.id, at: later + 1)) == .failure(.tooSoon))
        _ = try await holder
        _ = keep
    }
}
