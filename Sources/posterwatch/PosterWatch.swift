import Accounts
import ArgumentParser
import Foundation
import Interchange
import ReportService
import PostgresStore
import SQLiteStore
import StorePorts
import Webhooks

/// `posterwatch`: the command-line face of the PosterWatch libraries. Each subcommand
/// parses its arguments, calls a library, and prints; errors reach standard error as
/// one sentence naming the input and the rule, with exit code 1.
@main
struct PosterWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "posterwatch",
        abstract: "Reports of illegally placed posters: generate, import, query, cluster, search, draw and serve them.",
        subcommands: [Generate.self, Import.self, Migrate.self, Query.self, Clusters.self, Search.self, Render.self, Stats.self, Serve.self, UserCommand.self, APIKeyCommand.self, KeysCommand.self, WebhookCommand.self, PhotosCommand.self, BlocklistCommand.self,
            BackupCommand.self, RestoreCommand.self])
}

/// The database option every store command shares: `--database URL` or, as before,
/// `--db PATH` (an SQLite file).
struct StoreOptions: ParsableArguments {
    @Option(
        name: .customLong("database"),
        help: ArgumentHelp(
            "Where the data lives: sqlite:///path/to/file.sqlite (created from data/reference when absent) or postgres://user@host:port/database (PostgreSQL 15 with PostGIS).",
            valueName: "url"))
    var url: String?

    @Option(name: .customLong("db"), help: ArgumentHelp("The SQLite database file, as --database sqlite:///path does.", valueName: "path"))
    var path: String?

    @Option(
        name: .customLong("database-password-file"),
        help: ArgumentHelp(
            "A file holding the PostgreSQL password (its first line), kept off the command line; or set POSTERWATCH_DATABASE_PASSWORD.", valueName: "path"))
    var passwordFile: String?

    func validate() throws { _ = try location }

    /// Where the data lives (``validate()`` has refused anything else).
    var location: DatabaseLocation {
        get throws { try DatabaseLocation(url: url, path: path) }
    }

    /// The SQLite file named; a PostgreSQL database has none (the commands that need a
    /// file refuse it first).
    var db: String {
        if case .sqlite(let path)? = try? location { return path }
        return DatabaseLocation.defaultPath
    }

    /// What messages call the database: the file, or the PostgreSQL database and its host
    /// (never the URL: it may hold a password).
    var name: String { (try? location)?.description ?? db }

    /// The stores of the database named (an SQLite file is created when absent) and, for
    /// PostgreSQL, where it keeps photos.
    func open() async throws -> (stores: Stores, photos: (any PhotoStorage)?) {
        switch try location {
        case .sqlite(let path): return (try Stores.sqlite(path: path), nil)
        case .postgres(let url):
            let opened = try await PostgresStores(url: url, password: try password())
            return (opened.stores, opened.photos)
        }
    }

    func stores() async throws -> Stores { try await open().stores }

    /// The PostgreSQL password from the file or the environment, if either gives one.
    func password() throws -> String? { try Self.password(file: passwordFile) }

    static func password(file passwordFile: String?, environment: String = "POSTERWATCH_DATABASE_PASSWORD") throws -> String? {
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw ValidationError("the password file \(passwordFile) cannot be read")
            }
            return String(text.prefix { $0 != "\n" && $0 != "\r" })
        }
        return ProcessInfo.processInfo.environment[environment]
    }

    /// Refuses a PostgreSQL database for a command that works on an SQLite file only.
    func requireSQLite(_ why: String) throws {
        if case .postgres = try location { throw ValidationError(why) }
    }

    /// The database's reports as stored, read without building an index.
    func reader() async throws -> StoredReports { StoredReports(storage: try await stores().reports) }

    /// The report service over the database's reports (its index built from them).
    func reports() async throws -> ReportService { try await ReportService(storage: stores().reports) }

    /// The account service over the database's accounts.
    func accounts() async throws -> AccountService { try await AccountService(storage: stores().accounts) }

    /// The webhook service over the database's endpoints.
    func webhooks() async throws -> WebhookService { WebhookService(storage: try await stores().webhooks) }
}

/// What `--database` and `--db` name. The URL itself is never repeated in an error: it
/// may hold a password.
enum DatabaseLocation: CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    static let defaultPath = "var/posterwatch.sqlite"

    /// `--database` (`sqlite:///absolute/path`, `sqlite:relative/path`, `postgres://…`) or `--db`.
    init(url: String?, path: String?) throws {
        switch (url, path) {
        case (nil, nil): self = .sqlite(path: Self.defaultPath)
        case (nil, let path?): self = .sqlite(path: path)
        case (_?, _?): throw ValidationError("Give --database or --db, not both.")
        case (let url?, nil):
            let scheme = url.prefix { $0 != ":" }.lowercased()
            switch scheme {
            case "sqlite":
                var rest = url.dropFirst("sqlite:".count)
                if rest.hasPrefix("//") { rest = rest.dropFirst(2) }
                guard let file = String(rest).removingPercentEncoding, !file.isEmpty, !file.hasSuffix("/") else {
                    throw ValidationError("--database: an SQLite URL names a file, as sqlite:///var/lib/posterwatch/posterwatch.sqlite.")
                }
                self = .sqlite(path: file)
            case "postgres", "postgresql":
                guard let parts = URLComponents(string: url), parts.host?.isEmpty == false, parts.user?.isEmpty == false, parts.path.count > 1 else {
                    throw ValidationError("--database: a PostgreSQL URL is postgres://user[:password]@host[:port]/database (the password better in --database-password-file).")
                }
                self = .postgres(url: url)
            default:
                throw ValidationError("--database must be sqlite:///path/to/file.sqlite or postgres://user@host:port/database; its scheme \"\(scheme.prefix(20))\" is not one of them.")
            }
        }
    }

    var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let url):
            let parts = URLComponents(string: url)
            return "PostgreSQL database \(parts?.path.dropFirst() ?? "") on \(parts?.host ?? ""):\(parts?.port ?? 5432)"
        }
    }
}

/// The database option of commands that only read, or copy, a database: one that does
/// not exist is an error, not a new empty database (an operator reading an empty
/// blocklist or backing up nothing would take it for the real one). A PostgreSQL database
/// exists once its URL connects.
struct ExistingStoreOptions: ParsableArguments {
    @OptionGroup var location: StoreOptions

    var db: String { location.db }

    func validate() throws {
        guard case .sqlite(let path) = try location.location else { return }
        guard FileManager.default.fileExists(atPath: path) else {
            throw ValidationError("\(location.url == nil ? "--db" : "--database"): \(path) does not exist (posterwatch import or serve creates a database)")
        }
    }

    func reader() async throws -> StoredReports { try await location.reader() }
}

/// The status and creation-time filters of the commands that draw or count clusters.
struct FilterOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Only reports with these statuses.", valueName: "code,code"))
    var status: String?

    @Option(help: ArgumentHelp("Only reports created at this time or in this interval (RFC 3339; open ends as ..).", valueName: "start/end"))
    var datetime: String?

    var statuses: [String]? { status.map { $0.split(separator: ",").map { String($0.trimmingCharacters(in: .whitespaces)) } } }

    func created() throws -> ClosedRange<Int64>? {
        try datetime.map { try DateTimeInterval(parsing: $0, field: "--datetime").milliseconds }
    }
}
