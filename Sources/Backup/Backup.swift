import Foundation
import Photos
import SQLiteStore

/// A consistent copy of a served database and its photos, taken while the server goes on
/// serving and writing, and put back in place.
///
/// Central decision: **the database first, then the pictures it names.** The database is
/// copied with SQLite's online backup API inside one read transaction, so the copy is one
/// moment of it and writers never wait. The photo files are copied after, only those the
/// copy names: they never change once stored (a file is named by its content) and a
/// photo's row is committed only after its files are in place, so every file the copy
/// names already exists. A backup folder holds:
/// - `posterwatch.sqlite`: the database;
/// - `photos/`: the pictures and thumbnails, laid out as the server keeps them;
/// - `backup.json`: what it holds (``Manifest``), written last, so a folder without
///   it is an unfinished backup.
public enum Backup {
    public static let databaseName = "posterwatch.sqlite"
    public static let photosName = "photos"
    public static let manifestName = "backup.json"

    /// What a backup holds, written beside it and checked again at restore.
    public struct Manifest: Codable, Sendable, Equatable {
        /// When the copy began (RFC 3339).
        public var takenAt: String
        public var reports: Int
        /// The last change in the copy: a feed client restored from it resumes here.
        public var lastChange: Int64
        public var photos: Int
        public var schema: [String]

        enum CodingKeys: String, CodingKey {
            case takenAt = "taken_at", reports, lastChange = "last_change", photos, schema
        }
    }

    /// Takes a backup of the SQLite database at `path`, served or not (and of the pictures
    /// in `photos`), into `folder`, which must be absent or empty. `progress` hears the
    /// database's pages copied of all.
    public static func take(
        ofDatabaseAt path: String, photos: PhotoFiles, into folder: URL, progress: (_ copied: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> Manifest {
        let store = try SQLiteReports(path: path)
        let files = FileManager.default
        if files.fileExists(atPath: folder.path) {
            guard try files.contentsOfDirectory(atPath: folder.path).isEmpty else {
                throw BackupError("\(folder.path) is not empty: a backup goes into a new folder (e.g. one named by the date)")
            }
        }
        try files.createDirectory(at: folder, withIntermediateDirectories: true)
        let takenAt = ISO8601DateFormatter().string(from: Date())
        let database = folder.appendingPathComponent(databaseName)
        let partial = folder.appendingPathComponent(databaseName + ".partial")
        try store.backup(to: partial.path, progress: progress)
        try Durable.sync(partial)
        try Durable.rename(partial, to: database)
        let summary = try SQLiteReports.summary(ofFileAt: database.path)
        let copies = try PhotoFiles(root: folder.appendingPathComponent(photosName))
        for name in summary.photos.sorted() where !(try copies.copy(name, from: photos)) {
            throw BackupError("the photo \(name) that the database names is missing from \(photos.root.path); nothing was removed, take the backup again")
        }
        let manifest = Manifest(
            takenAt: takenAt, reports: summary.reports, lastChange: summary.lastChange, photos: summary.photos.count, schema: summary.schema)
        try Durable.write(try JSONEncoder.sorted.encode(manifest), to: folder.appendingPathComponent(manifestName))
        return manifest
    }

    /// Checks the backup in `folder` whole and puts it in place as the database at `path`
    /// and its pictures in `photos`. An existing database is refused unless `replacing`,
    /// and is then moved aside (with its `-wal` and `-shm`, which belong to it), never
    /// deleted: the answer says where. The server must not be running on `path`.
    public static func restore(
        from folder: URL, to path: String, photos: PhotoFiles, replacing: Bool
    ) throws -> (manifest: Manifest, movedAside: String?) {
        let manifest = try check(folder)
        let files = FileManager.default
        var movedAside: String?
        if files.fileExists(atPath: path) {
            guard replacing else { throw BackupError("\(path) exists: stop the server and restore with --replace, which moves it aside") }
            let aside = path + ".before-restore-" + ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
            // The saved index is the replaced database's, and its change log goes on in the backup's.
            for suffix in ["", "-wal", "-shm", ".index"] where files.fileExists(atPath: path + suffix) {
                try files.moveItem(atPath: path + suffix, toPath: aside + suffix)
            }
            movedAside = aside
        }
        let stored = try PhotoFiles(root: folder.appendingPathComponent(photosName))
        for name in try SQLiteReports.summary(ofFileAt: folder.appendingPathComponent(databaseName).path).photos.sorted() {
            _ = try photos.copy(name, from: stored)
        }
        let target = URL(fileURLWithPath: path)
        try files.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        // A saved index beside no database (or left by hand) is no index of the restored one.
        try? files.removeItem(atPath: path + ".index")
        let partial = URL(fileURLWithPath: path + ".partial")
        try? files.removeItem(at: partial)
        try files.copyItem(at: folder.appendingPathComponent(databaseName), to: partial)
        try Durable.sync(partial)
        try Durable.rename(partial, to: target)
        // Opening it brings a backup of an earlier release to this one's schema.
        _ = try SQLiteReports(path: path)
        return (manifest, movedAside)
    }

    /// Checks a backup folder: its manifest, the database's integrity and that it holds
    /// what the manifest says, and every picture it names.
    public static func check(_ folder: URL) throws -> Manifest {
        let manifestURL = folder.appendingPathComponent(manifestName)
        guard let data = FileManager.default.contents(atPath: manifestURL.path) else {
            throw BackupError("\(folder.path) has no \(manifestName): it is not a backup, or one that did not finish")
        }
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: data) } catch {
            throw BackupError("\(manifestURL.path) cannot be read: \(error)")
        }
        let summary = try SQLiteReports.summary(ofFileAt: folder.appendingPathComponent(databaseName).path)
        guard summary.reports == manifest.reports, summary.lastChange == manifest.lastChange, summary.schema == manifest.schema else {
            throw BackupError("the database in \(folder.path) does not hold what \(manifestName) says (\(summary.reports) reports up to change \(summary.lastChange), not \(manifest.reports) up to \(manifest.lastChange))")
        }
        let stored = try PhotoFiles(root: folder.appendingPathComponent(photosName))
        if let missing = summary.photos.sorted().first(where: { !stored.has($0) }) {
            throw BackupError("the photo \(missing) that the backup's database names is missing from \(stored.root.path)")
        }
        return manifest
    }
}

/// A backup or restore that cannot go on, and why (what to do is in the sentence).
public struct BackupError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }
}
