import Accounts
import ChangeFeed
import Webhooks
import CMalloc
import Foundation
import Generator
import Geometry
import Interchange
import ReportModel
import ReportService
import SQLiteStore
import Server

/// The HTTP section of `make bench`, against the real server in this process on
/// loopback: request rates and latencies under load (wrk, 64 connections), and the whole
/// data set through `/v1/export` fetched by curl, with resident memory sampled meanwhile.
extension Bench {
    /// The sections measured against the real server (one index, one server): the API
    /// under load and the export, and the tiles.
    func measureServed(_ store: SQLiteReports, http: Bool, tiles: Bool, _ report: inout Report) async throws {
        let service = try await ReportService(storage: store)
        let accounts = try await AccountService(storage: SQLiteAccounts(store))
        let (port, server) = try await startServer(service, accounts: accounts, store: store)
        defer { server.cancel() }
        if http {
            try await measureLoad(service, store: store, port: port, &report)
            try await measureMixedLoad(service, port: port, &report)
            try await measureAuth(accounts, store: store, port: port, &report)
            try await measureExport(store, port: port, &report)
        }
        if tiles { try await measureTiles(service, port: port, &report) }
    }

    /// wrk with 64 connections for 10 s per row, each row cycling through `repeats` requests.
    func measureLoad(_ service: ReportService, store: SQLiteReports, port: Int, _ report: inout Report) async throws {
        report.section(
            "HTTP under load: wrk, 2 threads, 64 connections, 10 s per row, on loopback (server and wrk share the 2 cores)",
            header: ["requests", "requests/s", "p50 (ms)", "p99 (ms)"])
        func box(_ b: BoundingBox) -> String { "\(b.west),\(b.south),\(b.east),\(b.north)" }
        var rng = SplitMix64(state: 23)
        let total = try store.count()
        var fragments: [String] = []
        while fragments.count < repeats {
            guard let r = try store.report(id: Int64(rng.below(total) + 1)) else { continue }
            let start = 3 + rng.below(5)
            fragments.append(String(Array(r.phones[0])[start..<(start + 4)]))
        }
        let rows: [(String, [String])] = [
            ("`/v1/clusters`, z10 viewports", kyivViewports(zoom: 10, seed: 31).map { "/v1/clusters?bbox=\(box($0))&zoom=10" }),
            ("`/v1/clusters`, z14 viewports", kyivViewports(zoom: 14, seed: 32).map { "/v1/clusters?bbox=\(box($0))&zoom=14" }),
            // The reports of the last three months of the generated two years (#33's interval).
            ("`/v1/clusters?datetime=2026-08-01T00:00:00Z/..`, z2 viewports", kyivViewports(zoom: 2, seed: 34).map { "/v1/clusters?bbox=\(box($0))&zoom=2&datetime=2026-08-01T00:00:00Z/.." }),
            ("`/v1/clusters?datetime=2026-08-01T00:00:00Z/..`, z10 viewports", kyivViewports(zoom: 10, seed: 31).map { "/v1/clusters?bbox=\(box($0))&zoom=10&datetime=2026-08-01T00:00:00Z/.." }),
            ("`/v1/clusters?datetime=2026-08-01T00:00:00Z/..`, z14 viewports", kyivViewports(zoom: 14, seed: 32).map { "/v1/clusters?bbox=\(box($0))&zoom=14&datetime=2026-08-01T00:00:00Z/.." }),
            ("`/v1/reports`, first page of 100, z14 viewports", kyivViewports(zoom: 14, seed: 33).map { "/v1/reports?bbox=\(box($0))&limit=100" }),
            ("`/v1/search`, 4-digit fragments, first 50", fragments.map { "/v1/search?q=\($0)" }),
        ]
        let answers = try await measureAnswers(service, zoom: 14, seed: 32)
        for (label, paths) in rows {
            let result = try wrk(port: port, paths: paths)
            report.row([label, fmt(Int(result.rate)), f2(result.p50), f2(result.p99)])
            if label.hasPrefix("`/v1/clusters`") {
                report.goal(
                    "HTTP \(label.replacingOccurrences(of: "`", with: "")): ≥ 5,000 requests/s, p99 ≤ 25 ms",
                    "\(fmt(Int(result.rate)))/s, p99 \(f2(result.p99)) ms", result.rate >= 5_000 && result.p99 <= 25)
            }
        }
        report.note(answers)
    }

    /// A mix of 50 URLs (clusters at z10 and z14, report pages, searches, tiles) under wrk,
    /// with one export of a small box in it and, alternately, without it: an export must
    /// cost what its box holds, not hold the rest of the mix back.
    func measureMixedLoad(_ service: ReportService, port: Int, _ report: inout Report) async throws {
        func box(_ b: BoundingBox) -> String { "\(b.west),\(b.south),\(b.east),\(b.north)" }
        var rng = SplitMix64(state: 51)
        var mix = kyivViewports(zoom: 14, seed: 52).prefix(16).map { "/v1/clusters?bbox=\(box($0))&zoom=14" }
        mix += kyivViewports(zoom: 10, seed: 53).prefix(10).map { "/v1/clusters?bbox=\(box($0))&zoom=10" }
        mix += kyivViewports(zoom: 14, seed: 54).prefix(10).map { "/v1/reports?bbox=\(box($0))&limit=100" }
        mix += (0..<7).map { _ in "/v1/search?q=\(50 + rng.below(49))\(rng.below(10))" }
        mix += (0..<6).map { i in "/v1/tiles/12/\(2_394 + i % 3)/\(1_384 + i / 3).png" }
        let small = try BoundingBox(west: 30.5150, south: 50.4450, east: 30.5165, north: 50.4460)
        let exportURL = "/v1/export?bbox=\(box(small))"
        let inBox = try await service.count(ReportFilter(box: small))
        report.section(
            "HTTP, a mixed load of 50 URLs (16 z14 and 10 z10 cluster viewports, 10 report pages, 7 searches, 6 z12 tiles, and the 50th), wrk as above, alternated",
            header: ["the 50th URL", "requests/s", "p50 (ms)", "p99 (ms)"])
        var rates: [Bool: [Double]] = [:]
        for round in 0..<4 {
            let withExport = round % 2 == 1
            let result = try wrk(port: port, paths: mix + [withExport ? exportURL : mix[0]])
            rates[withExport, default: []].append(result.rate)
            report.row([withExport ? "`\(exportURL)` (\(fmt(inBox)) reports)" : "another z14 viewport", fmt(Int(result.rate)), f2(result.p50), f2(result.p99)])
        }
        let ratio = rates[true]!.reduce(0, +) / rates[false]!.reduce(0, +)
        report.goal("mixed load with one small-box export in 50: within 15% of the mix without it", "\(f2(ratio))× the rate", ratio >= 0.85)
    }

    /// The work of one `/v1/clusters` answer without the HTTP around it, for the viewports
    /// of a wrk row: the index's clusters, the lone reports read from the store and the
    /// GeoJSON body, one at a time. A sentence for the report (also shown at once).
    func measureAnswers(_ service: ReportService, zoom: Int, seed: UInt64) async throws -> String {
        var bytes = 0, answers = 0
        let times = try await samples(kyivViewports(zoom: zoom, seed: seed)) { box in
            let answer = try await service.clusters(in: box, zoom: zoom)
            bytes += ClusterGeoJSON.featureCollection(answer.items, reports: answer.reports, statusCodes: service.statusCodes).count
            answers += 1
        }
        let text = "One z\(zoom) `/v1/clusters` answer built in this process, without HTTP (index, lone reports, GeoJSON): "
            + "p50 \(f3(times.p50)) ms, p99 \(f3(times.p99)) ms, \(fmt(bytes / answers)) bytes on average."
        Console.error(text)
        return text
    }

    /// The real server over `service` on a port of its own, answering once this returns;
    /// cancel the task to stop it. Without rate limits: the bench is one client that files
    /// thousands of reports a second (the limits' own cost, a lookup per write, stays).
    func startServer(
        _ service: ReportService, accounts: AccountService, store: SQLiteReports, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> (port: Int, task: Task<Void, any Error>) {
        let backend = Backend(service: service, accounts: accounts, webhooks: WebhookService(storage: SQLiteWebhooks(store)), feed: ChangeFeed(storage: store))
        return try await startServer(backend, configure: configure)
    }

    /// The real server over a backend (any store's).
    func startServer(_ backend: Backend, configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> (port: Int, task: Task<Void, any Error>) {
        let port = 18_000 + Int.random(in: 0..<6_000)
        var configuration = ServerConfiguration(port: port, logLevel: .warning)
        configuration.rateLimits = .none
        configuration.photosDirectory = "\(work)/photos"
        configure(&configuration)
        let app = makeApplication(backend, configuration: configuration)
        let server = Task { try await app.runService() }
        for _ in 0..<100 where (try? curl("http://127.0.0.1:\(port)/health").status) != 0 {
            try await Task.sleep(for: .milliseconds(100))
        }
        return (port, server)
    }

    /// Runs wrk against the paths (cycled by a Lua script); requests/s, p50 and p99 in ms.
    /// With `bearerTokens`, each request carries the next of them as `Authorization: Bearer`.
    func wrk(port: Int, paths: [String], bearerTokens: [String] = []) throws -> WrkResult {
        try startWrk(port: port, lists: [paths.map { WrkRequest(path: $0) }], bearerTokens: bearerTokens)()
    }

    /// Starts wrk and returns what waits for its result. Each thread cycles through a list
    /// of its own (thread n takes `lists[n % lists.count]`). The requests are formatted
    /// once per thread before the run, so that wrk (which shares the two cores with the
    /// server) spends no Lua work per request; `delay` (ms) paces each connection.
    func startWrk(
        port: Int, lists: [[WrkRequest]], bearerTokens: [String] = [], threads: Int = 2, connections: Int = 64, seconds: Int = 10,
        delay: Int? = nil, name: String = "wrk-paths"
    ) throws -> () throws -> WrkResult {
        let script = "\(work)/\(name).lua"
        func quoted(_ text: String) -> String { "[==[" + text + "]==]" }
        let tables = lists.map { list in
            "{" + list.map { r in
                "{\(quoted(r.method)), \(quoted(r.path)), \(r.body.map(quoted) ?? "nil"), \(r.bodyFile.map(quoted) ?? "nil"), \(r.contentType.map(quoted) ?? "nil")}"
            }.joined(separator: ",\n") + "}"
        }
        let tokens = bearerTokens.map(quoted).joined(separator: ",\n")
        try """
            local lists = {\(tables.joined(separator: ",\n"))}
            local tokens = {\(tokens)}
            local requests = {}
            local i = 0
            local threads = 0
            setup = function(thread)
              thread:set("list", threads % #lists + 1)
              thread:set("first", threads == 0)
              threads = threads + 1
            end
            -- wrk calls the first thread's request() once before the run, to look for
            -- pipelining, and never sends what it returns: that thread starts a step back.
            init = function(args)
              if first then i = -1 end
              local mine = lists[list or 1]
              for k = 0, math.max(#mine, #tokens) - 1 do
                local headers = {}
                if #tokens > 0 then headers["Authorization"] = "Bearer " .. tokens[(k % #tokens) + 1] end
                local r = mine[(k % #mine) + 1]
                local body = r[3]
                if r[3] then headers["Content-Type"] = "application/json" end
                if r[4] then
                  local f = io.open(r[4], "rb")
                  body = f:read("*all")
                  f:close()
                  headers["Content-Type"] = r[5]
                end
                requests[k + 1] = wrk.format(r[1], r[2], headers, body)
              end
            end
            request = function()
              i = i + 1
              return requests[(math.max(i - 1, 0) % #requests) + 1]
            end
            \(delay.map { "delay = function() return \($0) end" } ?? "")

            """.write(toFile: script, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
        process.arguments = ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", script, "http://127.0.0.1:\(port)"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        return {
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return WrkResult(parsing: text)
        }
    }

    func measureExport(_ store: SQLiteReports, port: Int, _ report: inout Report) async throws {
        let count = try store.count()
        report.section(
            "Export of all \(fmt(count)) reports through `GET /v1/export` (curl to /dev/null)",
            header: ["request", "seconds", "reports/s", "MB sent", "resident memory before → peak (MB)"])
        for query in ["format=geojson", "format=csv", "format=geojsonseq&crs=EPSG:6384"] {
            let before = residentMB()
            let sampler = Task.detached {
                var peak = 0.0
                while !Task.isCancelled {
                    peak = max(peak, residentMB())
                    try? await Task.sleep(for: .milliseconds(20))
                }
                return peak
            }
            var result = (status: Int32(0), bytes: 0)
            let seconds = try await time { result = try curl("http://127.0.0.1:\(port)/v1/export?\(query)") }
            sampler.cancel()
            let peak = max(await sampler.value, residentMB())
            precondition(result.status == 0, "curl failed on \(query)")
            let rate = Double(count) / seconds
            report.row(["`\(query)`", f2(seconds), fmt(Int(rate)), f1(Double(result.bytes) / 1e6), "\(f1(before)) → \(f1(peak))"])
            report.goal("export, \(query): ≥ 200,000 features/s", "\(fmt(Int(rate)))/s", rate >= 200_000)
        }
        report.note("Pages of 2,000 reports are read and written in turn, so the server's memory stays flat however large the export.")
    }
}

/// Fetches a URL with curl into /dev/null; curl's exit status and the bytes received.
func curl(_ url: String) throws -> (status: Int32, bytes: Int) {
    let fetched = try curl(url, writeOut: "%{size_download}")
    return (fetched.status, Int(fetched.text) ?? 0)
}

/// Fetches a URL with curl into /dev/null; curl's exit status and what its `--write-out`
/// format printed (`%{http_code}`: the answer's status, 0 when nothing answered).
func curl(_ url: String, writeOut: String) throws -> (status: Int32, text: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-o", "/dev/null", "-w", writeOut, url]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}

/// The bytes malloc has handed out and not had back, in every arena: unlike the resident
/// size, not moved by what the allocator keeps cached.
func heapInUse() -> Int {
    Int(mallinfo2().uordblks)
}

/// A process's resident memory (VmRSS) in MB: this one's, or `pid`'s.
func residentMB(of pid: Int32? = nil) -> Double {
    guard let status = try? String(contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kB = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kB / 1024
}

/// A request wrk sends.
struct WrkRequest {
    var method = "GET"
    var path: String
    var body: String? = nil
    /// A file whose bytes are the body, sent with `contentType` (instead of a JSON `body`).
    var bodyFile: String? = nil
    var contentType: String? = nil
}

/// What wrk measured: requests/s, latency percentiles in ms, and the answers that were
/// not 2xx or 3xx.
struct WrkResult {
    var rate = Double.nan, p50 = Double.nan, p99 = Double.nan
    var failures = 0

    init() {}

    init(parsing text: String) {
        func milliseconds(_ token: Substring) -> Double {
            for (suffix, factor) in [("us", 0.001), ("ms", 1.0), ("s", 1000.0), ("m", 60_000.0)] where token.hasSuffix(suffix) {
                return (Double(token.dropLast(suffix.count)) ?? .nan) * factor
            }
            return .nan
        }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if line.hasPrefix("Requests/sec:"), let last = fields.last { rate = Double(last) ?? .nan }
            if fields.first == "50%", fields.count > 1 { p50 = milliseconds(fields[1]) }
            if fields.first == "99%", fields.count > 1 { p99 = milliseconds(fields[1]) }
            if line.contains("Non-2xx or 3xx responses:"), let last = fields.last { failures = Int(last) ?? 0 }
        }
        if failures > 0 { Console.error("wrk saw non-2xx answers:\n\(text)") }
    }
}
