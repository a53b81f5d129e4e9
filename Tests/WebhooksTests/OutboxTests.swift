import ChangeFeed
import Foundation
import Generator
import Geometry
import GRDB
import ReportModel
import ReportService
import SQLiteStore
import StorePorts
import Testing
import TestSupport
@testable import Webhooks

/// The outbox against a brute force: the deliveries the trigger writes are exactly the
/// (endpoint, change) pairs of enabled endpoints subscribed to the change's type; taking
/// them is exclusive; outcomes settle them as the rules say; payloads never change.
@Suite("The webhook outbox")
struct OutboxTests {
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

    static func pairs(_ store: SQLiteReports) throws -> Set<[Int64]> {
        Set(try store.pool.read { db in try Row.fetchAll(db, sql: "SELECT webhook_id, change_seq FROM webhook_delivery") }.map { [$0[0], $0[1]] })
    }

    @Test("each change is queued once for each enabled endpoint subscribed to its type, in the change's transaction")
    func queued() async throws {
        let temporary = try TemporaryStore()
        let service = try await ReportService(storage: temporary.store)
        let webhooks = WebhookService(storage: SQLiteWebhooks(temporary.store))
        let created = try await register(webhooks, ["report.created"])
        let moved = try await register(webhooks, ["report.status_changed", "report.hidden"])
        _ = try await register(webhooks, ["report.created"], enabled: false)
        _ = try await write(service, count: 4, seed: 1)
        _ = try await service.hide(1, note: "спам", by: Self.supervisor)

        let subscriptions = try await webhooks.webhooks().filter(\.enabled).map { ($0.id, Set($0.events.map(\.action))) }
        let changes = try temporary.store.changes(after: 0, limit: 1_000).rows
        let expected = Set(changes.flatMap { change in subscriptions.filter { $0.1.contains(change.action) }.map { [$0.0, change.seq] } })
        #expect(try Self.pairs(temporary.store) == expected)
        #expect(expected.filter { $0[0] == created.id }.count == 4 && expected.filter { $0[0] == moved.id }.count == 2)
    }

    @Test("taking is exclusive and leased; 2xx delivers, 5xx retries on the schedule, 410 gives up and disables; a payload is written once")
    func settle() async throws {
        let temporary = try TemporaryStore()
        let service = try await ReportService(storage: temporary.store)
        let store = SQLiteWebhooks(temporary.store)
        let dispatcher = WebhookDispatcher(storage: store, feed: ChangeFeed(storage: temporary.store))
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
        #expect(deliveries[taken[3].id]?.nextAt == nil, "a disabled endpoint's deliveries wait without a time")
        try await store.record([AttemptOutcome(taken[3], at: now, status: 503, error: nil, milliseconds: 3, retries: retries)], now: now)
        let inFlight = try #require(try await current()[taken[3].id])
        #expect(inFlight.attemptCount == 1 && inFlight.nextAt == nil, "an attempt in flight when the endpoint was disabled is not retried")
        #expect(try await store.due(now: now + 86_400 * 10, limit: 10).isEmpty, "nothing of a disabled endpoint is due")

        _ = try await store.updateWebhook(webhook.id, try WebhookPatch(url: nil, events: nil, description: nil, enabled: true), now: now)
        let again = try await store.due(now: now + 10, limit: 10)
        #expect(Set(again.map(\.id)) == [taken[1].id, taken[3].id])
        let retaken = try await store.claim(again, payloads: try dispatcher.payloads(of: Set(again.map(\.changeSeq))), until: now + 30)
        #expect(retaken.map(\.payload) == again.map { d in taken.first { $0.id == d.id }!.payload }, "the payload written first is the one sent")
    }

    @Test("the retry schedule doubles from the first wait to the longest, jittered within ±20%, and ends after the last attempt")
    func schedule() {
        let schedule = RetrySchedule()
        for attempts in 1...schedule.maxAttempts {
            let nominal = min(5 * pow(2, Double(attempts - 1)), 86_400)
            #expect(schedule.nominal(after: attempts) == .seconds(nominal))
            for draw in [0, 0.5, 0.999_999] {
                let wait = schedule.wait(after: attempts, draw: draw)
                if attempts == schedule.maxAttempts {
                    #expect(wait == nil)
                } else {
                    let seconds = try! #require(wait).seconds
                    #expect(seconds >= nominal * 0.8 - 1e-9 && seconds <= min(nominal * 1.2, 86_400) + 1e-9)
                }
            }
        }
        #expect(schedule.nominal(after: 1) == .seconds(5) && schedule.nominal(after: 40) == .seconds(86_400))
    }
}
