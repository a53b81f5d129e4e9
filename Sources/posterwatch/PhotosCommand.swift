import ArgumentParser
import Foundation
import Photos
import PostgresStore
import ReportService

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
            abstract: "Remove stored photos no report's photo names (left by a crash, or by removed photos), once an hour old: files in the photo directory, or the pictures a PostgreSQL database keeps.")
        @Option(help: ArgumentHelp("The photo directory (default: photos/ beside an SQLite database; a PostgreSQL database keeps its own).", valueName: "dir"))
        var photos: String?
        @OptionGroup var store: StoreOptions

        func run() async throws {
            let opened = try await store.open()
            if photos == nil, let kept = opened.photos as? PostgresPhotos {
                print("removed \(try await kept.collect()) unreferenced photos")
                return
            }
            let names = try await StoredReports(storage: opened.stores.reports).photoNames()
            let files = try PhotoFiles(root: URL(fileURLWithPath: photos ?? PhotosCommand.directory(beside: store.db)))
            print("removed \(try files.collect(keeping: names)) unreferenced photos")
        }
    }
}
