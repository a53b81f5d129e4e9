import Accounts
import Foundation
import GRDB
import Generator
import Geometry
import ReportModel
import ReportService
import SQLiteStore

/// Numbers ranked by reports (`/v1/stats/phones`), the dashboard's counts (`/v1/stats`)
/// and blocking, on a copy of the bench database; PostgreSQL (with PostGIS when it is
/// installed) answering the same GROUP BY beside it.
extension Bench {
    func measurePhones(_ source: SQLiteReports, _ report: inout Report) async throws {
        let store = try copy(source, to: "\(work)/phones.sqlite")
        var built: ReportService?
        let startup = try await time { built = try await ReportService(storage: store) }
        let service = built!
        let tallyBuild = try await time { _ = ReportService.tally(try store.snapshot { id, _, _, _ in id }.tally, store.reference) }
        let total = service.reportCount

        report.section(
            "Numbers ranked by reports, and the dashboard's counts, on \(fmt(total)) reports, from memory (p50 / p99, ms)",
            header: ["query", "reports counted (mean)", "ms"])
        var rng = SplitMix64(state: 15)
        func viewports(_ zoom: Int) -> [BoundingBox] {
            let base = WebMercator.viewport(center: ReportGenerator.kyivCenter, zoom: Double(zoom), width: 1280, height: 800)
            return (0..<repeats).map { _ in
                let dx = (base.east - base.west) * 0.1 * (2 * rng.unit() - 1), dy = (base.north - base.south) * 0.1 * (2 * rng.unit() - 1)
                return try! BoundingBox(west: base.west + dx, south: base.south + dy, east: base.east + dx, north: base.north + dy)
            }
        }
        let runs = Array(0..<repeats)
        let cityWide = try await samples(runs) { _ in _ = try await service.topPhones(box: nil, created: nil, statuses: nil, district: nil, limit: 50) }
        report.row(["top 50, city-wide", fmt(total), cityWide.text])
        report.goal("city-wide top 50 phones: p50 ≤ 5 ms", "\(f3(cityWide.p50)) ms", cityWide.p50 <= 5)
        let open = try await samples(runs) { _ in _ = try await service.topPhones(box: nil, created: nil, statuses: ["new", "verifying", "confirmed"], district: nil, limit: 50) }
        report.row(["top 50, city-wide, open statuses", "–", open.text])
        let district = try await samples(runs) { _ in _ = try await service.topPhones(box: nil, created: nil, statuses: nil, district: "pecherskyi", limit: 50) }
        report.row(["top 50, one district", fmt(total), district.text])
        var z12Seen = 0
        let z12Boxes = viewports(12)
        for box in z12Boxes { z12Seen += try service.summary(box: box, created: nil).total }
        let z12 = try await samples(z12Boxes) { _ = try await service.topPhones(box: $0, created: nil, statuses: nil, district: nil, limit: 50) }
        report.row(["top 50, z12 viewport (1280×800)", fmt(z12Seen / z12Boxes.count), z12.text])
        report.goal("top 50 phones of a z12 viewport: p50 ≤ 50 ms", "\(f3(z12.p50)) ms", z12.p50 <= 50)
        let year = Int64(Date().addingTimeInterval(-365 * 86_400).timeIntervalSince1970 * 1000)...Int64.max
        let z12Year = try await samples(z12Boxes) { _ = try await service.topPhones(box: $0, created: year, statuses: nil, district: nil, limit: 50) }
        report.row(["top 50, z12 viewport, filed in the last 365 days", "–", z12Year.text])
        let z14Boxes = viewports(14)
        var z14Seen = 0
        for box in z14Boxes { z14Seen += try service.summary(box: box, created: nil).total }
        let z14 = try await samples(z14Boxes) { _ = try await service.topPhones(box: $0, created: nil, statuses: nil, district: nil, limit: 50) }
        report.row(["top 50, z14 viewport", fmt(z14Seen / z14Boxes.count), z14.text])
        let statsAll = try await samples(runs) { _ in _ = try service.summary(box: nil, created: nil) }
        report.row(["dashboard counts (`/v1/stats`), city-wide", fmt(total), statsAll.text])
        let statsZ12 = try await samples(z12Boxes) { _ = try service.summary(box: $0, created: nil) }
        report.row(["dashboard counts, z12 viewport", fmt(z12Seen / z12Boxes.count), statsZ12.text])
        report.note(
            "The service starts in \(f2(startup)) s (one read of the rows for the cluster index and the tally, and both built); reading the rows again and building the tally alone takes \(f2(tallyBuild)) s. City-wide rankings without an area or period read the counts kept per number; the others walk the cluster index's reports of the area.")

        try await measurePostgres(store, cityWide: cityWide, z12: z12, z12Boxes: z12Boxes, &report)
        try await measureBlocking(service, &report)
    }

    /// Blocking a number that 1,000 confirmed reports carry (all of them move).
    private func measureBlocking(_ service: ReportService, _ report: inout Report) async throws {
        report.section("Blocking a number on \(fmt(service.reportCount)) reports (ms)", header: ["reports moved", "block", "unblock (all move back)"])
        let supervisor = Caller(accountID: nil, role: .supervisor)
        var blocks: [Double] = [], unblocks: [Double] = []
        for round in 0..<5 {
            let number = "38099\(String(format: "%07d", 1_000_000 + round))"
            let drafts = ReportGenerator(count: 1_000, seed: UInt64(round), distribution: .kyiv, reference: service.reference).map { r in
                ReportDraft(
                    id: nil, coordinate: r.coordinate, address: r.address, city: r.city, district: r.district, objectType: r.objectType,
                    balanceHolder: r.balanceHolder, violator: r.violator, phones: [number], comment: nil, status: "confirmed")
            }
            _ = try service.insert(drafts)
            _ = try await service.verify(number, outcome: .violator, note: nil, by: supervisor)
            var moved = 0
            let start = DispatchTime.now().uptimeNanoseconds
            moved = try await service.block(number, note: "bench", by: supervisor).moved.count
            blocks.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            let back = DispatchTime.now().uptimeNanoseconds
            _ = try await service.unblock(number, note: "bench", by: supervisor)
            unblocks.append(Double(DispatchTime.now().uptimeNanoseconds - back) / 1e6)
            precondition(moved == 1_000, "the block moved \(moved) reports")
        }
        let block = Samples(milliseconds: blocks), unblock = Samples(milliseconds: unblocks)
        report.row(["1,000", block.text, unblock.text])
        report.goal("blocking a number with 1,000 confirmed reports (all move): ≤ 100 ms", "\(f1(block.p50)) ms p50, \(f1(block.percentile(1))) ms worst", block.percentile(1) <= 100)
    }

    /// The same rankings as one GROUP BY in PostgreSQL over the same rows (a number and
    /// where its report is), with PostGIS and a GiST index when PostGIS is installed, a
    /// GiST index on `point` otherwise; timed by psql itself, so no connection is counted.
    private func measurePostgres(_ store: SQLiteReports, cityWide: Samples, z12: Samples, z12Boxes: [BoundingBox], _ report: inout Report) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/psql"), (try? psql("SELECT 1;")) != nil else {
            report.note("PostgreSQL is not running here (`pg_ctlcluster 15 main start`), so it was not measured beside.")
            return
        }
        let csv = "/tmp/posterwatch-bench-phones.csv"
        try await store.pool.read { db in
            FileManager.default.createFile(atPath: csv, contents: nil)
            let file = try FileHandle(forWritingTo: URL(fileURLWithPath: csv))
            defer { try? file.close() }
            let rows = try Row.fetchCursor(db, sql: "SELECT phone, longitude, latitude, status FROM report_phone")
            var chunk = ""
            while let row = try rows.next() {
                chunk += "\(row[0] as String),\(row[1] as Double),\(row[2] as Double),\(row[3] as String)\n"
                if chunk.utf8.count > 1 << 20 { file.write(Data(chunk.utf8)); chunk = "" }
            }
            file.write(Data(chunk.utf8))
        }
        defer { try? FileManager.default.removeItem(atPath: csv) }
        let postgis = (try? psql("CREATE EXTENSION IF NOT EXISTS postgis;")) != nil
        let spatial = postgis
            ? "ALTER TABLE bench_phone ADD COLUMN geom geometry(Point, 4326); UPDATE bench_phone SET geom = ST_SetSRID(ST_MakePoint(lon, lat), 4326); CREATE INDEX ON bench_phone USING gist (geom);"
            : "CREATE INDEX ON bench_phone USING gist (point(lon, lat));"
        let load = try await time {
            _ = try psql("""
                DROP TABLE IF EXISTS bench_phone;
                CREATE TABLE bench_phone (phone text NOT NULL, lon float8 NOT NULL, lat float8 NOT NULL, status text NOT NULL);
                COPY bench_phone FROM '\(csv)' (FORMAT csv);
                \(spatial)
                VACUUM ANALYZE bench_phone;
                """)
        }
        func area(_ b: BoundingBox) -> String {
            postgis ? "geom && ST_MakeEnvelope(\(b.west), \(b.south), \(b.east), \(b.north), 4326)" : "point(lon, lat) <@ box(point(\(b.west), \(b.south)), point(\(b.east), \(b.north)))"
        }
        let top = "GROUP BY phone ORDER BY count(*) DESC, phone LIMIT 50;"
        let cityQueries = Array(repeating: "SELECT phone, count(*) FROM bench_phone \(top)", count: 10)
        let boxQueries = z12Boxes.prefix(20).map { "SELECT phone, count(*) FROM bench_phone WHERE \(area($0)) \(top)" }
        let pgCity = Samples(milliseconds: try timed(cityQueries)), pgZ12 = Samples(milliseconds: try timed(boxQueries))
        report.section(
            "The same rankings in PostgreSQL \(postgis ? "with PostGIS" : "(a GiST index on point; PostGIS is not installed)") (p50 / p99, ms)",
            header: ["query", "PostgreSQL", "PosterWatch", "PosterWatch faster"])
        report.row(["top 50, city-wide", pgCity.text, cityWide.text, "\(f1(pgCity.p50 / cityWide.p50))×"])
        report.row(["top 50, z12 viewport", pgZ12.text, z12.text, "\(f1(pgZ12.p50 / z12.p50))×"])
        report.note("PostgreSQL 15 as Debian ships it (default settings), the \(await fmt(try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM report_phone") ?? 0 })) (number, report) rows loaded, indexed and analyzed in \(f1(load)) s; each query timed by psql's `\\timing`, after one run unmeasured.")
        _ = try? psql("DROP TABLE IF EXISTS bench_phone;")
    }

    /// Runs each query once unmeasured and once measured in one psql session; psql's times.
    private func timed(_ queries: [String]) throws -> [Double] {
        let script = (queries.prefix(1) + ["\\timing on"] + queries).joined(separator: "\n")
        let output = try psql(script)
        return output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("Time: ") else { return nil }
            return Double(line.dropFirst(6).split(separator: " ")[0])
        }
    }

    /// Runs a script in psql as the `postgres` user; its standard output, or an error.
    private func psql(_ script: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        process.arguments = ["-u", "postgres", "--", "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data(script.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PostgresFailed(status: process.terminationStatus) }
        return String(decoding: data, as: UTF8.self)
    }
}

struct PostgresFailed: Error { var status: Int32 }
