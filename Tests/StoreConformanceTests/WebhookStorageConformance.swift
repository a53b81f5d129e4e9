import ChangeFeed
import Foundation
import Generator
import Geometry
import ReportModel
import ReportService
import StorePorts
import Testing
import TestSupport
@testable import Webhooks

/// What every ``WebhookStorage`` must do, against a brute force: the deliveries written
/// with each change are exactly the (endpoint, change) pairs of enabled endpoints
/// subscribed to the change's type; taking them is exclusive, even for dispatchers racing;
/// outcomes settle them as the rules say; payloads never change.
@Suite("Store conformance: the webhook outbox")
struct WebhookStorageConformance {
    static let inspector = Caller(accountID: nil, role: .inspector)
    static let supervisor = Caller(accountID: nil, role: .supervisor)

    func register(_ webhooks: WebhookService, _ events: [String], enabled: Bool = true) async throws -> Webhook {
        let webhook = try await webhooks.register(try WebhookDraft(url: "http://127.0.0.1:9/\(events.joined())", events: events, description: nil)).webhook
        guard !enabled else { return webhook }
        return try await webhooks.update(webhook.id, try WebhookPatch(url: nil, events: nil, description: nil, enabled: false))
    }

    /// Files `count` reports and moves the first to `verifying`.
    func write(_ service: ReportService, count: Int, seed: UInt64) async throws -> [Int64] {
        var rng = SplitMix64(state: seed)
        var ids: [Int64] = []
        for _ in 0..<count {
            let c = Coordinate(longitude: 30.4 + 0.2 * rng.unit(), latitude: 50.4 + 0.1 * rng.unit())
            ids.append(try await service.file(Drafts.make(c, using: &rng), by: Self.inspector).report.id)
        }
        _ = try await service.transition(ids[0], to: "verifying", note: nil, duplicateOf: nil, by: Self.supervisor)
        return ids
    }

    /// Every (endpoint, change) pair of the outbox, read through the port.
    static func pairs(_ webhooks: WebhookService) async throws -> Set<[Int64]> {
        var pairs: Set<[Int64]> = []
        for webhook in try await webhooks.webhooks() {
            for delivery in try await webhooks.storage.deliveries(of: webhook.id, state: nil, before: nil, limit: 10_000) {
                pairs.insert([webhook.id, delivery.changeSeq])
            }
        }
        return pairs
    }

    /// A fresh store's reports service and webhook service (and what keeps the store alive).
    func services(_ store: StoreUnderTest) async throws -> (stores: Stores, service: ReportService, webhooks: WebhookService, keep: AnyObject) {
        let (stores, keep) = try await store.open()
        return (stores, try await ReportService(storage: stores.reports), WebhookService(storage: stores.webhooks), keep)
    }

    @Test("each change is queued once for each enabled endpoint subscribed to its type, in the change's transaction", arguments: StoreUnderTest.all)
    func queued(_ store: StoreUnderTest) async throws {
        let (stores, service, webhooks, keep) = try await services(store)
        defer { _ = keep }
        let created = try await register(webhooks, ["report.created"])
        let moved = try await register(webhooks, ["report.status_changed", "report.hidden"])
        _ = try await register(webhooks, ["report.created"], enabled: false)
        _ = try await write(service, count: 4, seed: 1)
        _ = try await service.hide(1, note: "спам", by: Self.supervisor)

        let subscriptions = try await webhooks.webhooks().filter(\.enabled).map { ($0.id, Set($0.events.map(\.action))) }
        let changes = try await stores.reports.changes(after: 0, limit: 1_000).rows
        let expected = Set(changes.flatMap { change in subscriptions.filter { $0.1.contains(change.action) }.map { [$0.0, change.seq] } })
        #expect(try await Self.pairs(webhooks) == expected)
        #expect(expected.filter { $0[0] == created.id }.count == 4 && expected.filter { $0[0] == moved.id }.count == 2)
    }

    @Test("taking is exclusive and leased; 2xx delivers, 5xx retries on the schedule, 410 gives up and disables; a payload is written once", arguments: StoreUnderTest.all)
    func settle(_ under: StoreUnderTest) async throws {
        let (stores, keep) = try await under.open()
        defer { _ = keep }
        let service = try await ReportService(storage: stores.reports)
        let store = stores.webhooks
        let dispatcher = WebhookDispatcher(storage: store, feed: ChangeFeed(storage: stores.reports))
        let webhook = try await register(WebhookService(storage: store), ["report.created"])
        let ids = try await write(service, count: 4, seed: 2)
        let now = Date()
        let due = try await store.due(now: now, limit: 10)
        #expect(due.count == 4 && due.allSatisfy { $0.payload == nil && $0.attempts == 0 })
        let payloads = try await dispatcher.payloads(of: Set(due.map(\.changeSeq)))
        let leaseEnd = now + 15
        let taken = try await store.claim(due, payloads: payloads, until: leaseEnd)
        #expect(taken.count == 4 && taken.allSatisfy { $0.payload == payloads[$0.changeSeq] })
        #expect(try await store.claim(due, payloads: payloads, until: leaseEnd).isEmpty, "another dispatcher gets none of them")
        #expect(try await store.due(now: now, limit: 10).isEmpty, "leased")

        let body = try JSONSerialization.jsonObject(with: taken[0].payload!) as! [String: Any]
        let data = try #require(body["data"] as? [String: Any])
        #expect(body["type"] as? String == "report.created" && data["seq"] as? Int == Int(taken[0].changeSeq) && ids.contains(Int64(data["id"] as! Int)))

        // The report changes after the payload was written: a retry still sends the first bytes.
        _ = try await service.edit(ids[0], by: Self.supervisor, ifMatch: nil) { current in
            var draft = ReportDraft(current)
            draft.comment = "змінено"
            return draft
        }
        let retries = RetrySchedule(first: .seconds(5))
        let outcomes = [204, 500, 410].enumerated().map { i, status in
            AttemptOutcome(taken[i], at: now, status: status, error: nil, milliseconds: 3, retries: retries)
        }
        func current() async throws -> [Int64: Delivery] {
            Dictionary(uniqueKeysWithValues: try await store.deliveries(of: webhook.id, state: nil, before: nil, limit: 10).map { ($0.id, $0) })
        }
        try await store.record(Array(outcomes[0..<2]), now: now)
        try await store.record(Array(outcomes[0..<2]), now: now)  // a second recording of the same attempts changes nothing
        let retried = try #require(try await current()[taken[1].id])
        #expect(retried.state == .pending && retried.attemptCount == 1 && retried.lastStatus == 500 && retried.attempts.count == 1)
        let wait = try #require(retried.nextAt).timeIntervalSince(now)
        #expect(wait >= 4 && wait <= 6.01, "the first retry comes 5 s ± 20% later, not \(wait)")
        try await store.record([outcomes[2]], now: now)
        let deliveries = try await current()
        #expect(deliveries[taken[0].id]?.state == .delivered && deliveries[taken[0].id]?.attempts.map(\.status) == [204])
        #expect(deliveries[taken[2].id]?.state == .failed && deliveries[taken[2].id]?.finishedAt != nil)
        let disabled = try #require(try await store.webhook(id: webhook.id))
        #expect(!disabled.enabled && disabled.disabledReason?.contains("410") == true)
        #expect(deliveries[taken[3].id]?.nextAt?.milliseconds == leaseEnd.milliseconds, "an attempt in flight keeps its lease")
        #expect(retried.nextAt == (try await current())[taken[1].id]?.nextAt, "a retry keeps its time")
        // Enabled and disabled again while taken[3]'s attempt runs: it is not sent a second time.
        _ = try await store.updateWebhook(webhook.id, try WebhookPatch(url: nil, events: nil, description: nil, enabled: true), now: now)
        #expect(try await store.due(now: now + 10, limit: 10).map(\.id) == [taken[1].id], "leased until \(leaseEnd)")
        _ = try await store.updateWebhook(webhook.id, try WebhookPatch(url: nil, events: nil, description: nil, enabled: false), now: now)
        try await store.record([AttemptOutcome(taken[3], at: now, status: 503, error: nil, milliseconds: 3, retries: retries)], now: now)
        let inFlight = try #require(try await current()[taken[3].id])
        #expect(inFlight.attemptCount == 1 && inFlight.nextAt == nil, "an attempt in flight when the endpoint was disabled is not retried")
        #expect(try await store.due(now: now + 86_400 * 10, limit: 10).isEmpty, "nothing of a disabled endpoint is due")
        #expect(try await store.nextDue(excluding: []) == nil, "nor comes due: the dispatcher sleeps (a retry's kept time had woken it every 50 ms)")

        _ = try await store.updateWebhook(webhook.id, try WebhookPatch(url: nil, events: nil, description: nil, enabled: true), now: now)
        let again = try await store.due(now: now + 10, limit: 10)
        #expect(Set(again.map(\.id)) == [taken[1].id, taken[3].id])
        let retaken = try await store.claim(again, payloads: try dispatcher.payloads(of: Set(again.map(\.changeSeq))), until: now + 30)
        #expect(retaken.map(\.payload) == again.map { d in taken.first { $0.id == d.id }!.payload }, "the payload written first is the one sent")
    }

    @Test("due deliveries come soonest first, at most a share of each endpoint, none of an endpoint left out or disabled: as a brute force over every endpoint's deliveries picks them", arguments: StoreUnderTest.all)
    func duePerEndpoint(_ under: StoreUnderTest) async throws {
        let (stores, service, webhooks, keep) = try await services(under)
        defer { _ = keep }
        let endpoints = [
            try await register(webhooks, ["report.created"]), try await register(webhooks, ["report.created", "report.status_changed"]),
            try await register(webhooks, ["report.status_changed"]), try await register(webhooks, ["report.created"]),
        ]
        _ = try await write(service, count: 12, seed: 4)
        // Disabled with deliveries of its own waiting.
        _ = try await webhooks.update(endpoints[3].id, try WebhookPatch(url: nil, events: nil, description: nil, enabled: false))
        let now = Date() + 1
        var pending: [(endpoint: Int64, id: Int64, at: Date)] = []
        for endpoint in endpoints.dropLast() {
            for delivery in try await stores.webhooks.deliveries(of: endpoint.id, state: nil, before: nil, limit: 1_000) where delivery.state == .pending {
                pending.append((endpoint.id, delivery.id, try #require(delivery.nextAt)))
            }
        }
        #expect(pending.count == 26)
        for (limit, share, excluding) in [(100, 100, Set<Int64>()), (100, 3, []), (4, 3, []), (100, 2, [endpoints[1].id]), (100, 5, Set(endpoints.map(\.id)))] {
            let expected = Dictionary(grouping: pending, by: \.endpoint).filter { !excluding.contains($0.key) }
                .flatMap { $0.value.sorted { ($0.at.milliseconds, $0.id) < ($1.at.milliseconds, $1.id) }.prefix(share) }
                .sorted { ($0.at.milliseconds, $0.id) < ($1.at.milliseconds, $1.id) }.prefix(limit).map(\.id)
            let due = try await stores.webhooks.due(now: now, limit: limit, perEndpoint: share, excluding: excluding)
            #expect(due.map(\.id) == expected, "limit \(limit), share \(share), excluding \(excluding)")
            let soonest = pending.filter { !excluding.contains($0.endpoint) }.map(\.at.milliseconds).min()
            #expect(try await stores.webhooks.nextDue(excluding: excluding)?.milliseconds == soonest, "excluding \(excluding)")
        }
    }

    @Test("two dispatchers claiming the same due deliveries at once: each delivery is taken by exactly one", arguments: StoreUnderTest.all)
    func racingClaims(_ under: StoreUnderTest) async throws {
        let (stores, keep) = try await under.open()
        defer { _ = keep }
        let service = try await ReportService(storage: stores.reports)
        let dispatcher = WebhookDispatcher(storage: stores.webhooks, feed: ChangeFeed(storage: stores.reports))
        _ = try await register(WebhookService(storage: stores.webhooks), ["report.created"])
        _ = try await write(service, count: 40, seed: 3)
        let now = Date()
        let due = try await stores.webhooks.due(now: now, limit: 100)
        let payloads = try await dispatcher.payloads(of: Set(due.map(\.changeSeq)))
        let taken = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for _ in 0..<2 {
                group.addTask { try await stores.webhooks.claim(due, payloads: payloads, until: now + 30).map(\.id) }
            }
            return try await group.reduce(into: [[Int64]]()) { $0.append($1) }
        }
        #expect(due.count == 40)
        #expect(Set(taken[0]).isDisjoint(with: taken[1]), "no delivery taken twice")
        #expect(Set(taken[0] + taken[1]) == Set(due.map(\.id)), "every delivery taken once")
    }
}
