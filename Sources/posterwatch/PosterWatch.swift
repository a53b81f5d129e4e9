import ArgumentParser
import Foundation
import Interchange
import ReportStore

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

/// The database option every store command shares.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The SQLite database; created from data/reference when absent.", valueName: "path"))
    var db = "var/posterwatch.sqlite"
}

/// The database option of commands that only read, or copy, a database: one that does
/// not exist is an error, not a new empty database (an operator reading an empty
/// blocklist or backing up nothing would take it for the real one).
struct ExistingStoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The SQLite database (it must exist).", valueName: "path"))
    var db = "var/posterwatch.sqlite"

    func validate() throws {
        guard FileManager.default.fileExists(atPath: db) else {
            throw ValidationError("--db: \(db) does not exist (posterwatch import or serve creates a database)")
        }
    }

    func open() throws -> ReportStore { try ReportStore(path: db) }
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
