import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
import TestSupport

/// Several processes on one database: what one writes, a running server shows without a
/// restart (its index and tiles follow the changes table); what one ends or narrows of an
/// account's power, every other refuses as soon as it follows the account events (every
/// quarter of a second; the tests wait for it under load, and the token would live 15 minutes).
@Suite("Two processes, one database", .serialized)
struct TwoProcessTests {
    /// The database the servers share: an SQLite file in the test's folder, or (when the
    /// test cluster runs) a fresh PostgreSQL database, for replicas on PostgreSQL.
    struct Shared: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let open: @Sendable (_ file: String) throws -> (db: String, keep: AnyObject?)

        static let all = [Shared(testDescription: "SQLite") { ($0, nil) }]
            + (TestPostgresDatabase.clusterURL == nil ? [] : [
                Shared(testDescription: "PostgreSQL") { _ in
                    let database = try TestPostgresDatabase()
                    return (database.url, database)
                }
            ])
    }

    /// The reports `/health` and the world's clusters at zoom 0 count on `base`.
    static func counts(_ base: String) async throws -> (health: Int, clusters: Int) {
        let (health, _) = try await URLSession.shared.data(from: URL(string: base + "/health")!)
        let reports = (try JSONSerialization.jsonObject(with: health) as? [String: Any])?["reports"] as? Int ?? -1
        let (page, _) = try await URLSession.shared.data(from: URL(string: base + "/v1/clusters?bbox=-180,-85,180,85&zoom=0")!)
        let features = (try JSONSerialization.jsonObject(with: page) as? [String: Any])?["features"] as? [[String: Any]] ?? []
        let clustered = features.map { $0["properties"] as! [String: Any] }.reduce(0) { $0 + ($1["cluster"] as? Bool == true ? $1["count"] as! Int : 1) }
        return (reports, clustered)
    }

    @Test("an import into a served database, and a filing through a second server, show in /health and /v1/clusters without a restart", arguments: Shared.all)
    func importWhileServing(_ shared: Shared) async throws {
        let cli = try CLI()
        let (db, keep) = try shared.open("s.sqlite")
        defer { _ = keep }
        #expect(try cli.run("generate", "--count", "300", "--seed", "5", "--out", "r.geojsonl").status == 0)
        try cli.addInspector(db: db)
        let server = try await cli.serve(db: db)
        defer { server.process.terminate() }
        #expect(try await Self.counts(server.base) == (0, 0))

        let imported = try cli.run(["import", "r.geojsonl"] + CLI.database(db), input: nil)
        #expect(imported.status == 0, "\(imported.stderr)")
        try await eventually { (try? await Self.counts(server.base)) ?? (0, 0) == (300, 300) }
        #expect(try await Self.counts(server.base) == (300, 300))

        let second = try await cli.serve(db: db)
        defer { second.process.terminate() }
        let token = try await CrashTests.signIn(second.base)
        _ = try await WebhookTests.file(second.base, token: token, from: 7, count: 1)
        try await eventually { (try? await Self.counts(server.base)) ?? (0, 0) == (301, 301) }
        #expect(try await Self.counts(server.base) == (301, 301), "the first server shows the second's filing")
    }

    @Test("the change log across processes: two servers file at once while a reader follows the feed of one of them in small pages; it meets every change exactly once, in order, and the pages agree with the whole log", arguments: Shared.all)
    func changeLogAcrossServers(_ shared: Shared) async throws {
        let cli = try CLI()
        let (db, keep) = try shared.open("c.sqlite")
        defer { _ = keep }
        try cli.addInspector(db: db)
        let one = try await cli.serve(db: db, options: ["--write-rate", "0"])
        defer { one.process.terminate() }
        let two = try await cli.serve(db: db, options: ["--write-rate", "0"])
        defer { two.process.terminate() }
        let (first, second) = (try await CrashTests.signIn(one.base), try await CrashTests.signIn(two.base))
        /// The numbers of a feed page after `since`, and its `last_seq`.
        func page(after since: Int, limit: Int) async throws -> (seqs: [Int], last: Int) {
            let answer = try await Self.call(one.base, "/v1/changes?since=\(since)&limit=\(limit)")
            let changes = try #require(answer.json["changes"] as? [[String: Any]])
            return (changes.compactMap { $0["seq"] as? Int }, try #require(answer.json["last_seq"] as? Int))
        }
        let writing = Writing()
        let writers = Task {
            defer { writing.on.store(false, ordering: .releasing) }
            async let a = WebhookTests.file(one.base, token: first, from: 100, count: 60)
            async let b = WebhookTests.file(two.base, token: second, from: 200, count: 60)
            return try await (a + b).count
        }
        var seen: [Int] = [], last = 0
        while true {
            let done = !writing.on.load(ordering: .acquiring)
            let (seqs, _) = try await page(after: last, limit: 3)
            for seq in seqs {
                #expect(seq > last, "change \(seq) came after \(last)")
                seen.append(seq)
                last = seq
            }
            if done && seqs.isEmpty { break }
            if seqs.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(try await writers.value == 120)
        let whole = try await page(after: 0, limit: 1_000)
        #expect(seen == whole.seqs && whole.last == seen.last, "every change once, in order, as the whole log has them")
        #expect(Set(seen).count == 120)
    }

    /// Whether writers still write (an Atomic cannot be captured by an escaping closure).
    final class Writing: Sendable {
        let on = Atomic<Bool>(true)
        /// Filings answered so far.
        let made = Atomic<Int>(0)
    }

    /// One HTTP call to `base`: its status and JSON body.
    static func call(_ base: String, _ path: String, method: String = "GET", token: String? = nil, json: [String: Any]? = nil) async throws
        -> (status: Int, json: [String: Any])
    {
        let body = try json.map { try JSONSerialization.data(withJSONObject: $0) }
        let (data, response) = try await URLSession.shared.data(for: CrashTests.request(base, path, method: method, token: token, body: body))
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
    }

    /// Signs `email` in on `base`: its access and refresh tokens.
    static func signIn(_ base: String, _ email: String) async throws -> (access: String, refresh: String) {
        let answer = try await call(base, "/v1/auth/login", method: "POST", json: ["login": email, "password": CLI.inspectorPassword])
        return (try #require(answer.json["access_token"] as? String), try #require(answer.json["refresh_token"] as? String))
    }

    /// A second's pause: filings go on meanwhile, or what one server did reaches the other.
    static func aSecond() async throws { try await Task.sleep(for: .seconds(1)) }

    /// Waits until `path` with `token` answers `status` on `base`: what one server ended, the
    /// other refuses once it has followed the account events, long before the token would expire.
    static func refused(_ base: String, _ path: String, token: String, status: Int = 401, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await eventually("\(path) to answer \(status)", sourceLocation: sourceLocation) {
            try await Self.call(base, path, token: token).status == status
        }
    }

    @Test("a logout, a refresh reuse, a role change and a disabled account on one server are refused by the other once it follows the account events; so is a change made by the CLI; a staff stream on the other ends", arguments: Shared.all)
    func revocationAcrossServers(_ shared: Shared) async throws {
        let cli = try CLI()
        let (db, keep) = try shared.open("r.sqlite")
        defer { _ = keep }
        var ids: [String: Int] = [:]
        for (name, role) in [("admin", "admin"), ("boss", "admin"), ("super", "supervisor"), ("i1", "inspector"), ("i2", "inspector"), ("i3", "inspector")] {
            let added = try cli.run(
                ["user", "add", "--name", name, "--email", "\(name)@example.org", "--phone", "067 000 00 01", "--role", role] + CLI.database(db),
                input: CLI.inspectorPassword + "\n")
            #expect(added.status == 0, "\(added.stderr)")
            ids[name] = Int(added.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let one = try await cli.serve(db: db)
        defer { one.process.terminate() }
        let two = try await cli.serve(db: db)
        defer { two.process.terminate() }
        let admin = try await Self.signIn(one.base, "admin@example.org").access

        // Logout on one.
        let i1 = try await Self.signIn(one.base, "i1@example.org")
        #expect(try await Self.call(two.base, "/v1/me", token: i1.access).status == 200)
        #expect(try await Self.call(one.base, "/v1/auth/logout", method: "POST", token: i1.access).status == 204)
        try await Self.refused(two.base, "/v1/me", token: i1.access)
        let filing = try await URLSession.shared.data(for: CrashTests.request(two.base, "/v1/reports", method: "POST", token: i1.access, body: CrashTests.report(1)))
        #expect((filing.1 as? HTTPURLResponse)?.statusCode == 401)
        #expect(try await Self.counts(one.base).health == 0, "the refused filing wrote nothing")

        // A refresh token used twice: the second use on one ends the session the first use on two renewed.
        let i2 = try await Self.signIn(one.base, "i2@example.org")
        let renewed = try await Self.call(two.base, "/v1/auth/refresh", method: "POST", json: ["refresh_token": i2.refresh])
        let renewedAccess = try #require(renewed.json["access_token"] as? String)
        #expect(try await Self.call(one.base, "/v1/auth/refresh", method: "POST", json: ["refresh_token": i2.refresh]).status == 401)
        try await Self.refused(two.base, "/v1/me", token: renewedAccess)

        // A demotion on one: the old administrator's token on two may no longer administer.
        let boss = try await Self.signIn(two.base, "boss@example.org").access
        #expect(try await Self.call(two.base, "/v1/users", token: boss).status == 200)
        #expect(try await Self.call(one.base, "/v1/users/\(ids["boss"]!)", method: "PATCH", token: admin, json: ["role": "inspector"]).status == 200)
        try await Self.refused(two.base, "/v1/users", token: boss, status: 403)
        #expect(try await Self.call(two.base, "/v1/users/\(ids["i3"]!)", method: "PATCH", token: boss, json: ["role": "supervisor"]).status == 403)

        // Disabling on one.
        let i3 = try await Self.signIn(two.base, "i3@example.org").access
        #expect(try await Self.call(one.base, "/v1/users/\(ids["i3"]!)", method: "PATCH", token: admin, json: ["disabled": true]).status == 200)
        try await Self.refused(two.base, "/v1/me", token: i3)

        // A staff stream on two while reports are filed through one without pause; the
        // supervisor disabled by `posterwatch user disable`, a third process. No change
        // committed after the disable reaches the stream, however soon after it comes.
        let supervisor = try await Self.signIn(one.base, "super@example.org")
        let port = try #require(Int(two.base.split(separator: ":").last ?? ""))
        let stream = try RawConnection(port: port)
        stream.send("GET /v1/changes/stream HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer \(supervisor.access)\r\n\r\n")
        #expect(await stream.read(until: ": live").contains(": live"))
        try cli.addInspector(db: db)
        let filer = try await CrashTests.signIn(one.base)
        // Stopped by a flag, not by cancelling: cancelling a task inside URLSession's
        // `data(for:)` can deadlock corelibs Foundation (the cancel handler waits on the
        // session's queue while that queue waits to resume the same task).
        let writing = Writing()
        let filings = Task {
            var n = 10
            while writing.on.load(ordering: .acquiring) {
                _ = try? await URLSession.shared.data(for: CrashTests.request(one.base, "/v1/reports", method: "POST", token: filer, body: CrashTests.report(n)))
                n += 1
                writing.made.add(1, ordering: .releasing)
            }
            return n - 10
        }
        // Filings before and after the disable, however slowly each is answered under load.
        try await eventually { writing.made.load(ordering: .acquiring) >= 5 }
        #expect(try cli.run(["user", "disable", "\(ids["super"]!)"] + CLI.database(db), input: nil).status == 0)
        let lastBefore = try #require(try await Self.call(one.base, "/v1/changes?since=0&limit=1000").json["last_seq"] as? Int)
        let madeBefore = writing.made.load(ordering: .acquiring)
        try await Self.aSecond()
        try await eventually { writing.made.load(ordering: .acquiring) >= madeBefore + 5 }
        writing.on.store(false, ordering: .releasing)
        #expect(await filings.value >= 10, "filings went on around the disable")
        try await Self.refused(two.base, "/v1/me", token: supervisor.access)
        let rest = await stream.readToClose()
        #expect(rest.closed, "the stream was closed")
        let delivered = EventStream.ids(rest.text)
        #expect(!delivered.isEmpty, "events came before the disable (else this proves little)")
        #expect(delivered.allSatisfy { $0 <= lastBefore }, "no event committed after the disable: \(delivered.filter { $0 > lastBefore })")

        // Enabling again brings no session back: the disable ended them.
        #expect(try cli.run(["user", "enable", "\(ids["super"]!)"] + CLI.database(db), input: nil).status == 0)
        try await Self.aSecond()
        #expect(try await Self.call(two.base, "/v1/me", token: supervisor.access).status == 401)
        #expect(try await Self.call(two.base, "/v1/auth/refresh", method: "POST", json: ["refresh_token": supervisor.refresh]).status == 401)
        #expect(try await Self.signIn(two.base, "super@example.org").access.isEmpty == false)
    }
}

/// `posterwatch migrate`, as an operator runs it: interrupted and run again, refused into
/// a database of its own, and the moved city served from PostgreSQL.
@Suite("posterwatch migrate", .serialized, .enabled(if: TestPostgresDatabase.clusterURL != nil))
struct MigrateCommandTests {
    @Test("an interrupted move runs again to the end without writing anything twice; the moved city is served with the same reports and accounts; a target with data of its own is refused")
    func interruptedAndServed() async throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "500", "--seed", "9", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "city.sqlite").status == 0)
        try cli.addInspector(db: "city.sqlite")
        let database = try TestPostgresDatabase()
        let from = "sqlite://" + cli.path("city.sqlite")
        let stopped = try cli.run(["migrate", "--from", from, "--to", database.url, "--batch-size", "100", "--stop-after-batches", "7"], input: nil)
        #expect(stopped.status != 0 && stopped.stderr.contains("run the same command again"), "\(stopped.stderr)")
        let partial = try TestPostgresDatabase.psql("SELECT count(*) FROM report", database: database.name).first.flatMap { Int($0) } ?? -1
        #expect(partial > 0 && partial < 500, "some reports in before the stop: \(partial)")

        let moved = try cli.run(["migrate", "--from", from, "--to", database.url, "--batch-size", "100"], input: nil)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stderr.contains("moved 500 reports"), "\(moved.stderr)")
        #expect(!moved.stderr.contains(database.url) && !moved.stderr.contains("postgres://"), "the URL is not repeated")
        #expect(try TestPostgresDatabase.psql("SELECT count(*), count(DISTINCT id) FROM report", database: database.name) == ["500|500"])

        let server = try await cli.serve(db: database.url)
        defer { server.process.terminate() }
        #expect(try await TwoProcessTests.counts(server.base) == (500, 500))
        _ = try await CrashTests.signIn(server.base)  // the inspector's password moved with the account

        let other = try TestPostgresDatabase()
        #expect(try cli.run(["user", "add", "--name", "Своя", "--email", "own@example.org", "--phone", "067 000 00 09", "--role", "admin"] + CLI.database(other.url),
                            input: CLI.inspectorPassword + "\n").status == 0)
        let refused = try cli.run(["migrate", "--from", from, "--to", other.url], input: nil)
        #expect(refused.status != 0 && refused.stderr.contains("already holds data"), "\(refused.stderr)")
        #expect(try TestPostgresDatabase.psql("SELECT count(*) FROM report", database: other.name) == ["0"])
    }
}

/// `deploy/nginx-replicas.conf` as it ships, run by Debian's nginx in front of two
/// replicas on one PostgreSQL database: any replica answers, a token from one is taken by
/// the other, and when one stops the other goes on answering through nginx.
@Suite("nginx in front of two replicas", .serialized,
       .enabled(if: TestPostgresDatabase.clusterURL != nil && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx")))
struct ReplicasBehindNginxTests {
    /// The example's server block on the test's ports, inside the main context Debian's
    /// nginx.conf would give it, with its files in the test's folder.
    static func configuration(_ cli: CLI, listen: Int, replicas: [Int]) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var site = try String(contentsOf: root.appendingPathComponent("deploy/nginx-replicas.conf"), encoding: .utf8)
        #expect(site.contains("127.0.0.1:8081") && site.contains("127.0.0.1:8082") && site.contains("listen 8080;"))
        site = site.replacingOccurrences(of: "127.0.0.1:8081", with: "127.0.0.1:\(replicas[0])")
            .replacingOccurrences(of: "127.0.0.1:8082", with: "127.0.0.1:\(replicas[1])")
            .replacingOccurrences(of: "listen 8080;", with: "listen 127.0.0.1:\(listen);")
        let folder = cli.path("nginx")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return """
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log;
            events { worker_connections 256; }
            http {
                access_log \(folder)/access.log;
                client_body_temp_path \(folder)/body;
                proxy_temp_path \(folder)/proxy;
                fastcgi_temp_path \(folder)/fastcgi;
                uwsgi_temp_path \(folder)/uwsgi;
                scgi_temp_path \(folder)/scgi;
            \(site)
            }
            """
    }

    /// Debian's nginx with the shipped configuration in front of the replicas at `bases`,
    /// answering; and its address.
    static func nginx(_ cli: CLI, in bases: [String]) async throws -> (process: Process, base: String) {
        let listen = CLI.freePort()
        let conf = cli.path("nginx.conf")
        try configuration(cli, listen: listen, replicas: bases.map { Int($0.split(separator: ":").last!)! }).write(toFile: conf, atomically: true, encoding: .utf8)
        let nginx = Process()
        nginx.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        nginx.arguments = ["-c", conf, "-g", "daemon off;"]
        nginx.standardError = FileHandle.nullDevice
        try nginx.run()
        let base = "http://127.0.0.1:\(listen)"
        try await eventually { (try? await URLSession.shared.data(from: URL(string: base + "/health")!)) != nil }
        return (nginx, base)
    }

    /// A POST of report `n` with an idempotency key: its status and answer.
    static func file(_ base: String, token: String, _ n: Int, key: String) async throws -> (status: Int, body: Data) {
        var request = CrashTests.request(base, "/v1/reports", method: "POST", token: token, body: CrashTests.report(n))
        request.setValue(key, forHTTPHeaderField: "Idempotency-Key")
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test("two replicas behind the shipped nginx: a filing on one shows on the other (report, search, clusters, tiles, change stream); tokens, refresh reuse and idempotency keys are shared; SIGKILL of one mid-stream loses no acknowledged report and doubles none; every webhook arrives once, verified")
    func replicas() async throws {
        let cli = try CLI()
        let database = try TestPostgresDatabase()
        try cli.addInspector(db: database.url)
        let hookPort = CLI.freePort()
        let added = try cli.run(["webhook", "add", "http://127.0.0.1:\(hookPort)/hook", "--events", "report.created", "--description", "replicas"] + CLI.database(database.url), input: nil)
        #expect(added.status == 0, "\(added.stderr)")
        let receiver = try await WebhookTests.Receiver(cli, name: "hook", port: hookPort, secret: added.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        defer { receiver.stop() }
        let options = ["--write-rate", "0", "--login-rate", "0", "--webhook-first-retry", "0.1", "--webhook-timeout", "30"]
        let one = try await cli.serve(db: database.url, options: options)
        defer { kill(one.process.processIdentifier, SIGKILL) }
        let two = try await cli.serve(db: database.url, options: options)
        defer { two.process.terminate() }
        let (nginx, base) = try await Self.nginx(cli, in: [one.base, two.base])
        defer { nginx.terminate() }

        // The change stream of replica two, from the start.
        let stream = Process()
        stream.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        stream.arguments = ["-sN", "-o", cli.path("stream.txt"), two.base + "/v1/changes/stream?since=0"]
        try stream.run()
        defer { stream.terminate() }

        // A token signed by one is taken by the other.
        let token = try await CrashTests.signIn(one.base)
        #expect(try await TwoProcessTests.call(two.base, "/v1/me", token: token).status == 200)

        // Filed on one, seen on two: the report, a search for its number, the clusters, a
        // tile, the change stream.
        let tile = "/v1/tiles/14/9578/5528.png"  // the tile of CrashTests.report(7)'s place (30.457, 50.4)
        let (emptyTile, _) = try await URLSession.shared.data(from: URL(string: two.base + tile)!)
        let id = try #require(try await WebhookTests.file(one.base, token: token, from: 7, count: 1).first)
        try await eventually { (try? await TwoProcessTests.counts(two.base))?.clusters == 1 }
        #expect(try await TwoProcessTests.call(two.base, "/v1/reports/\(id)").status == 200)
        let found = try await TwoProcessTests.call(two.base, "/v1/search?q=0670000007")
        #expect((found.json["features"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } == [id], "\(found.json)")
        #expect(try await TwoProcessTests.counts(two.base) == (1, 1))
        let (drawn, _) = try await URLSession.shared.data(from: URL(string: two.base + tile)!)
        #expect(drawn != emptyTile, "the tile shows the new report")
        try await eventually { EventStream.ids((try? String(contentsOfFile: cli.path("stream.txt"), encoding: .utf8)) ?? "").count >= 1 }
        #expect(!EventStream.ids((try? String(contentsOfFile: cli.path("stream.txt"), encoding: .utf8)) ?? "").isEmpty, "the other replica's stream carries it")

        // A refresh token rotated on one is a reuse on the other.
        let pair = try await TwoProcessTests.signIn(one.base, CLI.inspectorEmail)
        #expect(try await TwoProcessTests.call(one.base, "/v1/auth/refresh", method: "POST", json: ["refresh_token": pair.refresh]).status == 200)
        #expect(try await TwoProcessTests.call(two.base, "/v1/auth/refresh", method: "POST", json: ["refresh_token": pair.refresh]).status == 401)

        // An idempotency key retried on the other replica replays the first answer.
        let first = try await Self.file(one.base, token: token, 8, key: "retry-8")
        let again = try await Self.file(two.base, token: token, 8, key: "retry-8")
        #expect(first.status == 201 && again.status == 201 && first.body == again.body, "the same answer, once")

        // Filings stream through nginx from 4 clients; replica one is killed midway.
        let acknowledged = try await withThrowingTaskGroup(of: [Int].self) { group in
            for client in 0..<4 {
                group.addTask {
                    var ids: [Int] = []
                    for n in 0..<60 {
                        let request = CrashTests.request(base, "/v1/reports", method: "POST", token: token, body: CrashTests.report(1_000 + client * 100 + n))
                        guard let (data, response) = try? await URLSession.shared.data(for: request),
                              (response as? HTTPURLResponse)?.statusCode == 201 else { continue }
                        if let id = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? Int { ids.append(id) }
                    }
                    return ids
                }
            }
            group.addTask {
                try await eventually { ((try? await TwoProcessTests.counts(two.base))?.health ?? 0) >= 60 }
                kill(one.process.processIdentifier, SIGKILL)
                one.process.waitUntilExit()
                return []
            }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        #expect(Set(acknowledged).count == acknowledged.count && acknowledged.count >= 60)
        var missing: [Int] = []
        for id in acknowledged where try await TwoProcessTests.call(base, "/v1/reports/\(id)").status != 200 { missing.append(id) }
        #expect(missing.isEmpty, "answered 201 but lost: \(missing.prefix(10))")
        let doubled = try TestPostgresDatabase.psql("SELECT address FROM report GROUP BY address HAVING count(*) > 1", database: database.name)
        #expect(doubled.isEmpty, "no filing stored twice: \(doubled.prefix(5))")

        // Every report's creation reaches the receiver once, verified, one body per message.
        let all = try TestPostgresDatabase.psql("SELECT id FROM report", database: database.name).compactMap { Int($0) }
        try await eventually { Set(receiver.delivered().values) == Set(all) }
        #expect(Set(receiver.delivered().values) == Set(all), "every creation delivered")
        let requests = receiver.requests()
        #expect(requests.allSatisfy { $0["verified"] as? Bool == true }, "standardwebhooks verifies every signature")
        let byMessage = Dictionary(grouping: requests, by: { $0["id"] as? String ?? "" })
        #expect(byMessage.values.allSatisfy { Set($0.compactMap { $0["body"] as? String }).count == 1 }, "each webhook-id with one body")
        #expect(byMessage.values.allSatisfy { $0.contains { $0["status"] as? Int == 204 } }, "each delivered")
        // At least once, as documented: a delivery the killed replica had sent but not yet
        // recorded is sent again, under the same webhook-id (a consumer dedupes on it); only
        // those it had in flight (WebhookSettings.maxInFlight, 128) can arrive twice.
        let twice = byMessage.values.filter { $0.filter { $0["status"] as? Int == 204 }.count > 1 }
        #expect(twice.count <= 128, "only deliveries in flight at the kill are sent again: \(twice.count)")
    }

    @Test("requests through nginx reach both replicas; a token signed by one works on the other; with one replica stopped, nginx still answers and files")
    func balanced() async throws {
        let cli = try CLI()
        let database = try TestPostgresDatabase()
        try cli.addInspector(db: database.url)
        let one = try await cli.serve(db: database.url, options: ["--write-rate", "0"])
        defer { one.process.terminate() }
        let two = try await cli.serve(db: database.url, options: ["--write-rate", "0"])
        defer { two.process.terminate() }
        let (nginx, base) = try await Self.nginx(cli, in: [one.base, two.base])
        defer { nginx.terminate() }

        // A token from replica one, used on replica two directly: the signing key is shared.
        let token = try await CrashTests.signIn(one.base)
        #expect(try await TwoProcessTests.call(two.base, "/v1/me", token: token).status == 200)
        // Through nginx, round robin: every call answers, with the token, whichever replica.
        _ = try await WebhookTests.file(base, token: token, from: 11, count: 6)
        for _ in 0..<6 { #expect(try await TwoProcessTests.call(base, "/v1/me", token: token).status == 200) }
        try await eventually { (try? await TwoProcessTests.counts(two.base)) ?? (0, 0) == (6, 6) }
        #expect(try await TwoProcessTests.counts(one.base) == (6, 6), "each replica shows every filing")
        #expect(try await TwoProcessTests.counts(two.base) == (6, 6), "each replica shows every filing")

        // One replica stops; nginx goes on with the other.
        one.process.terminate()
        one.process.waitUntilExit()
        for _ in 0..<4 { #expect(try await TwoProcessTests.call(base, "/v1/me", token: token).status == 200) }
        _ = try await WebhookTests.file(base, token: token, from: 31, count: 2)
        #expect(try await TwoProcessTests.counts(base) == (8, 8))
    }
}
