import Accounts
import ArgumentParser
import Foundation
import Interchange
import ReportService
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
        subcommands: [Generate.self, Import.self, Query.self, Clusters.self, Search.self, Render.self, Stats.self, Serve.self, UserCommand.self, APIKeyCommand.self, KeysCommand.self, WebhookCommand.self, PhotosCommand.self, BlocklistCommand.self,
            BackupCommand.self, RestoreCommand.self])
}

/// The database option every store command shares: `--database URL` or, as before,
/// `--db PATH` (an SQLite file).
struct StoreOptions: ParsableArguments {
    @Option(
        name: .customLong("database"),
        help: ArgumentHelp("Where the data lives: sqlite:///path/to/file.sqlite (created from data/reference when absent).", valueName: "url"))
    var url: String?

    @Option(name: .customLong("db"), help: ArgumentHelp("The SQLite database file, as --database sqlite:///path does.", valueName: "path"))
    var path: String?

    func validate() throws { _ = try DatabaseLocation.sqlitePath(url: url, path: path) }

    /// The SQLite file named (``validate()`` has refused anything else).
    var db: String { (try? DatabaseLocation.sqlitePath(url: url, path: path)) ?? DatabaseLocation.defaultPath }

    /// The stores of the database named (created when absent).
    func stores() throws -> Stores { try Stores.sqlite(path: db) }

    /// The database's reports as stored, read without building an index.
    func reader() throws -> StoredReports { StoredReports(storage: try stores().reports) }

    /// The report service over the database's reports (its index built from them).
    func reports() async throws -> ReportService { try await ReportService(storage: stores().reports) }

    /// The account service over the database's accounts.
    func accounts() async throws -> AccountService { try await AccountService(storage: stores().accounts) }

    /// The webhook service over the database's endpoints.
    func webhooks() throws -> WebhookService { WebhookService(storage: try stores().webhooks) }
}

/// What `--database` and `--db` name.
enum DatabaseLocation {
    static let defaultPath = "var/posterwatch.sqlite"

    /// The SQLite file of `--database` (`sqlite:///absolute/path`, `sqlite:relative/path`)
    /// or `--db`. A `postgres://` URL is refused naming what is missing. The URL itself is
    /// never repeated in an error: it may hold a password.
    static func sqlitePath(url: String?, path: String?) throws -> String {
        switch (url, path) {
        case (nil, nil): return defaultPath
        case (nil, let path?): return path
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
                return file
            case "postgres", "postgresql":
                throw ValidationError(
                    "--database: PostgreSQL is not available in this release: the PostgreSQL store (postgres-nio, with PostGIS) holds accounts only so far; "
                        + "its reports, change log, webhooks and photos are not built yet. Use sqlite:///path/to/file.sqlite or --db PATH.")
            default:
                throw ValidationError("--database must be sqlite:///path/to/file.sqlite (postgres:// comes with the PostgreSQL store); its scheme \"\(scheme.prefix(20))\" is not one of them.")
            }
        }
    }
}

/// The database option of commands that only read, or copy, a database: one that does
/// not exist is an error, not a new empty database (an operator reading an empty
/// blocklist or backing up nothing would take it for the real one).
struct ExistingStoreOptions: ParsableArguments {
    @OptionGroup var location: StoreOptions

    var db: String { location.db }

    func validate() throws {
        guard FileManager.default.fileExists(atPath: db) else {
            throw ValidationError("\(location.url == nil ? "--db" : "--database"): \(db) does not exist (posterwatch import or serve creates a database)")
        }
    }

    func reader() throws -> StoredReports { try location.reader() }
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
