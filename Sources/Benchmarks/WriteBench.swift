import Accounts
import ChangeFeed
import Dispatch
import Foundation
import Generator
import Geometry
import GRDB
import ReportModel
import ReportService
import SQLiteStore
import Server

/// The write section of `make bench`: filing over HTTP (bearer tokens, 64 connections)
/// with the WAL synced as SQLite's `FULL` (the store's) and `NORMAL` say, the service alone without
/// HTTP, transitions, and cluster reads while filings stream in. On a copy of the bench
/// database, so that the other sections always see the same 1,000,000 reports.
extension Bench {
    func measureWrites(_ source: SQLiteReports, _ report: inout Report) async throws {
        let store = try copy(source, to: "\(work)/writes.sqlite")
        let service = try await ReportService(storage: store)
        let accounts = try await AccountService(storage: SQLiteAccounts(store))
        let (port, server) = try await startServer(service, accounts: accounts, store: store)
        defer { server.cancel() }
        let inspectors = try await benchTokens(accounts)
        let supervisors = try await benchTokens(accounts, role: .supervisor)
        let start = try store.count()
        report.section(
            "Writes onto \(fmt(start)) reports: wrk, 2 threads, 64 connections, 10 s per row, bearer tokens (a copy of the bench database)",
            header: ["what", "per second", "p50 (ms)", "p99 (ms)"])

        let bodies = (0..<2).map { seed in Self.filingBodies(4_000, seed: 70 + UInt64(seed), reference: store.reference) }
        let filings = bodies.map { list in list.map { WrkRequest(method: "POST", path: "/v1/reports", body: $0) } }
        // A copy's pages are cold and its WAL empty: 5 s of filings first, unmeasured, so
        // that the first row does not pay for them.
        _ = try startWrk(port: port, lists: filings, bearerTokens: inspectors, seconds: 5, name: "wrk-filings")()
        let full = try startWrk(port: port, lists: filings, bearerTokens: inspectors, name: "wrk-filings")()
        report.row(["`POST /v1/reports`, the WAL synced at each commit, `synchronous=FULL` (the store's: survives power loss)", fmt(Int(full.rate)), f2(full.p50), f2(full.p99)])
        report.goal(
            "HTTP POST /v1/reports, 64 connections: ≥ 10,000 created/s, p99 ≤ 50 ms", "\(fmt(Int(full.rate)))/s, p99 \(f2(full.p99)) ms",
            full.rate >= 10_000 && full.p99 <= 50 && full.failures == 0)

        try Self.synchronous("NORMAL", store)
        let normal = try startWrk(port: port, lists: filings, bearerTokens: inspectors, name: "wrk-filings")()
        try Self.synchronous("FULL", store)
        report.row(["the same with `synchronous=NORMAL` (synced at checkpoints: survives `kill -9`, not power loss)", fmt(Int(normal.rate)), f2(normal.p50), f2(normal.p99)])

        let alone = try await fileDirectly(service, accounts: accounts, count: 20_000)
        report.row(["the service alone, 64 concurrent filers, no HTTP, JSON or tokens", fmt(Int(alone.rate)), f2(alone.p50), f2(alone.p99)])
        let sharing =
            "Concurrent filings share a transaction (group commit): \(fmt(service.transactionCount)) transactions for "
            + "\(fmt(try store.count() - start)) filings in the rows above. HTTP over the service alone: \(f2(normal.rate / alone.rate))×."

        let transitions = try await measureTransitions(service, port: port, tokens: supervisors)
        report.row(["`POST /v1/reports/{id}/transitions` (confirmed ⇄ removed, 20,000 reports)", fmt(Int(transitions.rate)), f2(transitions.p50), f2(transitions.p99)])
        report.goal("HTTP transitions: ≥ 5,000/s", "\(fmt(Int(transitions.rate)))/s", transitions.rate >= 5_000 && transitions.failures == 0)

        func box(_ b: BoundingBox) -> String { "\(b.west),\(b.south),\(b.east),\(b.north)" }
        let trickle = try startWrk(
            port: port, lists: [filings[0]], bearerTokens: inspectors, threads: 1, connections: 24, seconds: 12, delay: 7, name: "wrk-trickle")
        try await Task.sleep(for: .seconds(1))
        let clusters = try wrk(port: port, paths: kyivViewports(zoom: 14, seed: 32).map { "/v1/clusters?bbox=\(box($0))&zoom=14" })
        let stream = try trickle()
        report.row(["`/v1/clusters` z14 viewports, while filings stream in (next row)", fmt(Int(clusters.rate)), f2(clusters.p50), f2(clusters.p99)])
        report.row(["… the filings meanwhile (24 connections, each pausing 7 ms)", fmt(Int(stream.rate)), f2(stream.p50), f2(stream.p99)])
        report.goal(
            "z14 clusters while ~1,000 filings/s stream in: ≥ 4,000 requests/s", "\(fmt(Int(clusters.rate)))/s beside \(fmt(Int(stream.rate))) filings/s",
            clusters.rate >= 4_000 && stream.rate >= 900)
        report.note(sharing)
        report.note(try tileFreshness(port: port, body: bodies[0][0], token: inspectors[0]))
        try await measureFeed(ChangeFeed(storage: store), &report)
        try await measureStream(service, accounts: accounts, store: store, &report)
        try await measureUploads(store, &report)
        try await measureWebhooks(&report)
    }

    /// The change stream alone (`--only-stream`), on a copy of the bench database.
    func measureStream(_ source: SQLiteReports, _ report: inout Report) async throws {
        let store = try copy(source, to: "\(work)/writes.sqlite")
        let service = try await ReportService(storage: store)
        let accounts = try await AccountService(storage: SQLiteAccounts(store))
        _ = try await benchTokens(accounts)
        // A copy's pages are cold: 20,000 filings first, unmeasured, as the write section
        // warms up before its first row.
        _ = try await fileDirectly(service, accounts: accounts, count: 20_000)
        try await measureStream(service, accounts: accounts, store: store, &report)
    }

    /// Subscribers of the change stream while filings are committed at a steady rate: with
    /// the poll alone (0), and with commits ringing the hub and its reads kept at least
    /// each of `streamWindows` ms apart; a server of its own for each, on the same service;
    /// for each count of `streamSubscribers`.
    func measureStream(_ service: ReportService, accounts: AccountService, store: SQLiteReports, _ report: inout Report) async throws {
        guard let filer = try await accounts.account(email: "bench0@example.org")?.id else { throw CocoaError(.userCancelled) }
        let bench = StreamBench()
        bench.observe(service)
        report.section(
            "The change stream: subscribers of the whole city (`GET /v1/changes/stream`, sockets of this process) while \(fmt(bench.rate)) filings/s are committed through the service for \(bench.seconds) s; up to 100 subscribers timed, all read",
            header: [
                "subscribers", "how the hub reads the table", "filing submitted → its event on a socket, p50 / p99 (ms)", "filing committed → its event, p50 / p99 (ms)",
                "filing submitted → answered, p50 / p99 (ms)", "events timed", "heap per idle subscriber (bytes malloc handed out, the server's and the bench's)",
            ])
        let defaults = ChangeStreamSettings()
        var goal: (p99: Double, met: Bool)?
        for subscribers in streamSubscribers {
            for window in streamWindows.map(Duration.milliseconds) {
                let (port, server) = try await startServer(service, accounts: accounts, store: store) {
                    $0.changes.batchWindow = window
                    $0.changes.ringOnCommit = window > .zero
                    $0.webhooks = nil
                }
                defer { server.cancel() }
                let result = try await bench.run(service, filer: Caller(accountID: filer, role: .inspector), port: port, subscribers: subscribers)
                let isDefault = defaults.ringOnCommit ? window == defaults.batchWindow : window == .zero
                let label = (window == .zero ? "no ring: the 20 ms poll alone" : "a commit rings; reads \(window.components.attoseconds / 1_000_000_000_000_000 + window.components.seconds * 1_000) ms apart at least")
                    + (isDefault ? " (the default)" : "")
                report.row([
                    fmt(subscribers), label, "\(f2(result.latencies.p50)) / \(f2(result.latencies.p99))", "\(f2(result.afterCommit.p50)) / \(f2(result.afterCommit.p99))",
                    "\(f2(result.filingTimes.p50)) / \(f2(result.filingTimes.p99))", fmt(result.eventsRead), fmt(Int(result.bytesPerSubscriber)),
                ])
                if isDefault, subscribers == StreamBench.goalSubscribers {
                    let timed = StreamBench.timed(of: subscribers)
                    goal = (result.afterCommit.p99, result.afterCommit.p99 <= 50 && result.eventsRead >= timed * result.filings * 99 / 100)
                }
            }
        }
        if let goal {
            report.goal(
                "change stream, \(fmt(StreamBench.goalSubscribers)) subscribers, \(fmt(bench.rate)) writes/s: commit to event p99 ≤ 50 ms", "\(f2(goal.p99)) ms", goal.met)
        }
    }

    /// The whole changes feed the rows above wrote, read page by page (1,000 a page) and
    /// written as JSON, as the public and as staff see it.
    func measureFeed(_ feed: ChangeFeed, _ report: inout Report) async throws {
        report.section("Reading the changes feed the rows above wrote (`ChangeFeed` pages of 1,000, JSON included)", header: ["reader", "changes", "changes/s"])
        var publicRate = 0.0
        for staff in [false, true] {
            let started = DispatchTime.now().uptimeNanoseconds
            var since: Int64 = 0, read = 0, bytes = 0
            while true {
                let page = try await feed.page(since: since, limit: ChangeFeed.maxPage, staff: staff)
                bytes += try ChangeJSON.page(page).count
                read += page.entries.count
                since = page.lastSeq
                if page.entries.count < ChangeFeed.maxPage { break }
            }
            let rate = Double(read) / (Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
            if !staff { publicRate = rate }
            report.row([staff ? "staff (hidden reports, who and what)" : "the public", fmt(read), fmt(Int(rate))])
        }
        report.goal("reading the changes feed: ≥ 200,000 changes/s", "\(fmt(Int(publicRate)))/s", publicRate >= 200_000)
    }

    /// A copy of the bench database to write on, made afresh (SQLite's backup API).
    func copy(_ source: SQLiteReports, to path: String) throws -> SQLiteReports {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try source.pool.backup(to: try DatabaseQueue(path: path))
        // On disk before the runs: the kernel writing the copy back would fall within them.
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try file.synchronize()
        try file.close()
        return try SQLiteReports(path: path)
    }

    /// Sets how the writer connection syncs the WAL at commit.
    static func synchronous(_ mode: String, _ store: SQLiteReports) throws {
        try store.pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = \(mode)") }
    }

    /// Drafts of generated Kyiv reports as a client files them (no id or times).
    static func drafts(_ count: Int, seed: UInt64, reference: ReferenceData, status: String? = nil) -> [ReportDraft] {
        ReportGenerator(count: count, seed: seed, distribution: .kyiv, reference: reference).map { r in
            ReportDraft(
                coordinate: r.coordinate, address: r.address, city: r.city, district: r.district, objectType: r.objectType,
                balanceHolder: r.balanceHolder, violator: r.violator, phones: r.phones, status: status)
        }
    }

    /// Flat filing bodies of generated Kyiv reports.
    static func filingBodies(_ count: Int, seed: UInt64, reference: ReferenceData) -> [String] {
        struct Body: Encodable {
            var longitude, latitude: Double
            var address, city, district, object_type, balance_holder: String
            var violator: String?
            var phones: [String]
        }
        let encoder = JSONEncoder()
        return ReportGenerator(count: count, seed: seed, distribution: .kyiv, reference: reference).map { r in
            let body = Body(
                longitude: r.coordinate.longitude, latitude: r.coordinate.latitude, address: r.address, city: r.city, district: r.district,
                object_type: r.objectType, balance_holder: r.balanceHolder, violator: r.violator, phones: r.phones)
            return String(decoding: try! encoder.encode(body), as: UTF8.self)
        }
    }

    /// `count` filings through the service by 64 concurrent tasks: filings/s and each
    /// filing's time.
    func fileDirectly(_ service: ReportService, accounts: AccountService, count: Int) async throws -> WrkResult {
        guard let filer = try await accounts.account(email: "bench0@example.org")?.id else { throw CocoaError(.userCancelled) }
        let caller = Caller(accountID: filer, role: .inspector)
        let drafts = Self.drafts(count, seed: 78, reference: service.reference)
        let started = DispatchTime.now().uptimeNanoseconds
        let times = try await withThrowingTaskGroup(of: [Double].self) { group in
            for worker in 0..<64 {
                group.addTask {
                    var times: [Double] = []
                    for k in stride(from: worker, to: drafts.count, by: 64) {
                        let t0 = DispatchTime.now().uptimeNanoseconds
                        _ = try await service.file(drafts[k], by: caller)
                        times.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
                    }
                    return times
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        let samples = Samples(milliseconds: times)
        var result = WrkResult(parsing: "")
        (result.rate, result.p50, result.p99) = (Double(count) / seconds, samples.p50, samples.p99)
        return result
    }

    /// Transitions under wrk: 20,000 confirmed reports, each thread toggling its own half
    /// between removed and confirmed (a report comes round again only after 10,000 others).
    func measureTransitions(_ service: ReportService, port: Int, tokens: [String]) async throws -> WrkResult {
        let drafts = Self.drafts(20_000, seed: 80, reference: service.reference, status: "confirmed")
        let ids = try service.insert(drafts).map(\.id)
        let halves = [Array(ids[..<10_000]), Array(ids[10_000...])]
        let lists = halves.map { half in
            ["removed", "confirmed"].flatMap { to in
                half.map { WrkRequest(method: "POST", path: "/v1/reports/\($0)/transitions", body: #"{"to":"\#(to)"}"#) }
            }
        }
        return try startWrk(port: port, lists: lists, bearerTokens: tokens, name: "wrk-transitions")()
    }

    /// Files a report and checks that its z16 tile, fetched just before, changes on the
    /// next request.
    func tileFreshness(port: Int, body: String, token: String) throws -> String {
        let fields = try JSONSerialization.jsonObject(with: Data(body.utf8)) as! [String: Any]
        let c = Coordinate(longitude: fields["longitude"] as! Double, latitude: fields["latitude"] as! Double)
        let n = Double(1 << 16)
        let url = "http://127.0.0.1:\(port)/v1/tiles/16/\(Int(WebMercator.x(longitude: c.longitude) * n))/\(Int(WebMercator.y(latitude: c.latitude) * n)).png"
        let before = try curlHeaders(url)["etag"]
        let filed = try curlHeaders("http://127.0.0.1:\(port)/v1/reports", post: body, token: token)
        let after = try curlHeaders(url)["etag"]
        guard filed[":status"] == "201", let after, after != before else {
            return "Tile freshness: FAILED (filing \(filed[":status"] ?? "?"), tag before \(before ?? "none"), after \(after ?? "none"))."
        }
        return "Tile freshness: the z16 tile a new report falls on was fetched, the report filed, and the next request for the tile drew it (tag \(before ?? "none, a 204") → \(after))."
    }
}

/// The status (as `:status`) and headers (lower-cased) of a request made with curl.
func curlHeaders(_ url: String, post body: String? = nil, token: String? = nil) throws -> [String: String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    var arguments = ["-s", "-o", "/dev/null", "-D", "-", url]
    if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
    if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var headers: [String: String] = [:]
    for line in text.split(whereSeparator: \.isNewline) {
        if line.hasPrefix("HTTP/") { headers[":status"] = line.split(separator: " ").dropFirst().first.map(String.init) }
        if let colon = line.firstIndex(of: ":") {
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
    return headers
}
