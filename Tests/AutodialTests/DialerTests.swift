import Autodial
import Foundation
import Generator
import Geometry
import ReportModel
import ReportService
import Synchronization
import Testing
import TestSupport

/// Channels that hold each call until the test lets it end, counting how many are in
/// progress at once: the trunk as the dialer sees it, without SIP.
final class Switchboard: Sendable {
    struct State {
        var active = 0
        var mostAtOnce = 0
        var placed: [String] = []
        var held: [CheckedContinuation<Void, Never>] = []
    }
    let state = Mutex(State())
    let outcome: CallOutcome
    let clock: @Sendable () -> Date

    init(outcome: CallOutcome = .answered, clock: @escaping @Sendable () -> Date) {
        (self.outcome, self.clock) = (outcome, clock)
    }

    struct Line: CallChannel {
        let board: Switchboard
        func call(_ number: String) async -> CallResult {
            await withCheckedContinuation { continuation in
                board.state.withLock { s in
                    s.active += 1
                    s.mostAtOnce = max(s.mostAtOnce, s.active)
                    s.placed.append(number)
                    s.held.append(continuation)
                }
            }
            board.state.withLock { $0.active -= 1 }
            return CallResult(outcome: board.outcome, sipCode: board.outcome == .answered ? 200 : 486, secondsPlayed: 4, endedAt: board.clock())
        }
    }

    func lines(_ n: Int) -> [any CallChannel] { (0..<n).map { _ in Line(board: self) } }

    /// Waits until every call the dialer started has reached its line (each starts in a
    /// task of its own).
    func settle(_ dialer: Dialer) async {
        while state.withLock(\.active) != dialer.callsInProgress { await Task.yield() }
    }

    /// Lets every call in progress end, and waits until the dialer has recorded them.
    func hangUpAll(_ dialer: Dialer) async {
        await settle(dialer)
        for continuation in state.withLock({ s in defer { s.held = [] }; return s.held }) { continuation.resume() }
        await dialer.finishCalls()
    }

    var placed: [String] { state.withLock(\.placed) }
    var mostAtOnce: Int { state.withLock(\.mostAtOnce) }
    var active: Int { state.withLock(\.active) }
}

/// A test clock the test moves by hand.
final class TestClock: Sendable {
    private let instant: Mutex<Date>
    init(_ start: Date) { instant = Mutex(start) }
    var now: Date { instant.withLock { $0 } }
    func set(_ date: Date) { instant.withLock { $0 = date } }
}

/// The dialer on an injected clock against a real store: the rules hold across restarts,
/// a dialer killed mid-call, the night, a daylight-saving change, the day's most, the
/// campaign's days and a backlog far larger than the channels.
@Suite struct DialerTests {
    static func utc(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }
    static let boss = Caller(accountID: 1, role: .supervisor)

    /// A store with `count` violators' numbers, each on a campaign started at `started`.
    static func campaigns(_ count: Int, started: Date) async throws -> (service: ReportService, numbers: [String], keep: TemporaryStore) {
        var rng = SplitMix64(state: 12)
        let numbers = (0..<count).map { "38067\(String(format: "%07d", 1_000_000 + $0))" }
        let drafts = numbers.map { Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), phones: [$0], status: "new", using: &rng) }
        let store = try TemporaryStore(inserting: drafts)
        let service = try await ReportService(storage: store.store)
        for number in numbers {
            _ = try await service.verify(number, outcome: .violator, note: nil, by: boss, now: started)
            _ = try await service.startAutodial(number, note: nil, by: boss, now: started)
        }
        return (service, numbers, store)
    }

    static func rules(channels: Int = 4, maxPerDay: Int = 100) -> AutodialRules {
        var rules = AutodialRules.defaults
        (rules.channels, rules.maxCallsPerDay) = (channels, maxPerDay)
        return rules
    }

    @Test func aBacklogOfAHundredIsWorkedAtTheChannelLimit() async throws {
        let t = Self.utc("2026-05-04T07:00:00Z")
        let (service, numbers, keep) = try await Self.campaigns(100, started: t)
        let clock = TestClock(t)
        let board = Switchboard(clock: { clock.now })
        let dialer = Dialer(service: service, planner: CallPlanner(rules: Self.rules(channels: 4)), channels: board.lines(4))
        var rounds = 0
        while board.placed.count < 100 {
            try await dialer.round(now: t)
            await board.settle(dialer)
            #expect(board.active == min(4, 100 - rounds * 4))
            // A round while every channel is busy starts nothing.
            try await dialer.round(now: t)
            #expect(dialer.callsInProgress == board.active)
            await board.hangUpAll(dialer)
            rounds += 1
            guard rounds <= 30 else { break }
        }
        #expect(rounds == 25 && board.mostAtOnce == 4)
        #expect(board.placed.sorted() == numbers, "each number once")
        // Nobody again before the interval; everybody again after it.
        try await dialer.round(now: t + 299)
        #expect(dialer.callsInProgress == 0)
        try await dialer.round(now: t + 300)
        await board.settle(dialer)
        #expect(board.placed.count == 104)
        await board.hangUpAll(dialer)
        _ = keep
    }

    @Test func theIntervalHoldsAcrossARestartAndADialerKilledMidCall() async throws {
        let t = Self.utc("2026-05-04T07:00:00Z")
        let (service, numbers, keep) = try await Self.campaigns(1, started: t)
        let clock = TestClock(t)
        let board = Switchboard(clock: { clock.now })
        let planner = CallPlanner(rules: Self.rules())
        let first = Dialer(service: service, planner: planner, channels: board.lines(1))
        try await first.round(now: t)
        clock.set(t + 10)
        await board.hangUpAll(first)
        // A new process (a restart) reads the same rows.
        let restarted = Dialer(service: service, planner: planner, channels: board.lines(1))
        try await restarted.round(now: t + 60)
        #expect(restarted.callsInProgress == 0)
        try await restarted.round(now: t + 300)
        await board.settle(restarted)
        #expect(board.placed.count == 2)
        clock.set(t + 310)
        await board.hangUpAll(restarted)

        // A dialer that claims and dies (kill -9): its call is never finished.
        switch try await service.claimCall(planner.claim(try await service.campaigns(of: numbers[0], for: Self.boss)[0], now: t + 600)) {
        case .success: break
        case .failure(let refusal): Issue.record("claim refused: \(refusal)")
        }
        let interrupted = Mutex(0)
        let next = Dialer(service: service, planner: planner, channels: board.lines(1), onInterrupted: { n in interrupted.withLock { $0 += n } })
        try await next.round(now: t + 600 + planner.callLength)
        #expect(next.callsInProgress == 0, "not again within the interval of the lost call")
        try await next.round(now: t + 900)
        await board.settle(next)
        #expect(board.placed.count == 3)
        clock.set(t + 905)
        await board.hangUpAll(next)
        let calls = try await service.calls(of: numbers[0], before: nil, limit: 10, for: Self.boss)
        #expect(calls.map(\.outcome) == [.answered, .interrupted, .answered, .answered])
        #expect(interrupted.withLock { $0 } == 1, "the lapsed call is counted (autodial_calls_total{outcome=\"interrupted\"})")
        #expect(calls.map(\.placedAt) == [t + 900, t + 600, t + 300, t])
        _ = keep
    }

    @Test func noCallAtNightAcrossTheSpringChange() async throws {
        // 20:30 in Kyiv on the eve of the change (UTC+2); 09:00 the next morning is 06:00Z (UTC+3).
        let evening = Self.utc("2026-03-28T18:30:00Z")
        let (service, _, keep) = try await Self.campaigns(1, started: evening)
        let clock = TestClock(evening)
        let board = Switchboard(clock: { clock.now })
        let dialer = Dialer(service: service, planner: CallPlanner(rules: Self.rules()), channels: board.lines(1))
        var at = evening
        while dialer.callsInProgress == 0, at < evening + 86_400 {
            try await dialer.round(now: at)
            if dialer.callsInProgress == 0 { at += 600 }
        }
        #expect(at == Self.utc("2026-03-29T06:00:00Z"))
        await board.hangUpAll(dialer)
        _ = keep
    }

    @Test func anOverdueCallWaitsForTheMorningAfterTheDialerWasDown() async throws {
        // Last called at 19:50 Kyiv (16:50Z, summer); the dialer was down until 20:05: no call
        // then, however overdue; the next at 09:00.
        let start = Self.utc("2026-05-04T16:40:00Z")
        let (service, numbers, keep) = try await Self.campaigns(1, started: start)
        let clock = TestClock(start)
        let board = Switchboard(clock: { clock.now })
        let planner = CallPlanner(rules: Self.rules())
        let campaign = try await service.campaigns(of: numbers[0], for: Self.boss)[0]
        _ = try await service.claimCall(planner.claim(campaign, now: Self.utc("2026-05-04T16:50:00Z"))).get()
        let dialer = Dialer(service: service, planner: planner, channels: board.lines(1))
        let next = try await dialer.round(now: Self.utc("2026-05-04T17:05:00Z"))
        #expect(dialer.callsInProgress == 0 && next == Self.utc("2026-05-05T06:00:00Z"))
        try await dialer.round(now: Self.utc("2026-05-05T06:00:00Z"))
        #expect(dialer.callsInProgress == 1)
        await board.hangUpAll(dialer)
        _ = keep
    }

    @Test func theDaysMostThenTheNextMorning() async throws {
        let morning = Self.utc("2026-05-04T06:00:00Z")
        let (service, _, keep) = try await Self.campaigns(1, started: morning)
        let clock = TestClock(morning)
        let board = Switchboard(outcome: .busy, clock: { clock.now })
        let dialer = Dialer(service: service, planner: CallPlanner(rules: Self.rules(maxPerDay: 3)), channels: board.lines(1))
        var times: [Date] = []
        var at = morning
        while at < morning + 2 * 86_400 {
            try await dialer.round(now: at)
            if dialer.callsInProgress > 0 { times.append(at) }
            clock.set(at + 30)
            await board.hangUpAll(dialer)
            at += 300
        }
        #expect(times == [morning, morning + 300, morning + 600, morning + 86_400, morning + 86_700, morning + 87_000])
        _ = keep
    }

    @Test func aCampaignEndsAfterItsDays() async throws {
        let t = Self.utc("2026-05-04T07:00:00Z")
        let (service, numbers, keep) = try await Self.campaigns(1, started: t)
        let clock = TestClock(t)
        let board = Switchboard(clock: { clock.now })
        let dialer = Dialer(service: service, planner: CallPlanner(rules: Self.rules()), channels: board.lines(1))
        try await dialer.round(now: t + 30 * 86_400 + 60)
        #expect(dialer.callsInProgress == 0)
        let campaign = try await service.campaigns(of: numbers[0], for: Self.boss)[0]
        #expect(campaign.endReason == .maxDays && campaign.endedAt == t + 30 * 86_400 + 60)
        _ = keep
    }
}
