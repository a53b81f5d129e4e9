import ChangeFeed
import Foundation
import Generator
import Geometry
import ReportModel
import ReportService
import SQLiteStore
import StorePorts
import Synchronization
import Testing
import TestSupport
@testable import Webhooks

/// A store that notes what the dispatcher asks of it: each `nextDue`'s endpoints left out,
/// and how many deliveries its claims took.
final class WatchedWebhookStorage: WebhookStorage {
    let inner: any WebhookStorage
    let seen = Mutex<(nextDue: [Set<Int64>], claimed: Int)>(([], 0))

    init(_ inner: any WebhookStorage) { self.inner = inner }

    func registerWebhook(_ draft: WebhookDraft, key: Data, limit: Int, now: Date) async throws -> Webhook {
        try await inner.registerWebhook(draft, key: key, limit: limit, now: now)
    }
    func webhook(id: Int64) async throws -> Webhook? { try await inner.webhook(id: id) }
    func webhooks() async throws -> [Webhook] { try await inner.webhooks() }
    func updateWebhook(_ id: Int64, _ patch: WebhookPatch, now: Date) async throws -> Webhook { try await inner.updateWebhook(id, patch, now: now) }
    func deleteWebhook(_ id: Int64) async throws { try await inner.deleteWebhook(id) }
    func due(now: Date, limit: Int, perEndpoint: Int, excluding: Set<Int64>) async throws -> [DueDelivery] {
        try await inner.due(now: now, limit: limit, perEndpoint: perEndpoint, excluding: excluding)
    }
    func claim(_ deliveries: [DueDelivery], payloads: [Int64: Data], until leaseEnd: Date) async throws -> [DueDelivery] {
        let claimed = try await inner.claim(deliveries, payloads: payloads, until: leaseEnd)
        seen.withLock { $0.claimed += claimed.count }
        return claimed
    }
    func record(_ outcomes: [AttemptOutcome], now: Date) async throws { try await inner.record(outcomes, now: now) }
    func backlog() async throws -> Int { try await inner.backlog() }
    func anyEnabled() async throws -> Bool { try await inner.anyEnabled() }
    func nextDue(excluding: Set<Int64>) async throws -> Date? {
        seen.withLock { $0.nextDue.append(excluding) }
        return try await inner.nextDue(excluding: excluding)
    }
    func forgetDeliveries(finishedBefore cutoff: Date) async throws -> Int { try await inner.forgetDeliveries(finishedBefore: cutoff) }
    func deliveries(of webhook: Int64, state: DeliveryState?, before: Int64?, limit: Int) async throws -> [Delivery] {
        try await inner.deliveries(of: webhook, state: state, before: before, limit: limit)
    }
}

/// A loopback port that takes connections (the kernel's backlog) and never answers.
final class SilentListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && listen(descriptor, 64) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            close(descriptor)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

@Suite("The webhook dispatcher's wakes")
struct DispatcherWakeTests {
    @Test("while an endpoint's host has all the attempts in flight it may (one that never answers), the dispatcher's look for the next due delivery leaves that endpoint out: its waiting deliveries do not wake it")
    func fullHostLeftOut() async throws {
        let directory = try TemporaryDirectory()
        let stores = try Stores.sqlite(path: directory.path("test.sqlite"))
        let watched = WatchedWebhookStorage(stores.webhooks)
        let service = try await ReportService(storage: stores.reports)
        let listener = try SilentListener()
        let webhook = try await WebhookService(storage: watched).register(
            try WebhookDraft(url: "http://127.0.0.1:\(listener.port)/hook", events: ["report.created"], description: nil)).webhook
        var rng = SplitMix64(state: 7)
        for _ in 0..<6 {
            _ = try await service.file(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng), by: Caller(accountID: nil, role: .inspector))
        }
        var settings = WebhookSettings()
        settings.maxInFlightPerHost = 2
        settings.requestTimeout = .seconds(600)  // past any wait of the test
        settings.pollInterval = .milliseconds(200)
        let dispatcher = WebhookDispatcher(storage: watched, feed: ChangeFeed(storage: stores.reports), settings: settings)
        let running = Task { try await dispatcher.run() }
        defer { running.cancel() }
        try await eventually("two claims", every: .milliseconds(20)) { watched.seen.withLock { $0.claimed == 2 } }
        // Two looks after the claims (the first may have begun before they were counted in flight).
        let looked = watched.seen.withLock { $0.nextDue.count }
        try await eventually("two more looks for the next due", every: .milliseconds(20)) { watched.seen.withLock { $0.nextDue.count >= looked + 2 } }
        let seen = watched.seen.withLock { $0 }
        #expect(seen.claimed == 2, "the host's cap: four deliveries wait")
        #expect(seen.nextDue.last == [webhook.id], "the full host's endpoint left out")
        #expect(try await stores.webhooks.nextDue(excluding: []) != nil, "its deliveries are due all the same")
        withExtendedLifetime(listener) {}
    }
}
