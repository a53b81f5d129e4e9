import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GRDB
import Synchronization
import Testing
import TestSupport

/// `posterwatch backup` while the server takes filings, and `posterwatch restore`.
@Suite("Backup and restore")
struct BackupTests {
    /// Runs the CLI off the cooperative pool, so that the filers keep going meanwhile.
    static func runAside(_ cli: CLI, _ arguments: [String]) async throws -> CLI.Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try cli.run(arguments, input: nil) }) }
        }
    }

    /// Files reports from 4 clients until `stop`; the ids answered 201, each with the
    /// moment its answer came.
    static func fileUntil(_ base: String, token: String, stop: @escaping @Sendable () -> Bool) async throws -> [(id: Int, at: ContinuousClock.Instant)] {
        try await withThrowingTaskGroup(of: [(id: Int, at: ContinuousClock.Instant)].self) { group in
            for client in 0..<4 {
                group.addTask {
                    var acknowledged: [(id: Int, at: ContinuousClock.Instant)] = []
                    var n = 0
                    while !stop() {
                        let request = CrashTests.request(base, "/v1/reports", method: "POST", token: token, body: CrashTests.report(client * 10_000 + n))
                        n += 1
                        let (data, response) = try await URLSession.shared.data(for: request)
                        guard (response as? HTTPURLResponse)?.statusCode == 201 else { continue }
                        if let id = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? Int { acknowledged.append((id, .now)) }
                    }
                    return acknowledged
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    static func integrity(_ db: String) throws -> [String] {
        try DatabaseQueue(path: db).read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
    }

    static func ids(in db: String) throws -> Set<Int> {
        try DatabaseQueue(path: db).read { Set(try Int.fetchAll($0, sql: "SELECT id FROM report")) }
    }

    @Test("a backup taken while filings stream in passes integrity_check and holds every report answered before it began; restore serves it, photos included")
    func duringFilings() async throws {
        let cli = try CLI()
        try cli.addInspector(db: "t.sqlite")
        let server = try await cli.serve(db: "t.sqlite", options: ["--write-rate", "0"])
        defer { server.process.terminate() }
        let token = try await CrashTests.signIn(server.base)

        // A photo on a report, so that the backup has a picture to carry.
        let (created, _) = try await URLSession.shared.data(for: CrashTests.request(server.base, "/v1/reports", method: "POST", token: token, body: CrashTests.report(5_000)))
        let reportID = try #require((try JSONSerialization.jsonObject(with: created) as? [String: Any])?["id"] as? Int)
        var upload = CrashTests.request(server.base, "/v1/reports/\(reportID)/photos", method: "POST", token: token, body: Data(TestImages.jpeg(width: 64, height: 48)))
        upload.setValue("image/jpeg", forHTTPHeaderField: "Content-Type")
        let (photoData, photoResponse) = try await URLSession.shared.data(for: upload)
        #expect((photoResponse as? HTTPURLResponse)?.statusCode == 201)
        let photoURL = try #require((try JSONSerialization.jsonObject(with: photoData) as? [String: Any])?["url"] as? String)

        let stopped = Flag()
        async let filed = Self.fileUntil(server.base, token: token, stop: stopped.isSet)
        try await eventually("200 filings", limit: .seconds(600)) {
            guard let (data, _) = try? await URLSession.shared.data(from: URL(string: server.base + "/health")!) else { return false }
            return ((try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["reports"] as? Int ?? 0) >= 200
        }
        let began = ContinuousClock.now
        let backup = try await Self.runAside(cli, ["backup", "--db", "t.sqlite", "--out", "b1"])
        // Filings go on a little after the copy, then stop.
        try await Task.sleep(for: .milliseconds(300))
        stopped.set()
        let acknowledged = try await filed
        #expect(backup.status == 0, "\(backup.stderr)")

        let copy = cli.path("b1/posterwatch.sqlite")
        #expect(try Self.integrity(copy) == ["ok"])
        let inBackup = try Self.ids(in: copy)
        let before = acknowledged.filter { $0.at < began }.map(\.id)
        #expect(before.count >= 150)
        #expect(Set(before).subtracting(inBackup).isEmpty, "answered 201 before the backup began but not in it")
        #expect(inBackup.contains(reportID))
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.path("b1/backup.json")))) as? [String: Any])
        #expect(manifest["reports"] as? Int == inBackup.count && manifest["photos"] as? Int == 1)

        // Restored to a new path and served: the same reports, the photo's very bytes.
        let restore = try cli.run("restore", "b1", "--db", "r.sqlite")
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(try Self.ids(in: cli.path("r.sqlite")) == inBackup)
        let restored = try await cli.serve(db: "r.sqlite")
        defer { restored.process.terminate() }
        let path = try #require(URL(string: photoURL)?.path)
        let (original, _) = try await URLSession.shared.data(from: URL(string: server.base + path)!)
        let (served, response) = try await URLSession.shared.data(from: URL(string: restored.base + path)!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200 && served == original && !served.isEmpty)
        let (health, _) = try await URLSession.shared.data(from: URL(string: restored.base + "/health")!)
        #expect((try JSONSerialization.jsonObject(with: health) as? [String: Any])?["reports"] as? Int == inBackup.count)
    }

    @Test("refusals: a folder not empty, a database in the way, a missing or damaged backup; none writes anything")
    func refusals() throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "50", "--seed", "4", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        let missingDB = try cli.run("backup", "--db", "nothing.sqlite", "--out", "b0")
        #expect(missingDB.status != 0 && missingDB.stderr.contains("does not exist"))
        #expect(!FileManager.default.fileExists(atPath: cli.path("nothing.sqlite")))
        #expect(try cli.run("backup", "--db", "t.sqlite", "--out", "b1").status == 0)
        let again = try cli.run("backup", "--db", "t.sqlite", "--out", "b1")
        #expect(again.status != 0 && again.stderr.contains("not empty"))

        // A database in the way is refused, then moved aside (never deleted) with --replace.
        #expect(try cli.run("import", "r.geojsonl", "--db", "other.sqlite").status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: cli.path("other.sqlite")))
        let inTheWay = try cli.run("restore", "b1", "--db", "other.sqlite")
        #expect(inTheWay.status != 0 && inTheWay.stderr.contains("--replace"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.path("other.sqlite"))) == before)
        // Its saved index (a server's, on its stop) goes aside with it: it is not the restored database's.
        FileManager.default.createFile(atPath: cli.path("other.sqlite.index"), contents: Data("saved".utf8))
        let replaced = try cli.run("restore", "b1", "--db", "other.sqlite", "--replace")
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let aside = try FileManager.default.contentsOfDirectory(atPath: cli.directory.path).filter {
            $0.hasPrefix("other.sqlite.before-restore-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") && !$0.hasSuffix(".index")
        }
        #expect(aside.count == 1)
        #expect(!FileManager.default.fileExists(atPath: cli.path("other.sqlite.index")))
        #expect(FileManager.default.fileExists(atPath: cli.path(aside[0] + ".index")))

        // Not a backup, an unfinished one, a damaged one.
        let notBackup = try cli.run("restore", "r.geojsonl", "--db", "x.sqlite")
        #expect(notBackup.status != 0 && notBackup.stderr.contains("backup.json"))
        try FileManager.default.copyItem(atPath: cli.path("b1"), toPath: cli.path("b2"))
        let damaged = URL(fileURLWithPath: cli.path("b2/posterwatch.sqlite"))
        var bytes = try Data(contentsOf: damaged)
        for i in stride(from: 8_192, to: min(bytes.count, 40_960), by: 7) { bytes[i] ^= 0x5A }
        try bytes.write(to: damaged)
        let broken = try cli.run("restore", "b2", "--db", "y.sqlite")
        #expect(broken.status != 0)
        try FileManager.default.removeItem(atPath: cli.path("b1/backup.json"))
        let unfinished = try cli.run("restore", "b1", "--db", "z.sqlite")
        #expect(unfinished.status != 0 && unfinished.stderr.contains("did not finish"))
        for name in ["x.sqlite", "y.sqlite", "z.sqlite"] { #expect(!FileManager.default.fileExists(atPath: cli.path(name))) }
    }
}

/// A flag one task sets and others read.
final class Flag: Sendable {
    private let value = Atomic(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: @Sendable () -> Bool { { [self] in value.load(ordering: .relaxed) } }
}
