import ArgumentParser
import Backup
import Foundation
import Photos
import PostgresStore
import SQLiteStore
import StorePorts

/// `posterwatch migrate`: a city that started on SQLite moves to PostgreSQL, losing nothing.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move a city from SQLite to PostgreSQL: reports, history, changes, phones, photos, accounts, API keys, webhooks and their outbox.",
        discussion: """
            Stop the servers first: rows changed after they were copied are not copied again. The target must be empty; \
            an interrupted move is run again with the same command, and goes on without writing anything twice.
            """)

    @Option(help: ArgumentHelp("The SQLite database to move: sqlite:///path/to/file.sqlite.", valueName: "url"))
    var from: String

    @Option(help: ArgumentHelp("The PostgreSQL database to move into: postgres://user@host:port/database.", valueName: "url"))
    var to: String

    @Option(help: ArgumentHelp("The source's photo directory (default: photos/ beside the SQLite file).", valueName: "dir"))
    var photos: String?

    @Option(
        name: .customLong("to-password-file"),
        help: ArgumentHelp("A file holding the PostgreSQL password (its first line); or set POSTERWATCH_DATABASE_PASSWORD.", valueName: "path"))
    var passwordFile: String?

    @Flag(help: "Copy into a target that already holds data (rows whose keys it holds are left as they are).")
    var intoExisting = false

    @Option(help: ArgumentHelp("Rows per batch.", valueName: "n"))
    var batchSize = 1_000

    @Option(help: .hidden)
    var stopAfterBatches: Int?

    func validate() throws {
        guard case .sqlite = try DatabaseLocation(url: from, path: nil) else { throw ValidationError("--from must be an SQLite database (sqlite:///path)") }
        guard case .postgres = try DatabaseLocation(url: to, path: nil) else { throw ValidationError("--to must be a PostgreSQL database (postgres://…)") }
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be from 1 to 10000") }
    }

    func run() async throws {
        guard case .sqlite(let path) = try DatabaseLocation(url: from, path: nil), case .postgres(let url) = try DatabaseLocation(url: to, path: nil) else { return }
        guard FileManager.default.fileExists(atPath: path) else { throw ValidationError("--from: \(path) does not exist") }
        let sqlite = try SQLiteReports(path: path)
        let files = try PhotoFiles(root: URL(fileURLWithPath: photos ?? PhotosCommand.directory(beside: path)))
        let target = try await PostgresStores(url: url, password: try StoreOptions.password(file: passwordFile))
        let transfer = StoreTransfer(
            source: sqlite, target: target.transfer, photoNames: { try sqlite.photoNames() }, sourcePhotos: files, targetPhotos: target.photos)
        var options = StoreTransfer.Options()
        options.batchSize = batchSize
        options.intoExisting = intoExisting
        options.stopAfterBatches = stopAfterBatches
        var progress = ProgressBar("migrate", total: 0)
        let started = Date()
        let summary = try await transfer.run(sourceName: URL(fileURLWithPath: path).standardizedFileURL.path, options: options) { done, total in
            progress.total = total
            progress.update(done)
        }
        progress.finish()
        let rows = summary.rows.values.reduce(0, +)
        Console.error("""
            moved \(Format.count(summary.rows["report"] ?? 0)) reports (\(Format.count(rows)) rows, \(Format.count(summary.newRows)) new) \
            and \(Format.count(summary.photos)) photos (\(Format.count(summary.newPhotos)) new) from \(path) to \(DatabaseLocation.postgres(url: url)) \
            in \(Format.seconds(Date().timeIntervalSince(started)))
            """)
    }
}
