import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// What the server does, in the Prometheus text format (`GET /metrics`), through
/// swift-metrics with swift-prometheus's factory.
///
/// Requests are counted and timed as they are answered, by route template (never the
/// values in a path: the label's values stay few) and status; group-commit batches as
/// they commit. The rest is read when the metrics are scraped: the tile cache, the
/// cluster index, the webhook outbox, the change stream's subscribers and the rate
/// limits' refusals, each from the object that keeps it.
public final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory
    /// What is read at each scrape, set once the server is put together.
    private let sources = Mutex<[@Sendable (ServerMetrics) async -> Void]>([])
    /// The last values of the counters read from elsewhere, so that each scrape adds what
    /// came since.
    private let last = Mutex<[String: Int]>([:])
    /// The request metrics made so far, by method, route and status: made once each, as
    /// making one looks it up in the registry under its lock.
    private let requests = Mutex<[RequestKey: (count: CoreMetrics.Counter, time: CoreMetrics.Timer)]>([:])
    private let transactions: CoreMetrics.Counter
    private let writes: CoreMetrics.Counter
    private let batchSizes: CoreMetrics.Recorder

    struct RequestKey: Hashable {
        var method, route: String
        var status: Int
    }

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["http_request_duration_seconds"] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10),
        ]
        factory.valueHistogramBuckets["group_commit_batch_size"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        self.factory = factory
        transactions = Counter(label: "group_commit_transactions_total", factory: factory)
        writes = Counter(label: "writes_total", factory: factory)
        batchSizes = Recorder(label: "group_commit_batch_size", factory: factory)
    }

    /// One answered request.
    func request(method: String, route: String, status: Int, took: Duration) {
        let key = RequestKey(method: method, route: route, status: status)
        let metrics = requests.withLock { made in
            if let metrics = made[key] { return metrics }
            let metrics = (
                Counter(label: "http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory),
                Timer(label: "http_request_duration_seconds", dimensions: [("method", method), ("route", route)], factory: factory))
            made[key] = metrics
            return metrics
        }
        metrics.count.increment()
        let (seconds, attoseconds) = took.components
        metrics.time.recordNanoseconds(seconds >= Int64.max / 1_000_000_000 ? .max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// One group-commit transaction of `writes` writes.
    func batch(_ writes: Int) {
        transactions.increment()
        self.writes.increment(by: writes)
        batchSizes.record(writes)
    }

    /// The outcomes autodial's calls are counted by (`autodial_calls_total{outcome}`),
    /// each shown from 0 once the dialer runs.
    public static let callOutcomes = ["answered", "busy", "unanswered", "failed", "interrupted"]

    /// The dialer runs: its counters start at 0.
    public func autodialStarted() {
        Counter(label: "autodial_calls_placed_total", factory: factory).increment(by: 0)
        for outcome in Self.callOutcomes { Counter(label: "autodial_calls_total", dimensions: [("outcome", outcome)], factory: factory).increment(by: 0) }
    }

    /// `count` calls placed and ended as `outcome` (those a dead dialer left are
    /// `interrupted` when their lease ends).
    public func autodialCall(outcome: String, count: Int = 1) {
        Counter(label: "autodial_calls_placed_total", factory: factory).increment(by: count)
        Counter(label: "autodial_calls_total", dimensions: [("outcome", outcome)], factory: factory).increment(by: count)
    }

    /// Reads `source` at every scrape.
    func read(_ source: @escaping @Sendable (ServerMetrics) async -> Void) {
        sources.withLock { $0.append(source) }
    }

    func gauge(_ name: String, _ value: Int, _ dimensions: [(String, String)] = []) {
        Gauge(label: name, dimensions: dimensions, factory: factory).record(value)
    }

    /// A counter kept elsewhere as a running total: what it gained since the last scrape.
    func total(_ name: String, _ value: Int, _ dimensions: [(String, String)] = []) {
        let key = name + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        let gained = last.withLock { last in
            defer { last[key] = value }
            return max(0, value - (last[key] ?? 0))
        }
        Counter(label: name, dimensions: dimensions, factory: factory).increment(by: gained)
    }

    /// The text Prometheus scrapes.
    public func scrape() async -> [UInt8] {
        for source in sources.withLock({ $0 }) { await source(self) }
        return registry.emitToBuffer()
    }
}
