import Autodial
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Generator
import Geometry
import ReportModel
import SQLiteStore
import Testing
import TestSupport

/// Runs the built `posterwatch` binary, as a user would, and checks what it prints.
struct CLI {
    static let binary: URL = {
        // The test bundle and the tool are built side by side (.build/<triple>/debug/).
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [bundle, bundle.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("posterwatch")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug/posterwatch")
    }()

    /// Where the tool runs and writes, removed when the last copy of this value goes away.
    let folder: TemporaryDirectory
    var directory: URL { folder.url }

    init() throws {
        folder = try TemporaryDirectory()
    }

    func path(_ name: String) -> String { folder.path(name) }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    @discardableResult
    func run(_ arguments: String...) throws -> Result { try run(arguments, input: nil) }

    /// Runs the tool with `input` on its standard input (none: an empty, closed input).
    @discardableResult
    func run(_ arguments: [String], input: String?) throws -> Result {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe.unshared(), err = Pipe.unshared(), inp = Pipe.unshared()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        if let input { inp.fileHandleForWriting.write(Data(input.utf8)) }
        try inp.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The arguments naming a database: `--database` for a URL, `--db` for a file.
    static func database(_ db: String) -> [String] {
        db.hasPrefix("postgres://") ? ["--database", db] : ["--db", db]
    }

    /// Starts `posterwatch serve` over `db` on a free port, with `options`, and waits until it
    /// answers. A server that exits first is an error, so that no test talks to another's
    /// server; one that found its port taken meanwhile (by another test's process) is started
    /// again on another.
    func serve(db: String, options: [String] = []) async throws -> (process: Process, base: String) {
        for _ in 1..<3 {
            do { return try await serveOnce(db: db, options: options) } catch let failure as ServeFailed where failure.portTaken {}
        }
        return try await serveOnce(db: db, options: options)
    }

    struct ServeFailed: Error, CustomStringConvertible {
        let port: Int
        let log: String
        var portTaken: Bool { log.contains("Address already in use") }
        var description: String { "posterwatch serve did not answer on port \(port): \(log.suffix(2_000))" }
    }

    private func serveOnce(db: String, options: [String]) async throws -> (process: Process, base: String) {
        let port = Self.freePort()
        let server = Process()
        server.executableURL = Self.binary
        server.arguments = ["serve"] + Self.database(db) + ["--port", "\(port)"] + options
        server.currentDirectoryURL = directory
        // The access log goes to a file: a pipe nobody reads would fill and stall the server.
        FileManager.default.createFile(atPath: path("serve.log"), contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: path("serve.log")))
        try log.seekToEnd()
        server.standardOutput = log
        server.standardError = log
        try server.run()
        let base = "http://127.0.0.1:\(port)"
        let answered = try await eventually("posterwatch serve to answer on port \(port)") {
            guard server.isRunning else { return true }
            return (try? await URLSession.shared.data(from: URL(string: base + "/health")!)) != nil
        }
        guard answered, server.isRunning else {
            if server.isRunning { server.terminate() }
            throw ServeFailed(port: port, log: (try? String(contentsOfFile: path("serve.log"), encoding: .utf8)) ?? "")
        }
        return (server, base)
    }

    /// A loopback port nothing listens on now.
    static func freePort() -> Int { LoopbackSocket.freePort(Int32(SOCK_STREAM.rawValue))! }

    static let inspectorEmail = "i@example.org"
    static let inspectorPassword = "довгий пароль для тесту"

    /// Adds an inspector to `db` (see ``CrashTests/signIn(_:)``).
    func addInspector(db: String) throws {
        let added = try run(
            ["user", "add", "--name", "Інспектор", "--email", Self.inspectorEmail, "--phone", "067 000 00 01", "--role", "inspector"] + Self.database(db),
            input: Self.inspectorPassword + "\n")
        #expect(added.status == 0, "\(added.stderr)")
    }

    func json(_ text: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
    }
}

@Suite("The posterwatch command", .serialized)
struct CLITests {
    @Test("generate, import, query, search and stats work together")
    func workflow() throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "300", "--seed", "3", "--out", "r.geojsonl").status == 0)
        let again = try cli.run("generate", "--count", "300", "--seed", "3", "--out", "again.geojsonl")
        #expect(again.status == 0)
        #expect(FileManager.default.contentsEqual(atPath: cli.path("r.geojsonl"), andPath: cli.path("again.geojsonl")))

        let imported = try cli.run("import", "r.geojsonl", "--db", "t.sqlite")
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stderr.contains("imported 300 reports"))

        let query = try cli.run("query", "--bbox", "-180,-90,180,90", "--limit", "1000", "--db", "t.sqlite")
        #expect(query.status == 0)
        let collection = try cli.json(query.stdout)
        #expect(collection["type"] as? String == "FeatureCollection")
        #expect(collection["numberMatched"] as? Int == 300)
        let features = collection["features"] as! [[String: Any]]
        #expect(features.map { $0["id"] as! Int } == Array(1...300))
        let coordinates = (features[0]["geometry"] as! [String: Any])["coordinates"] as! [Double]
        #expect(coordinates.count == 2 && (30...31).contains(coordinates[0]) && (50...51).contains(coordinates[1]))

        let paged = try cli.json(try cli.run("query", "--bbox", "-180,-90,180,90", "--limit", "10", "--after", "295", "--db", "t.sqlite").stdout)
        #expect((paged["features"] as! [[String: Any]]).map { $0["id"] as! Int } == [296, 297, 298, 299, 300])

        let phone = ((features[41]["properties"] as! [String: Any])["phones"] as! [String])[0]
        let search = try cli.run("search", String(phone.suffix(7)), "--db", "t.sqlite")
        #expect(search.status == 0)
        let found = try cli.json(search.stdout)
        #expect((found["features"] as! [[String: Any]]).contains { $0["id"] as? Int == 42 })
        #expect((found["numberMatched"] as! Int) >= 1)
        let byID = try cli.json(try cli.run("search", "#42", "--limit", "1", "--db", "t.sqlite").stdout)
        #expect((byID["features"] as! [[String: Any]]).first?["id"] as? Int == 42)

        // Clusters: every report once at each zoom; cluster features carry their summary.
        for zoom in ["0", "10", "14", "20"] {
            let answer = try cli.run("clusters", "--bbox", "-180,-90,180,90", "--zoom", zoom, "--db", "t.sqlite")
            #expect(answer.status == 0, "\(answer.stderr)")
            let items = try cli.json(answer.stdout)["features"] as! [[String: Any]]
            let clusters = items.map { $0["properties"] as! [String: Any] }.filter { $0["cluster"] as? Bool == true }
            #expect(clusters.reduce(0) { $0 + ($1["count"] as! Int) } + (items.count - clusters.count) == 300, "zoom \(zoom)")
            for c in clusters {
                #expect((c["expansion_zoom"] as! Int) > Int(zoom)!)
                #expect((c["statuses"] as! [String: Int]).values.reduce(0, +) == c["count"] as! Int)
            }
        }
        let world = try cli.json(try cli.run("clusters", "--bbox", "-180,-90,180,90", "--zoom", "0", "--db", "t.sqlite").stdout)
        let only = (world["features"] as! [[String: Any]])[0]
        #expect((only["properties"] as! [String: Any])["count_abbrev"] as? String == "300")
        #expect((only["bbox"] as! [Double]).count == 4)
        let newOnly = try cli.json(try cli.run("clusters", "--bbox", "-180,-90,180,90", "--zoom", "0", "--status", "new", "--db", "t.sqlite").stdout)
        let newCount = ((newOnly["features"] as! [[String: Any]]).first?["properties"] as? [String: Any])?["count"] as? Int ?? 0
        #expect(newCount == features.filter { ($0["properties"] as! [String: Any])["status"] as? String == "new" }.count)

        // Render: a tile (and its @2x), a picture of an area, an empty tile.
        func pngSize(_ name: String) -> [Int]? {
            guard let bytes = FileManager.default.contents(atPath: cli.path(name)).map(Array.init), bytes.count > 24,
                  bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { return nil }
            return [16, 20].map { at in bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        }
        let (tx, ty) = (Int((coordinates[0] + 180) / 360 * 1024), Int((1 - log(tan(.pi / 4 + coordinates[1] * .pi / 360)) / .pi) / 2 * 1024))
        let tile = try cli.run("render", "--z", "10", "--x", "\(tx)", "--y", "\(ty)", "-o", "tile.png", "--db", "t.sqlite")
        #expect(tile.status == 0 && tile.stderr.contains("256×256"), "\(tile.stderr)")
        #expect(pngSize("tile.png") == [256, 256])
        #expect(try cli.run("render", "--z", "10", "--x", "\(tx)", "--y", "\(ty)", "--scale", "2", "-o", "tile2.png", "--db", "t.sqlite").status == 0)
        #expect(pngSize("tile2.png") == [512, 512])
        let picture = try cli.run("render", "--bbox", "30.2,50.2,30.9,50.6", "--zoom", "10", "--size", "300x200", "-o", "map.png", "--db", "t.sqlite")
        #expect(picture.status == 0 && pngSize("map.png") == [300, 200], "\(picture.stderr)")
        let empty = try cli.run("render", "--z", "10", "--x", "0", "--y", "0", "-o", "empty.png", "--db", "t.sqlite")
        #expect(empty.status == 0 && empty.stderr.contains("is empty") && pngSize("empty.png") == nil)

        let stats = try cli.run("stats", "--db", "t.sqlite")
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("300 reports"))
        #expect(stats.stdout.contains("by district"))
    }

    @Test("serve answers over HTTP on the port it is given")
    func serve() async throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "50", "--seed", "4", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        let server = try await cli.serve(db: "t.sqlite")
        defer { server.process.terminate() }
        let (healthData, _) = try await URLSession.shared.data(from: URL(string: server.base + "/health")!)
        let health = try JSONSerialization.jsonObject(with: healthData) as? [String: Any]
        #expect(health?["reports"] as? Int == 50)
        let (data, _) = try await URLSession.shared.data(from: URL(string: server.base + "/v1/clusters?bbox=-180,-90,180,90&zoom=0")!)
        let features = try cli.json(String(decoding: data, as: UTF8.self))["features"] as! [[String: Any]]
        #expect(((features.first?["properties"] as? [String: Any])?["count"] as? Int) == 50)
        let (page, response) = try await URLSession.shared.data(from: URL(string: server.base + "/")!)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "text/html; charset=utf-8")
        #expect(String(decoding: page, as: UTF8.self).contains("/leaflet/leaflet.js"))
        let (tile, tileResponse) = try await URLSession.shared.data(from: URL(string: server.base + "/v1/tiles/0/0/0.png")!)
        #expect((tileResponse as? HTTPURLResponse)?.statusCode == 200 && tile.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }

    @Test("serve stops on SIGTERM though a change stream (which never ends by itself) is open")
    func stopsWithStreamOpen() async throws {
        let cli = try CLI()
        #expect(try cli.run("generate", "--count", "20", "--seed", "5", "--out", "r.geojsonl").status == 0)
        #expect(try cli.run("import", "r.geojsonl", "--db", "t.sqlite").status == 0)
        let server = try await cli.serve(db: "t.sqlite")
        defer { if server.process.isRunning { kill(server.process.processIdentifier, SIGKILL) } }
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        client.arguments = ["-sN", "-o", cli.path("stream.txt"), server.base + "/v1/changes/stream?since=0"]
        try client.run()
        defer { client.terminate() }
        try await eventually("the stream to go live") {
            (try? String(contentsOfFile: cli.path("stream.txt"), encoding: .utf8))?.contains(": live") ?? false
        }
        server.process.terminate()
        try await eventually("serve to stop after SIGTERM (an open stream must not hold it)") { !server.process.isRunning }
    }

    @Test("an import with invalid records lists each and imports nothing, unless told to skip them")
    func invalidImport() throws {
        let cli = try CLI()
        let csv = """
            id,longitude,latitude,address,city,district,object_type,balance_holder,violator,phones,comment,status,created_at,updated_at
            1,30.52,50.45,"вул. Хрещатик, 1",Київ,shevchenkivskyi,lighting_pole,kyivmiskvitlo,,067 123 45 67,,new,2025-01-01T10:00:00Z,2025-01-01T10:00:00Z
            2,30.52,50.45,"вул. Хрещатик, 2",Київ,atlantis,lighting_pole,kyivmiskvitlo,,067 123 45 67,,new,,
            3,30.52,95,"вул. Хрещатик, 3",Київ,shevchenkivskyi,lighting_pole,kyivmiskvitlo,,067 123 45 67,,,,
            4,30.52,50.45,"вул. Хрещатик, 4",Київ,shevchenkivskyi,lighting_pole,kyivmiskvitlo,,12,,,,

            """
        try csv.write(toFile: cli.path("bad.csv"), atomically: true, encoding: .utf8)
        let failed = try cli.run("import", "bad.csv", "--db", "t.sqlite")
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("line 3: district: unknown district \"atlantis\""))
        #expect(failed.stderr.contains("line 4: latitude"))
        #expect(failed.stderr.contains("line 5: phones: \"12\" is not a phone number"))
        #expect(failed.stderr.contains("3 invalid record(s), nothing was imported"))
        #expect(!FileManager.default.fileExists(atPath: cli.path("t.sqlite")))  // not even an empty database
        // A value quoted in a message cannot drive the terminal: its escape sequences are written out.
        let hostile = csv.split(separator: "\n").prefix(2).joined(separator: "\n").replacingOccurrences(of: "shevchenkivskyi", with: "x\u{1B}]0;owned\u{07}") + "\n"
        try hostile.write(toFile: cli.path("esc.csv"), atomically: true, encoding: .utf8)
        let escaped = try cli.run("import", "esc.csv", "--db", "e.sqlite")
        #expect(escaped.status != 0 && escaped.stderr.contains("x\\u{1B}]0;owned\\u{7}") && !escaped.stderr.contains("\u{1B}"), "\(escaped.stderr)")
        #expect(try cli.run("stats", "--db", "t.sqlite").stdout.contains(": 0 reports"))

        let skipped = try cli.run("import", "bad.csv", "--db", "t.sqlite", "--skip-invalid")
        #expect(skipped.status == 0)
        #expect(skipped.stderr.contains("imported 1 reports"))
        #expect(skipped.stderr.contains("skipped 3 invalid"))
        let again = try cli.run("import", "bad.csv", "--db", "t.sqlite", "--skip-invalid")
        #expect(again.stderr.contains("line 2: id: report 1 already exists"))
    }

    @Test("user add reads the password from standard input and prints the id; list, set-role, disable and enable change the account")
    func users() throws {
        let cli = try CLI()
        let add = ["user", "add", "--name", "Перша Адміністраторка", "--email", "Admin@Example.org", "--phone", "067 123 45 67", "--role", "admin", "--db", "u.sqlite"]
        let added = try cli.run(add, input: "кашта́н у дворі\n")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "1\n")
        #expect(!added.stdout.contains("кашта́н") && !added.stderr.contains("кашта́н"))

        let again = try cli.run(add.map { $0 == "067 123 45 67" ? "+380 67 123 4567" : $0 }, input: "кашта́н у дворі\n")
        #expect(again.status != 0)
        #expect(again.stderr.contains("The email Admin@Example.org is already registered.") && !again.stderr.contains("phone"), "\(again.stderr)")
        let weak = try cli.run(["user", "add", "--name", "B", "--email", "b@example.org", "--phone", "067 000 11 22", "--db", "u.sqlite"], input: "1234567890\n")
        #expect(weak.status != 0 && weak.stderr.contains("password: is one of the most common passwords"), "\(weak.stderr)")
        let none = try cli.run(["user", "add", "--name", "B", "--email", "b@example.org", "--phone", "067 000 11 22", "--db", "u.sqlite"], input: nil)
        #expect(none.status != 0 && none.stderr.contains("standard input"), "\(none.stderr)")

        #expect(try cli.run(["user", "add", "--name", "B", "--email", "b@example.org", "--phone", "067 000 11 22", "--db", "u.sqlite"], input: "ще один довгий пароль\n").stdout == "2\n")
        #expect(try cli.run("user", "set-role", "2", "supervisor", "--db", "u.sqlite").status == 0)
        #expect(try cli.run("user", "disable", "2", "--db", "u.sqlite").stdout.contains("disabled"))
        let list = try cli.run("user", "list", "--db", "u.sqlite").stdout.split(separator: "\n")
        #expect(list == ["1\tadmin\tactive\tAdmin@Example.org\t380671234567\tПерша Адміністраторка", "2\tsupervisor\tdisabled\tb@example.org\t380670001122\tB"])
        #expect(try cli.run("user", "enable", "2", "--db", "u.sqlite").stdout.contains("enabled"))
        #expect(try cli.run("user", "list", "--role", "admin", "--db", "u.sqlite").stdout.split(separator: "\n").count == 1)
        let climb = try cli.run("user", "set-role", "2", "integration", "--db", "u.sqlite")
        #expect(climb.status != 0 && climb.stderr.contains("integrations use API keys"))
        let key = try cli.run("apikey", "create", "--name", "blocklist sync", "--db", "u.sqlite")
        #expect(key.status == 0 && key.stdout.hasPrefix("pwk_") && key.stderr.contains("not shown again"), "\(key.stderr)")
        let keys = try cli.run("apikey", "list", "--db", "u.sqlite").stdout
        #expect(keys == "1\tintegration\tactive\tblocklist sync\n" && !keys.contains("pwk_"))
        #expect(try cli.run("apikey", "revoke", "1", "--db", "u.sqlite").status == 0)
        #expect(try cli.run("apikey", "list", "--db", "u.sqlite").stdout.contains("revoked"))
        #expect(try cli.run("apikey", "create", "--name", "x", "--role", "admin", "--db", "u.sqlite").stderr.contains("role: an API key's role is integration"))
        let rotated = try cli.run("keys", "rotate", "--db", "u.sqlite")
        #expect(rotated.status == 0 && rotated.stdout.hasPrefix("new signing key "), "\(rotated.stderr)")
        let missing = try cli.run("user", "disable", "99", "--db", "u.sqlite")
        #expect(missing.status != 0 && missing.stderr.contains("account 99 does not exist"))
    }

    @Test("bad arguments are one sentence on stderr and a non-zero exit", arguments: [
        (["query", "--bbox", "1,2,3"], "bbox: must be four numbers"),
        (["query", "--bbox", "0,5,1,4"], "bbox: south (5.0) must not be greater than north (4.0)"),
        (["query", "--bbox", "0,0,1,1", "--limit", "0"], "--limit must be from 1 to 1000000"),
        (["search", "abc"], "q: must contain at least one digit"),
        (["clusters", "--bbox", "0,0,1,1", "--zoom", "21"], "--zoom: must be an integer from 0 to 20, got 21"),
        (["clusters", "--bbox", "0,0,1,1", "--zoom", "3", "--status", "lost"], "status: unknown status \"lost\""),
        (["clusters", "--bbox", "0,0,1,1", "--zoom", "3", "--datetime", "yesterday"], "--datetime: \"yesterday\" is not an RFC 3339 date-time"),
        (["clusters", "--bbox", "0,0,1,1", "--zoom", "3", "--cell-size", "48"], "cell_size: must be 32, 64, 128 or 256 pixels"),
        (["import", "missing.geojsonl"], "missing.geojsonl"),
        (["generate", "--count", "0", "--out", "x.geojsonl"], "--count must be from 1"),
        (["serve", "--saved-index-catch-up", "10000001"], "--saved-index-catch-up must be from 0 to 10000000 changes, got 10000001."),
        (["stats", "--db", "/proc/none/x.sqlite"], "cannot open the database /proc/none/x.sqlite: cannot create its folder"),
        (["render", "-o", "x.png"], "Give either --z, --x and --y (a tile) or --bbox and --zoom (a picture)"),
        (["render", "--z", "3", "--x", "1", "-o", "x.png"], "A tile needs all of --z, --x and --y"),
        (["render", "--z", "3", "--x", "9", "--y", "1", "-o", "x.png"], "x: must be from 0 to 7 at zoom 3"),
        (["render", "--z", "3", "--x", "1", "--y", "1", "--scale", "9", "-o", "x.png"], "scale: must be from 1 to 4"),
        (["render", "--bbox", "30,50,31,51", "--zoom", "9", "--size", "10x", "-o", "x.png"], "--size: must be WIDTHxHEIGHT"),
        (["render", "--bbox", "30,50,31,51", "--zoom", "9", "--size", "5000x10", "-o", "x.png"], "width: must be from 1 to 4096"),
    ])
    func badArguments(arguments: [String], message: String) throws {
        let cli = try CLI()
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments + (arguments[0] == "generate" || arguments.contains("--db") ? [] : ["--db", cli.path("t.sqlite")])
        process.currentDirectoryURL = cli.directory
        let err = Pipe.unshared()
        process.standardError = err
        process.standardOutput = Pipe.unshared()
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(stderr.contains(message), "\(stderr)")
    }
}

@Suite("posterwatch --database")
struct DatabaseOptionTests {
    @Test("--database sqlite:///path names the same file as --db; a PostgreSQL database that is not there, or a malformed URL, is refused in words, never repeating its password; both at once, or another scheme, are refused")
    func databaseURL() throws {
        let cli = try CLI()
        try cli.addInspector(db: "t.sqlite")
        let absolute = cli.path("t.sqlite")
        for url in ["sqlite://" + absolute, "sqlite:t.sqlite", "sqlite://" + absolute.replacingOccurrences(of: "t.sqlite", with: "%74.sqlite")] {
            let listed = try cli.run("user", "list", "--database", url)
            #expect(listed.status == 0 && listed.stdout.contains(CLI.inspectorEmail), "\(url): \(listed.stderr)")
        }
        let stats = try cli.run("blocklist", "--database", "sqlite://" + absolute)
        #expect(stats.status == 0, "\(stats.stderr)")
        let nowhere = CLI.freePort()
        let postgres = try cli.run("serve", "--database", "postgres://posterwatch:s3cr3t-pw@127.0.0.1:\(nowhere)/city")
        #expect(postgres.status != 0 && postgres.stderr.contains("cannot connect to the PostgreSQL database city on 127.0.0.1:\(nowhere): nothing answered there"),
                "\(postgres.stderr)")
        #expect(!postgres.stderr.contains("s3cr3t-pw") && !postgres.stderr.contains("postgres://"), "\(postgres.stderr)")
        let malformed = try cli.run("stats", "--database", "postgres://s3cr3t-pw@/city")
        #expect(malformed.status != 0 && malformed.stderr.contains("postgres://user[:password]@host[:port]/database") && !malformed.stderr.contains("s3cr3t-pw"))
        let both = try cli.run("stats", "--database", "sqlite:t.sqlite", "--db", "t.sqlite")
        #expect(both.status != 0 && both.stderr.contains("not both"))
        let other = try cli.run("stats", "--database", "mysql://root:pw@host/db")
        #expect(other.status != 0 && other.stderr.contains("\"mysql\"") && !other.stderr.contains("pw@"))
        let missing = try cli.run("blocklist", "--database", "sqlite:nowhere.sqlite")
        #expect(missing.status != 0 && missing.stderr.contains("--database: nowhere.sqlite does not exist"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: cli.path("nowhere.sqlite")))
    }
}

@Suite("posterwatch blocklist")
struct BlocklistCLITests {
    @Test("prints the blocked numbers with their report counts, as JSON or CSV; a bad format is refused")
    func blocklist() throws {
        let cli = try CLI()
        let db = cli.path("b.sqlite")
        var rng = SplitMix64(state: 5)
        let (blocked, other) = ("380501234567", "380931112233")
        let drafts = (0..<6).map { i in
            Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), phones: i < 4 ? [blocked] : [other], using: &rng)
        }
        do {
            let store = try SQLiteReports(path: db)
            try store.insert(drafts)
            let outcome = store.commit([{ t in
                try t.setPhoneStatus(blocked, to: .violator, action: .verified, note: nil, moved: 0, author: .system, now: Date())
                try t.setPhoneStatus(blocked, to: .blocked, action: .blocked, note: nil, moved: 0, author: .system, now: Date(timeIntervalSince1970: 1_780_000_000))
            }])
            try outcome[0].get()
        }
        let json = try cli.run("blocklist", "--db", db)
        #expect(json.status == 0)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(list["count"] as? Int == 1)
        let numbers = try #require(list["numbers"] as? [[String: Any]])
        #expect(numbers.first?["number"] as? String == blocked && numbers.first?["report_count"] as? Int == 4)
        #expect(numbers.first?["blocked_at"] as? String == "2026-05-28T20:26:40Z")
        let csv = try cli.run("blocklist", "--db", db, "--format", "csv")
        #expect(csv.stdout == "number,blocked_at,report_count\r\n+\(blocked),2026-05-28T20:26:40Z,4\r\n")
        let bad = try cli.run("blocklist", "--db", db, "--format", "xml")
        #expect(bad.status != 0 && bad.stderr.contains("json or csv"))
        // A mistyped path is an error, not an empty list from a database made on the spot.
        let typo = try cli.run("blocklist", "--db", cli.path("typo.sqlite"))
        #expect(typo.status != 0 && typo.stderr.contains("does not exist") && typo.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: cli.path("typo.sqlite")))
    }
}
