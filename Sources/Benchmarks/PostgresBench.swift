import Accounts
import ChangeFeed
import Clustering
import Dispatch
import Foundation
import Generator
import Geometry
import Interchange
import PostgresStore
import ReportModel
import ReportService
import Server
import SQLiteStore
import StorePorts
import Synchronization
import Webhooks

/// The PostgreSQL store beside the SQLite store, in one run on this machine: the import,
/// a replica's start, filings and reads over HTTP, and how soon a second replica follows
/// the first. On a PostgreSQL cluster with its defaults for durability (fsync, synchronous
/// commits: `POSTERWATCH_PG_DURABLE=1 scripts/with-postgres.sh`, which `make bench` uses),
/// named by `POSTERWATCH_BENCH_POSTGRES` (a database with PostGIS and pg_trgm).
extension Bench {
    func measurePostgresBeside(url: String, _ report: inout Report) async throws {
        let dataPath = "\(work)/kyiv-\(count)-seed42.geojsonl"
        let postgres = try await PostgresStores(url: url)
        let pgReports = postgres.stores.reports
        // The import, into an empty database each.
        if try await pgReports.count(in: .world) > 0 {
            report.note("The PostgreSQL database already held reports: its import was not measured.")
        }
        let sqlitePath = "\(work)/beside.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: sqlitePath + suffix) }
        let sqliteImport = try await time {
            let batches = try ReportReader(url: URL(fileURLWithPath: dataPath)).readingAhead()
            _ = try SQLiteReports.create(path: sqlitePath, next: { try batches.next()?.records })
        }
        var pgSummary = ImportSummary()
        let pgImport = try await time {
            let batches = try ReportReader(url: URL(fileURLWithPath: dataPath)).readingAhead()
            pgSummary = try await pgReports.importRecords(options: Self.asTheCommandImports, now: Date(), next: { try batches.next()?.records }, progress: { _ in })
        }
        let sqlite = try SQLiteReports(path: sqlitePath)
        let sqliteStores = Stores(reports: sqlite, accounts: SQLiteAccounts(sqlite), webhooks: SQLiteWebhooks(sqlite))

        report.section(
            "PostgreSQL 15 with PostGIS 3 beside SQLite, \(fmt(count)) reports (the same file), one run; PostgreSQL with fsync and synchronous commits on",
            header: ["what", "SQLite", "PostgreSQL", "PostgreSQL ÷ SQLite"])
        report.row(["import into an empty database (s)", f2(sqliteImport), f2(pgImport), f2(pgImport / sqliteImport)])
        report.note(
            "PostgreSQL's import: COPY \(f2(pgSummary.tableSeconds)) s, then on two connections at once (each build's own time) GiST "
                + "\(f2(pgSummary.rtreeSeconds)) s, the trigrams and report_phone \(f2(pgSummary.searchIndexSeconds)) s, b-trees and foreign keys "
                + "\(f2(pgSummary.secondaryIndexSeconds)) s.")
        report.goal("PostgreSQL import of 1,000,000: ≤ 10 s", "\(f2(pgImport)) s", pgImport <= 10)

        // A replica's start: its index and tally from the rows.
        var sqliteService: ReportService?, pgService: ReportService?
        let sqliteStart = try await time { sqliteService = try await ReportService(storage: sqlite) }
        let pgStart = try await time { pgService = try await ReportService(storage: pgReports, rowCacheSize: Self.replicaRowCache) }
        report.row(["a server's start: index and tally from the rows (s)", f2(sqliteStart), f2(pgStart), f2(pgStart / sqliteStart)])
        report.goal("a new PostgreSQL replica's start on 1,000,000 (from the rows): ≤ 3 s", "\(f2(pgStart)) s", pgStart <= 3)
        // Saved as a replica's clean stop saves it; read at the end, after the writes below.
        let savedIndex = "\(work)/replica.index"
        let savedAt = try await pgService!.saveIndex(to: savedIndex) ?? 0
        // And shared through the database, as a replica shares it once built, for new replicas.
        let sharedAt = try await pgService!.shareIndex(from: savedIndex, unlessWithin: 0, saved: savedAt)

        // Over HTTP: a server on each store, started at once, taking turns at the same
        // requests (seconds apart: rows minutes apart moved by a third on this machine). The
        // PostgreSQL server that keeps no rows answers the reads only, and stops before the
        // filings, which it would otherwise follow beside the measured server.
        let onSQLite = try await BenchServer.start(self, sqliteService!, sqlite: sqliteStores)
        let onPostgres = try await BenchServer.start(self, pgService!, postgres: postgres)
        let uncached = try await BenchServer.start(self, try await ReportService(storage: pgReports), postgres: postgres)
        func box(_ b: BoundingBox) -> String { "\(b.west),\(b.south),\(b.east),\(b.north)" }
        let reads: [(key: String, what: String, paths: [String])] = [
            ("clusters", "`/v1/clusters` z14 viewports (per second; p99 ms)", kyivViewports(zoom: 14, seed: 32).map { "/v1/clusters?bbox=\(box($0))&zoom=14" }),
        ] + [3, 4, 7].map { digits in
            ("search\(digits)", "phone search, \(digits) digits, first 50 (per second; p99 ms)", Self.searchFragments(digits).map { "/v1/search?q=\($0)&limit=50" })
        }
        var turns: [String: [[WrkResult]]] = [:]
        for read in reads {
            turns[read.key] = try inTurns([onSQLite, onPostgres, uncached]) { server, seconds in
                try startWrk(port: server.port, lists: [read.paths.map { WrkRequest(path: $0) }], seconds: seconds)()
            }
        }
        uncached.stop()
        func filings(_ server: BenchServer, seconds: Int) throws -> WrkResult {
            let bodies = Self.filingBodies(4_000, seed: 90, reference: server.reference)
            let requests = [bodies.map { WrkRequest(method: "POST", path: "/v1/reports", body: $0) }]
            return try startWrk(port: server.port, lists: requests, bearerTokens: server.tokens, seconds: seconds, name: "wrk-filings")()
        }
        for server in [onSQLite, onPostgres] { _ = try filings(server, seconds: 3) }
        turns["filings"] = try inTurns([onSQLite, onPostgres]) { try filings($0, seconds: $1) }
        onSQLite.stop()
        onPostgres.stop()
        let kept = pgService!.rowCacheCounts
        report.note(
            "Over HTTP the servers took turns at each row's requests, \(Self.turns) turns of \(Self.turnSeconds) s each; a rate is the mean of its turns, "
                + "a p99 the worst turn's, and the ratio's range in brackets is the turns' own.")
        for (key, what) in [("filings", "`POST /v1/reports`, 64 connections (per second; p99 ms)")] + reads.map({ ($0.key, $0.what) }) {
            let runs = turns[key]!
            report.row([what, Self.summary(runs, 0), Self.summary(runs, 1), Self.ratio(runs, 1, over: 0)])
            if runs.first!.count > 2 {
                report.row(["the same, PostgreSQL keeping no rows (`--row-cache 0`)", "", Self.summary(runs, 2), Self.ratio(runs, 2, over: 0)])
            }
        }
        report.note(
            "PostgreSQL's replica kept up to \(fmt(Self.replicaRowCache)) rows (`posterwatch serve`'s default there): of the rows its clusters and searches "
                + "answered with, \(fmt(kept.hits)) came from memory and \(fmt(kept.misses)) were read (the 20 fragments of each length and 32 viewports repeat).")
        let (onSQLiteResults, onPostgresResults) = (turns.mapValues { Self.mean($0, 0) }, turns.mapValues { Self.mean($0, 1) })
        let filings = (onSQLiteResults["filings"]!, onPostgresResults["filings"]!)
        report.goal(
            "PostgreSQL filings over HTTP: ≥ 80% of SQLite's rate, p99 ≤ 50 ms", "\(Int(100 * filings.1.rate / filings.0.rate))%, p99 \(f2(filings.1.p99)) ms",
            filings.1.rate >= 0.8 * filings.0.rate && filings.1.p99 <= 50)
        let readRatios = reads.map { onPostgresResults[$0.key]!.rate / onSQLiteResults[$0.key]!.rate }
        report.goal(
            "z14 clusters and phone search on PostgreSQL: within 10% of SQLite", readRatios.map { f2($0) }.joined(separator: ", "), readRatios.allSatisfy { $0 >= 0.9 })

        // How soon a second replica follows: filings at 500/s through one, each timed from
        // its commit to the other's index holding it.
        let lag = try await followLag(url: url, writer: pgService!, rate: 500, seconds: 6)
        report.row(["follow lag, commit on one replica to the other's index, 500 filings/s (p50; p99 ms)", "", "\(f2(lag.p50)); \(f2(lag.p99))", ""])
        report.goal("follow lag between two replicas at 500 filings/s: p99 ≤ 100 ms", "p99 \(f2(lag.p99)) ms", lag.p99 <= 100)

        // A replica restarted after all of the writes above, by the others as it were: its
        // saved index and the changes since, from the log.
        let behind = try await pgReports.lastChange() - savedAt
        var restarted: ReportService?
        let restart = try await time { restarted = try await ReportService(storage: pgReports, start: .saved(path: savedIndex, catchUp: behind)) }
        if let note = restarted?.indexStartNote { report.note("The restart did not use its saved index: \(note).") }
        report.row(["a replica's restart from its saved index, \(fmt(Int(behind))) changes behind (s)", "", f2(restart), ""])
        report.goal(
            "a PostgreSQL replica's restart on 1,000,000 (its saved index, the changes since from the log): ≤ 3 s",
            "\(f2(restart)) s, \(fmt(Int(behind))) changes behind", restart <= 3 && restarted?.indexStartNote == nil)
        try? FileManager.default.removeItem(atPath: savedIndex)

        // A new replica, with no file of its own: the database's copy and the changes since.
        let newIndex = "\(work)/new-replica.index"
        try? FileManager.default.removeItem(atPath: newIndex)
        var fresh: ReportService?
        let freshStart = try await time { fresh = try await ReportService(storage: pgReports, start: .saved(path: newIndex, catchUp: behind)) }
        let fromCopy = sharedAt != nil && fresh?.startedFromSharedIndex == true && fresh?.indexStartNote == nil
        if !fromCopy { report.note("The new replica did not start from the database's copy: \(fresh?.indexStartNote ?? "the copy was not shared").") }
        report.row(["a new replica's start from the database's copy of a saved index, \(fmt(Int(behind))) changes behind (s)", "", f2(freshStart), ""])
        report.goal(
            "a new PostgreSQL replica's start on 1,000,000 (the database's copy of a saved index, the changes since): ≤ 3 s",
            "\(f2(freshStart)) s, \(fmt(Int(behind))) changes behind", freshStart <= 3 && fromCopy)
        try? FileManager.default.removeItem(atPath: newIndex)
    }

    /// The rows a replica keeps, as `posterwatch serve` on PostgreSQL by default.
    static let replicaRowCache = 100_000

    /// What `posterwatch import` asks of the store: among it, a change that says the data set
    /// was replaced (a saved index is then not caught up across it).
    static var asTheCommandImports: ImportOptions {
        var options = ImportOptions()
        options.marksDataSetChanged = true
        return options
    }

    /// Twenty fragments of `digits` random digits (seeded), as a searcher types them: those of
    /// three and four digits match thousands of reports, those of seven a few or none (of the
    /// first three, one matches a report at 1M).
    static func searchFragments(_ digits: Int) -> [String] {
        var rng = SplitMix64(state: 77 + UInt64(digits))
        return (0..<20).map { _ in String((0..<digits).map { _ in Character(String(rng.below(10))) }) }
    }

    /// Files `rate` reports a second for `seconds` through `writer`; a second replica on
    /// the same database (its own pool, its own LISTEN) follows; each filing's lag, from
    /// its commit to the follower's index holding it.
    func followLag(url: String, writer: ReportService, rate: Int, seconds: Int) async throws -> Samples {
        let follower = try await ReportService(storage: PostgresStores(url: url).stores.reports)
        let seen = Mutex<[Int64: UInt64]>([:])
        follower.onWrite { touched in
            let now = DispatchTime.now().uptimeNanoseconds
            seen.withLock { for entry in touched where $0[entry.id] == nil { $0[entry.id] = now } }
        }
        let following = Task { await follower.followChanges(every: .milliseconds(20)) }
        defer { following.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        let bodies = Self.drafts(rate * seconds, seed: 91, reference: writer.reference)
        let caller = Caller(accountID: nil, role: .inspector)
        var committed: [Int64: UInt64] = [:]
        let start = DispatchTime.now().uptimeNanoseconds
        for (i, draft) in bodies.enumerated() {
            let due = start + UInt64(i) * 1_000_000_000 / UInt64(rate)
            let now = DispatchTime.now().uptimeNanoseconds
            if due > now { try await Task.sleep(for: .nanoseconds(Int(due - now))) }
            let id = try await writer.file(draft, by: caller).report.id
            committed[id] = DispatchTime.now().uptimeNanoseconds
        }
        try await Task.sleep(for: .seconds(1))
        let arrived = seen.withLock { $0 }
        return Samples(milliseconds: committed.compactMap { id, at in arrived[id].map { Double(Int64($0) - Int64(at)) / 1e6 } })
    }
}
