import AsyncHTTPClient
import ChangeFeed
import Foundation
import Interchange
import Logging
import Offloading
import ReportModel
import ServiceLifecycle
import StorePorts
import Synchronization

/// How the dispatcher sends.
public struct WebhookSettings: Sendable {
    public var retries = RetrySchedule()
    /// How long one attempt may take, connecting included.
    public var requestTimeout: Duration = .seconds(10)
    /// How often the outbox is read when nothing wakes the dispatcher (another process's
    /// writes reach it so).
    public var pollInterval: Duration = .seconds(1)
    /// The most attempts in flight at once.
    public var maxInFlight = 128
    /// The most attempts in flight to one host and port (its endpoints share its
    /// connections): one that hangs until the timeout holds this many, and
    /// the others share the rest. As many as connections to one host: fewer cost a busy
    /// endpoint's rate (16 halved it), more let fewer endpoints hang before the rest wait
    /// (BENCHMARKS.md, the webhook section).
    public var maxInFlightPerHost = 32
    /// The most connections to one host.
    public var connectionsPerHost = 32
    /// Finished deliveries are forgotten after this long.
    public var retention: Duration = .seconds(30 * 86_400)

    public init() {}
}

/// Sends the outbox: deliveries due are taken (payload written first, so every retry
/// sends the same bytes), posted signed to their endpoints with at most
/// ``WebhookSettings/maxInFlight`` in flight, at most
/// ``WebhookSettings/maxInFlightPerHost`` of them to one host and port, and their
/// outcome recorded in batches.
///
/// Deliveries are at least once: a dispatcher that dies with attempts in flight leaves
/// them taken only until their lease ends (the request timeout and a margin), when any
/// dispatcher on the database sends them again.
public final class WebhookDispatcher: Service, Sendable {
    let storage: any WebhookStorage
    let feed: ChangeFeed
    let settings: WebhookSettings
    let logger: Logger
    private let wakes: AsyncStream<Void>
    private let waker: AsyncStream<Void>.Continuation
    private let state = Mutex(State())
    /// Whether any endpoint is enabled (read every poll): without one, a write's nudge
    /// costs nothing, not a read of the outbox.
    private let active = Atomic(false)

    private struct State {
        var inFlight = InFlight()
        var outcomes: [AttemptOutcome] = []
    }

    public init(
        storage: any WebhookStorage, feed: ChangeFeed, settings: WebhookSettings = WebhookSettings(), logger: Logger = Logger(label: "posterwatch.webhooks")
    ) {
        self.storage = storage
        self.feed = feed
        self.settings = settings
        self.logger = logger
        (wakes, waker) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Tells the dispatcher the outbox may have grown (a write of this process).
    public func nudge() {
        if active.load(ordering: .relaxed) { waker.yield() }
    }

    public func run() async throws {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(settings.requestTimeout.seconds * 1000)), read: .milliseconds(Int64(settings.requestTimeout.seconds * 1000))))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: settings.connectionsPerHost)
        // A refused connection is a failed attempt at once (retried on the schedule), not
        // a slot held for the whole timeout while the pool keeps trying.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let ticker = Task { await self.tick() }
        await withDiscardingTaskGroup { group in
            // A graceful shutdown ends the wakes, so the loop ends, and the attempts in
            // flight finish (within the request timeout) before the outcomes are recorded.
            await withGracefulShutdownHandler {
                for await _ in self.wakes {
                    for delivery in await self.takeDue() {
                        group.addTask {
                            let outcome = await self.send(delivery, with: client)
                            self.state.withLock {
                                $0.inFlight.remove(delivery)
                                $0.outcomes.append(outcome)
                            }
                            self.waker.yield()  // to record it, whatever the endpoints now are
                        }
                    }
                }
            } onGracefulShutdown: {
                self.waker.finish()
            }
            ticker.cancel()
        }
        await recordOutcomes()
        try? await client.shutdown()
    }

    /// Wakes the dispatcher when the next delivery is due, at least every poll interval,
    /// and forgets old finished deliveries now and then.
    private func tick() async {
        var lastPrune = ContinuousClock.now - .seconds(3600)
        while !Task.isCancelled {
            active.store((try? await storage.anyEnabled()) ?? true, ordering: .relaxed)
            // With every slot busy, or only endpoints whose host is at its cap due, the next
            // answer wakes the loop: their deliveries are not looked at meanwhile.
            let (room, full) = state.withLock { (settings.maxInFlight - $0.inFlight.count, $0.inFlight.full(cap: settings.maxInFlightPerHost)) }
            let next = room > 0 ? ((try? await storage.nextDue(excluding: full)) ?? nil) : nil
            // Due already (the outbox unreadable, or claimed by another dispatcher first):
            // this only checks again a little later, never spins.
            let untilNext = next.map { Duration.seconds(max($0.timeIntervalSinceNow, 0.05)) } ?? settings.pollInterval
            try? await Task.sleep(for: min(untilNext, settings.pollInterval))
            nudge()
            if ContinuousClock.now - lastPrune > .seconds(3600) {
                lastPrune = .now
                let cutoff = Date() - settings.retention.seconds
                _ = try? await storage.forgetDeliveries(finishedBefore: cutoff)
            }
        }
    }

    /// Records the outcomes gathered so far, then takes as many due deliveries as there
    /// is room in flight for.
    private func takeDue() async -> [DueDelivery] {
        await recordOutcomes()
        let inFlight = state.withLock { $0.inFlight }
        let room = settings.maxInFlight - inFlight.count
        guard room > 0 else { return [] }
        do {
            let leaseEnd = Date() + settings.requestTimeout.seconds + 5
            let claimed = try await claim(limit: room, within: inFlight, until: leaseEnd)
            state.withLock { for delivery in claimed { $0.inFlight.add(delivery) } }
            return claimed
        } catch {
            logger.error("webhook outbox unreadable", metadata: ["error": "\(error)"])
            return []
        }
    }

    private func claim(limit: Int, within inFlight: InFlight, until leaseEnd: Date) async throws -> [DueDelivery] {
        let now = Date()
        let cap = settings.maxInFlightPerHost
        // Read past `limit` by what is in flight: as many as that may be turned away by
        // their origin's cap, so the rest of the room still fills.
        let read = try await storage.due(now: now, limit: limit + inFlight.count, perEndpoint: cap, excluding: inFlight.full(cap: cap))
        let due = Array(inFlight.admit(read, cap: cap).prefix(limit))
        guard !due.isEmpty else { return [] }
        let unwritten = Set(due.filter { $0.payload == nil }.map(\.changeSeq))
        let payloads = try await self.payloads(of: unwritten)
        // A change forgotten (retention) before its first attempt has nothing to send.
        let lost = due.filter { $0.payload == nil && payloads[$0.changeSeq] == nil }
        try await storage.record(lost.map { AttemptOutcome(giveUp: $0, at: now, error: "change \($0.changeSeq) is no longer kept") }, now: now)
        return try await storage.claim(due.filter { $0.payload != nil || payloads[$0.changeSeq] != nil }, payloads: payloads, until: leaseEnd)
    }

    /// The Standard Webhooks payload of each change: `{type, timestamp, data}`, `data`
    /// being the change as staff see it in the feed.
    func payloads(of seqs: Set<Int64>) async throws -> [Int64: Data] {
        let entries = try await feed.entries(try await feed.changes(seqs: Array(seqs)), staff: true)
        var payloads: [Int64: Data] = [:]
        for entry in entries { payloads[entry.seq] = Data(try ChangeJSON.webhookPayload(entry)) }
        return payloads
    }

    private func recordOutcomes() async {
        let outcomes = state.withLock { state in
            defer { state.outcomes.removeAll(keepingCapacity: true) }
            return state.outcomes
        }
        guard !outcomes.isEmpty else { return }
        do {
            try await storage.record(outcomes, now: Date())
        } catch {
            // Their leases end and they are sent again: at least once.
            logger.error("webhook outcomes not recorded", metadata: ["error": "\(error)", "count": "\(outcomes.count)"])
        }
    }

    /// One attempt: the payload posted with its signature headers; redirects are not
    /// followed and the answer's body is read no further than 64 KiB.
    func send(_ delivery: DueDelivery, with client: HTTPClient) async -> AttemptOutcome {
        let at = Date()
        let started = ContinuousClock.now
        let payload = delivery.payload ?? Data()
        var request = HTTPClientRequest(url: delivery.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "PosterWatch-Webhooks/1")
        let signature = WebhookSignature(key: delivery.key)
        for header in signature.headers(id: "msg_\(delivery.changeSeq)", timestamp: Int64(at.timeIntervalSince1970), body: payload) {
            request.headers.add(name: header.name, value: header.value)
        }
        request.body = .bytes(payload)
        var status: Int?
        var failure: String?
        do {
            status = try await Self.post(request, with: client, within: settings.requestTimeout)
        } catch {
            failure = String(String(describing: error).prefix(300))
        }
        let elapsed = ContinuousClock.now - started
        return AttemptOutcome(
            delivery, at: at, status: status, error: failure, milliseconds: Int64(elapsed.seconds * 1000), retries: settings.retries)
    }
}

extension WebhookDispatcher {
    /// The attempt took longer than the request timeout.
    struct TimedOut: Error, CustomStringConvertible {
        var description: String { "no complete answer within the request timeout" }
    }

    /// Posts `request` and reads the answer (its body no further than 64 KiB), all of it
    /// within `limit`: the client's own deadline ends at the answer's head, and an
    /// endpoint that then trickles its body must not hold the attempt past its lease.
    static func post(_ request: HTTPClientRequest, with client: HTTPClient, within limit: Duration) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                let response = try await client.execute(request, timeout: .milliseconds(Int64(limit.seconds * 1000)))
                var read = 0
                for try await part in response.body {
                    read += part.readableBytes
                    if read > 65_536 { break }  // the rest is dropped with the connection
                }
                return Int(response.status.code)
            }
            group.addTask {
                try await Task.sleep(for: limit)
                throw TimedOut()
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}

extension AttemptOutcome {
    /// How an attempt that got `status` (or failed with `error`) leaves its delivery: a 2xx
    /// delivers it, a 410 gives it up (and disables the endpoint), anything else retries
    /// it on the schedule until its attempts run out.
    init(_ delivery: DueDelivery, at: Date, status: Int?, error: String?, milliseconds: Int64, retries: RetrySchedule) {
        let attempt = delivery.attempts + 1
        var state = DeliveryState.failed
        var retryAt: Date?
        if let status, (200..<300).contains(status) {
            state = .delivered
        } else if status != 410, let wait = retries.wait(after: attempt, draw: Double.random(in: 0..<1)) {
            state = .pending
            retryAt = at + wait.seconds
        }
        self.init(
            deliveryID: delivery.id, webhookID: delivery.webhookID, attempt: attempt, at: at, status: status, error: error,
            milliseconds: milliseconds, state: state, retryAt: retryAt)
    }

    /// A delivery given up without an attempt.
    init(giveUp delivery: DueDelivery, at: Date, error: String) {
        self.init(
            deliveryID: delivery.id, webhookID: delivery.webhookID, attempt: delivery.attempts + 1, at: at, status: nil, error: error,
            milliseconds: 0, state: .failed, retryAt: nil)
    }
}

/// The attempts in flight, in all and by where they go: endpoints on one host and port
/// share its connections (``WebhookSettings/connectionsPerHost``), so they share one cap.
struct InFlight: Sendable {
    private(set) var count = 0
    private var byOrigin: [String: Int] = [:]
    /// Each endpoint with attempts in flight: how many, and its origin.
    private var endpoints: [Int64: (count: Int, origin: String)] = [:]

    /// Where an endpoint's requests go: its scheme, host and port (the HTTP client's pool key).
    static func origin(of url: String) -> String {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), let host = parts.host?.lowercased() else { return url }
        return "\(scheme)://\(host):\(parts.port ?? (scheme == "https" ? 443 : 80))"
    }

    /// The endpoints in flight whose origin has `cap` attempts in flight.
    func full(cap: Int) -> Set<Int64> { Set(endpoints.filter { byOrigin[$0.value.origin, default: 0] >= cap }.keys) }

    /// Of `due`, soonest first, those that keep each origin within `cap` in flight.
    func admit(_ due: [DueDelivery], cap: Int) -> [DueDelivery] {
        var taken = byOrigin
        return due.filter { delivery in
            let origin = Self.origin(of: delivery.url)
            guard taken[origin, default: 0] < cap else { return false }
            taken[origin, default: 0] += 1
            return true
        }
    }

    mutating func add(_ delivery: DueDelivery) {
        let origin = Self.origin(of: delivery.url)
        count += 1
        byOrigin[origin, default: 0] += 1
        endpoints[delivery.webhookID, default: (0, origin)].count += 1
    }

    mutating func remove(_ delivery: DueDelivery) {
        let origin = Self.origin(of: delivery.url)
        count -= 1
        byOrigin[origin, default: 0] -= 1
        if byOrigin[origin] == 0 { byOrigin[origin] = nil }
        endpoints[delivery.webhookID, default: (0, origin)].count -= 1
        if endpoints[delivery.webhookID]?.count == 0 { endpoints[delivery.webhookID] = nil }
    }
}
