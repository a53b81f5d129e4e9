import Foundation
import PostgresNIO
import ReportModel
import StorePorts

/// The saved index's copy in `saved_index_part`: the file in parts of ``partSize`` bytes,
/// each row with the change it was saved at (stored uncompressed: the file's arrays gain
/// little from pglz and would cost a replica's start its decompression).
extension PostgresReports: SharedIndexStorage {
    /// 8 MiB: a part is one bound parameter, and one row in memory on either side.
    static let partSize = 8 << 20
    /// Held while the copy is replaced, and by an import while it drops the copy, so that
    /// two replicas sharing at once take turns and no share lands across an import.
    static let sharingLock: Int64 = 0x7368_6172_6564  // "shared"

    /// The copy's change: its first part's.
    static let keptChange: PostgresQuery = "SELECT change FROM saved_index_part WHERE part = 0"

    public func sharedIndexChange() async throws -> Int64? {
        try await rows(Self.keptChange).first?.decode(Int64.self)
    }

    public func share(file path: String, change: Int64, unlessWithin slack: Int64?) async throws -> Bool {
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? file.close() }
        let logger = self.logger
        return try await database.transaction { c in
            try await c.query("SELECT pg_advisory_xact_lock(\(Self.sharingLock))", logger: logger)
            let kept = try await c.query(Self.keptChange, logger: logger).collect().first?.decode(Int64.self)
            if Self.keeps(kept, over: change, unlessWithin: slack) { return false }
            // An index of the data set an import replaced since (saved before it, shared after).
            let replaced = try await c.query(
                "SELECT EXISTS (SELECT 1 FROM report_change WHERE seq > \(change) AND action = \(ReportAction.imported.rawValue))", logger: logger
            ).collect()[0].decode(Bool.self)
            if replaced { return false }
            try await c.query("DELETE FROM saved_index_part", logger: logger)
            var part: Int32 = 0
            while let bytes = try file.read(upToCount: Self.partSize), !bytes.isEmpty {
                try await c.query("INSERT INTO saved_index_part (part, change, data) VALUES (\(part), \(change), \(bytes))", logger: logger)
                part += 1
            }
            return true
        }
    }

    public func copySharedIndex(to path: String) async throws -> Int64? {
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        // Part by part in one snapshot: one part in memory, whatever a replica shares meanwhile.
        let change = try await snapshotRead { c -> Int64? in
            var change: Int64?
            var part: Int32 = 0
            while let row = try await c.query("SELECT change, data FROM saved_index_part WHERE part = \(part)", logger: logger).collect().first {
                let (saved, data) = try row.decode((Int64, ByteBuffer).self)
                change = saved
                try file.write(contentsOf: data.readableBytesView)
                part += 1
            }
            return change
        }
        if change == nil { try? FileManager.default.removeItem(atPath: path) } else { try file.synchronize() }
        return change
    }
}
