import Foundation

/// Files that survive a crash or a power loss once written: synced, and put in place by a
/// rename whose directory is synced too. The photo store and backups write this way.
public enum Durable {
    /// Writes `bytes` to `target` through a temporary name beside it (in `temporaryFolder`
    /// when given: it must be on the same file system).
    public static func write(_ bytes: Data, to target: URL, temporaryFolder: URL? = nil) throws {
        let folder = temporaryFolder ?? target.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(".partial-" + UUID().uuidString)
        guard FileManager.default.createFile(atPath: temporary.path, contents: bytes) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        do {
            try sync(temporary)
            try rename(temporary, to: target)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// Flushes a file's contents to the disk.
    public static func sync(_ file: URL) throws {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.synchronize()
    }

    /// Renames `source` to `target` (replacing it) and syncs the directory, without which
    /// the rename itself may not survive a power loss.
    public static func rename(_ source: URL, to target: URL) throws {
        guard Foundation.rename(source.path, target.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: target.path])
        }
        let directory = open(target.deletingLastPathComponent().path, O_RDONLY)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }
}
