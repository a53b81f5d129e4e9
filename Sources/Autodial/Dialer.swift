import Foundation
import Logging
import ReportModel
import ReportService
import Synchronization

/// Places one call and waits for its end. A failure is a result, never a throw: the call
/// was claimed and must be finished either way.
public protocol CallChannel: Sendable {
    func call(_ number: String) async -> CallResult
}

/// The campaign scheduler, part of `serve`: each round it reads the running campaigns,
/// asks the planner which numbers are due, claims a call for each on a free channel (the
/// store checks the rules again against every replica's calls), dials, and writes how the
/// call ended. Nothing is kept only in memory: a restart reads the same rows and finds the
/// same due calls, and a call claimed and never finished is marked interrupted when its
/// lease ends, never placed again.
///
/// The clock is injected, and ``round(now:)`` is one step, so that tests drive days and
/// restarts without waiting.
public final class Dialer: Sendable {
    public let planner: CallPlanner
    private let service: ReportService
    private let channels: [any CallChannel]
    private let now: @Sendable () -> Date
    private let logger: Logger
    private let onCall: @Sendable (CallAttempt) -> Void
    /// Calls whose lease ended unfinished (a dialer died mid-call), as this one marks them.
    private let onInterrupted: @Sendable (Int) -> Void
    /// The channels now placing a call, by index.
    private let busy = Mutex<Set<Int>>([])
    private let calls = Mutex<[Int: Task<Void, Never>]>([:])
    /// A call's end, which wakes the loop to use its channel.
    private let ended = Mailbox<Int>()

    public init(
        service: ReportService, planner: CallPlanner, channels: [any CallChannel], now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "posterwatch.autodial"), onCall: @escaping @Sendable (CallAttempt) -> Void = { _ in },
        onInterrupted: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        (self.service, self.planner, self.channels, self.now, self.logger, self.onCall) = (service, planner, channels, now, logger, onCall)
        self.onInterrupted = onInterrupted
    }

    /// Rounds until cancelled: at once after a call ends, otherwise when the next call is
    /// due, and at least every `poll` seconds (a campaign another replica started).
    public func run(poll: TimeInterval = 1) async {
        while !Task.isCancelled {
            var wait = poll
            do {
                // The free channels first, then the time: each call a channel made is over
                // (and recorded) before the instant its next call is claimed at.
                let free = freeChannels()
                if let next = try await round(now: now(), free: free) { wait = min(poll, next.timeIntervalSince(now())) }
            } catch {
                logger.error("autodial round failed", metadata: ["error": "\(error)"])
            }
            _ = await ended.next(until: Date() + max(wait, 0.02))
            ended.drain()
        }
        await hangUpCalls()
    }

    /// One round at `now`: expires lapsed claims, ends campaigns past their days, and
    /// starts the due calls on free channels. Returns when the next call is due.
    @discardableResult
    public func round(now: Date) async throws -> Date? {
        try await round(now: now, free: freeChannels())
    }

    private func freeChannels() -> [Int] {
        busy.withLock { taken in (0..<channels.count).filter { !taken.contains($0) } }
    }

    private func round(now: Date, free: [Int]) async throws -> Date? {
        let lapsed = try await service.expireCalls(now: now)
        if lapsed > 0 { onInterrupted(lapsed) }
        var campaigns = try await service.dialerCampaigns(callsSince: planner.recentSince(now))
        for campaign in campaigns where planner.expiry(of: campaign.campaign) <= now {
            try await service.endExpiredCampaign(campaign.campaign, now: now)
            logger.info("autodial campaign ended", metadata: ["number": "+\(campaign.campaign.number)", "reason": "max_days"])
        }
        campaigns.removeAll { planner.expiry(of: $0.campaign) <= now }
        var freeChannels = free[...]
        for due in planner.due(campaigns, now: now, free: free.count) {
            guard let channel = freeChannels.first else { break }
            switch try await service.claimCall(planner.claim(due.campaign, now: now)) {
            case .success(let attempt):
                freeChannels.removeFirst()
                if let i = campaigns.firstIndex(where: { $0.campaign.id == due.campaign.id }) { campaigns[i].recentCalls.append(attempt.placedAt) }
                start(attempt, on: channel)
            case .failure(.channelsBusy):
                return now.addingTimeInterval(1)  // other replicas hold the trunk
            case .failure:
                continue  // another replica called it, or it ended: the next round reads it anew
            }
        }
        // Calls overdue now wait for a channel, whose call's end wakes the loop; at night,
        // for the morning.
        guard let next = planner.nextLook(campaigns, after: now) else { return nil }
        return next <= now ? now.addingTimeInterval(1) : next
    }

    private func start(_ attempt: CallAttempt, on index: Int) {
        busy.withLock { _ = $0.insert(index) }
        let task = Task { [self] in
            let result = await channels[index].call(attempt.number)
            // Recorded in a task of its own: this one is cancelled to hang up as the server stops.
            let recorded = Task { [service] in try await service.finishCall(attempt.id, result) }
            do {
                if let finished = try await recorded.value { onCall(finished) }
            } catch {
                logger.error("autodial call not recorded", metadata: ["call": "\(attempt.id)", "error": "\(error)"])
            }
            logger.info(
                "autodial call", metadata: ["number": "+\(attempt.number)", "outcome": "\(result.outcome.rawValue)", "sip_code": "\(result.sipCode.map(String.init) ?? "-")"])
            busy.withLock { _ = $0.remove(index) }
            ended.put(index)
        }
        calls.withLock { $0[index] = task }
    }

    /// The calls in progress now, by channel.
    public var callsInProgress: Int { busy.withLock(\.count) }

    /// Waits for the calls in progress to end and be recorded.
    public func finishCalls() async {
        for task in calls.withLock({ Array($0.values) }) { await task.value }
    }

    /// Hangs up the calls in progress (the server is stopping) and waits until each is
    /// recorded: a few seconds, where waiting for them to end took up to a ring and a
    /// message, past what a service manager gives a stop.
    public func hangUpCalls() async {
        let running = calls.withLock { Array($0.values) }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}
