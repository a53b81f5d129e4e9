import ChangeFeed
import Dispatch
import Foundation
import GRDB
import Hummingbird
import ReportModel
import ReportService
import SQLiteStore
import Synchronization
import Webhooks

/// Webhook dispatch to a local receiver (an HTTP server of this process answering 204):
/// deliveries queued by filings, then sent by one dispatcher from the outbox until all
/// are delivered, their outcomes recorded. Both sides share the machine's cores.
struct WebhookBench {
    let deliveries = 20_000

    struct Result {
        var seconds: Double
        var delivered: Int
        var received: Int
    }

    /// Queues `deliveries` on a database of its own in `work`, then times their dispatch
    /// with at most `perEndpoint` attempts in flight to the one endpoint.
    func run(work: String, port: Int, perEndpoint: Int) async throws -> Result {
        let path = "\(work)/webhooks.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let store = try SQLiteReports(path: path)
        let service = try await ReportService(storage: store)
        let webhooks = WebhookService(storage: SQLiteWebhooks(store))
        let webhook = try await webhooks.register(
            try WebhookDraft(url: "http://127.0.0.1:\(port)/hook", events: ["report.created"], description: "bench")).webhook
        let drafts = Bench.drafts(deliveries, seed: 93, reference: store.reference)
        let filer = Caller(accountID: nil, role: .inspector)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<64 {
                group.addTask {
                    for k in stride(from: lane, to: drafts.count, by: 64) { _ = try await service.file(drafts[k], by: filer) }
                }
            }
            try await group.waitForAll()
        }

        let received = Counter()
        let router = Router()
        router.post("/hook") { _, _ in
            received.add()
            return Response(status: .noContent)
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
        let receiving = Task { try await receiver.runService() }
        defer { receiving.cancel() }
        try await Task.sleep(for: .milliseconds(300))

        var settings = WebhookSettings()
        settings.maxInFlightPerHost = perEndpoint
        let dispatcher = WebhookDispatcher(storage: webhooks.storage, feed: ChangeFeed(storage: store), settings: settings)
        let started = DispatchTime.now().uptimeNanoseconds
        let sending = Task { try await dispatcher.run() }
        defer { sending.cancel() }
        var delivered = 0
        while delivered < deliveries {
            try await Task.sleep(for: .milliseconds(20))
            delivered = try await store.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM webhook_delivery WHERE webhook_id = ? AND state = 'delivered'", arguments: [webhook.id]) ?? 0
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        return Result(seconds: seconds, delivered: delivered, received: received.value)
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
}

extension Bench {
    func measureWebhooks(_ report: inout Report) async throws {
        let bench = WebhookBench()
        // The default share of one endpoint, and one endpoint taking every attempt in flight.
        let shares = [WebhookSettings().maxInFlightPerHost, WebhookSettings().maxInFlight]
        var results: [WebhookBench.Result] = []
        for share in shares { results.append(try await bench.run(work: work, port: 22_000 + Int.random(in: 0..<2_000), perEndpoint: share)) }
        let rates = results.map { Double($0.delivered) / $0.seconds }
        report.section(
            "Webhook dispatch: \(fmt(bench.deliveries)) deliveries queued by filings, sent by one dispatcher to a receiver of this process (204), signed, outcomes recorded",
            header: ["what"] + shares.map { "\($0) in flight to the endpoint" })
        report.row(["deliveries/s (queued to recorded delivered)"] + rates.map { fmt(Int($0)) })
        report.row(["requests the receiver got (at least once: a retry is a second)"] + results.map { fmt($0.received) })
        report.goal("webhook dispatch to a local receiver: ≥ 2,000 deliveries/s", "\(fmt(Int(rates[0])))/s", rates[0] >= 2_000)
    }
}
