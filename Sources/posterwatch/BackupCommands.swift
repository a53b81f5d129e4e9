import ArgumentParser
import Backup
import Foundation
import Photos

/// `posterwatch backup`: a consistent copy of the database and its photos, taken while
/// the server goes on serving.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the database and its photos into a new folder while the server goes on serving and writing.",
        discussion: """
            The copy is one moment of the database (SQLite's online backup API): every report \
            acknowledged before it began is in it. The folder gets posterwatch.sqlite, photos/ \
            and backup.json; restore it with posterwatch restore. Nightly, from cron:
              15 3 * * *  posterwatch backup --db /var/lib/posterwatch/posterwatch.sqlite --out /var/backups/posterwatch/$(date +\\%F)
            """)

    @Option(help: ArgumentHelp("The folder to write, absent or empty.", valueName: "dir"))
    var out: String

    @Option(help: ArgumentHelp("The photo directory (default: photos/ beside the database).", valueName: "dir"))
    var photos: String?

    @OptionGroup var store: ExistingStoreOptions

    func run() throws {
        try store.location.requireSQLite(
            "posterwatch backup copies an SQLite database; a PostgreSQL one is backed up by PostgreSQL's own tools (pg_dump, base backups), photos included: see the README")
        let files = try PhotoFiles(root: URL(fileURLWithPath: photos ?? PhotosCommand.directory(beside: store.db)))
        var progress = ProgressBar("backup", total: 0)
        let manifest = try Backup.take(ofDatabaseAt: store.db, photos: files, into: URL(fileURLWithPath: out)) { copied, total in
            progress.total = total
            progress.update(copied)
        }
        progress.finish()
        print("backed up \(Format.count(manifest.reports)) reports (up to change \(manifest.lastChange)) and \(Format.count(manifest.photos)) photos into \(out)")
    }
}

/// `posterwatch restore`: a backup put back in place, after checking it whole.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Check a backup folder and put it in place as the database and its photos (stop the server first).")

    @Argument(help: ArgumentHelp("The folder posterwatch backup wrote.", valueName: "dir"))
    var folder: String

    @Option(help: ArgumentHelp("The database to restore to.", valueName: "path"))
    var db = "var/posterwatch.sqlite"

    @Option(help: ArgumentHelp("The photo directory (default: photos/ beside the database).", valueName: "dir"))
    var photos: String?

    @Flag(help: "Replace an existing database; it is moved aside, never deleted.")
    var replace = false

    func run() throws {
        let files = try PhotoFiles(root: URL(fileURLWithPath: photos ?? PhotosCommand.directory(beside: db)))
        let restored = try Backup.restore(from: URL(fileURLWithPath: folder), to: db, photos: files, replacing: replace)
        if let aside = restored.movedAside { print("moved the database that was there to \(aside)") }
        let manifest = restored.manifest
        print("restored \(Format.count(manifest.reports)) reports (up to change \(manifest.lastChange)) and \(Format.count(manifest.photos)) photos, taken at \(manifest.takenAt), to \(db)")
    }
}
