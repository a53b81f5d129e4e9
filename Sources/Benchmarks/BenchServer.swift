import Accounts
import ChangeFeed
import PostgresStore
import ReportModel
import ReportService
import Server
import StorePorts
import Webhooks

/// A real server over one store's backend, held while the bench sends it requests in turn
/// with the servers of other stores.
struct BenchServer {
    let port: Int
    let tokens: [String]
    let reference: ReferenceData
    private let task: Task<Void, any Error>

    /// A server on SQLite.
    static func start(_ bench: Bench, _ service: ReportService, sqlite stores: Stores) async throws -> BenchServer {
        try await start(bench, service, stores) { _ in }
    }

    /// A server on PostgreSQL, as `posterwatch serve` configures one there: the photos in the
    /// database, and the other replicas' commits followed as often.
    static func start(_ bench: Bench, _ service: ReportService, postgres: PostgresStores) async throws -> BenchServer {
        try await start(bench, service, postgres.stores) { configuration in
            configuration.photoStorage = postgres.photos
            configuration.changes.followInterval = ChangeStreamSettings.postgresFollowInterval
        }
    }

    private static func start(
        _ bench: Bench, _ service: ReportService, _ stores: Stores, configure: (inout ServerConfiguration) -> Void
    ) async throws -> BenchServer {
        let accounts = try await AccountService(storage: stores.accounts)
        let backend = Backend(service: service, accounts: accounts, webhooks: WebhookService(storage: stores.webhooks), feed: ChangeFeed(storage: stores.reports))
        let (port, task) = try await bench.startServer(backend, configure: configure)
        return BenchServer(port: port, tokens: try await bench.benchTokens(accounts), reference: stores.reports.reference, task: task)
    }

    func stop() { task.cancel() }
}

extension Bench {
    /// How many times the servers take turns at one row's requests, and for how long each.
    static let turns = 3, turnSeconds = 4

    /// The same load on each server in turn, ``turns`` times: for each turn, each server's
    /// result, in the order of `servers`.
    func inTurns(_ servers: [BenchServer], _ load: (BenchServer, _ seconds: Int) throws -> WrkResult) rethrows -> [[WrkResult]] {
        try (0..<Self.turns).map { _ in try servers.map { try load($0, Self.turnSeconds) } }
    }

    /// Server `n`'s mean rate over the turns and its worst p99.
    static func mean(_ turns: [[WrkResult]], _ n: Int) -> WrkResult {
        var result = WrkResult()
        result.rate = turns.map { $0[n].rate }.reduce(0, +) / Double(turns.count)
        result.p99 = turns.map { $0[n].p99 }.max() ?? .nan
        result.failures = turns.map { $0[n].failures }.reduce(0, +)
        return result
    }

    /// "rate; p99" of server `n` over the turns.
    static func summary(_ turns: [[WrkResult]], _ n: Int) -> String {
        let result = mean(turns, n)
        return "\(fmt(Int(result.rate))); \(f2(result.p99))"
    }

    /// Server `n`'s mean rate over server `base`'s, and the range of the turns' own ratios.
    static func ratio(_ turns: [[WrkResult]], _ n: Int, over base: Int) -> String {
        let each = turns.map { $0[n].rate / $0[base].rate }
        return "\(f2(mean(turns, n).rate / mean(turns, base).rate)) (\(f2(each.min() ?? .nan))–\(f2(each.max() ?? .nan)))"
    }
}
