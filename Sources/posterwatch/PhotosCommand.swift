import ArgumentParser
import Foundation
import Photos

/// `posterwatch photos gc`: the stored files no photo row names.
struct PhotosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "photos", abstract: "Look after the stored photo files.", subcommands: [Collect.self])

    /// The default photo directory: `photos/` beside the database.
    static func directory(beside db: String) -> String {
        URL(fileURLWithPath: db).deletingLastPathComponent().appendingPathComponent("photos").path
    }

    struct Collect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "gc",
            abstract: "Remove stored photo files no report's photo names (left by a crash, or by removed photos), once an hour old.")
        @Option(help: ArgumentHelp("The photo directory (default: photos/ beside the database).", valueName: "dir")) var photos: String?
        @OptionGroup var store: StoreOptions

        func run() async throws {
            if photos == nil {
                try store.requireSQLite(
                    "photos gc collects files: a PostgreSQL database keeps its photos in its table photo_file; name a shared photo directory with --photos to collect one")
            }
            let names = try await store.reader().photoNames()
            let files = try PhotoFiles(root: URL(fileURLWithPath: photos ?? PhotosCommand.directory(beside: store.db)))
            print("removed \(try files.collect(keeping: names)) unreferenced photos")
        }
    }
}
