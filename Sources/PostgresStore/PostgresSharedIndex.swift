import Foundation
import PostgresNIO
import StorePorts

/// The saved index's copy in `saved_index_part`: the file in parts of ``partSize`` bytes,
/// each row with the change it was saved at (stored uncompressed: the file's arrays gain
/// little from pglz and would cost a replica's start its decompression).
extension PostgresReports: SharedIndexStorage {
    /// 8 MiB: a part is one bound parameter and one row in memory on either side.
    static let partSize = 8 << 20
    /// Held while the copy is replaced, so that two replicas sharing at once take turns.
    static let sharingLock: Int64 = 0x7368_6172_6564  // "shared"

    public func sharedIndexChange() async throws -> Int64? {
        try await rows("SELECT change FROM saved_index_part WHERE part = 0").first?.decode(Int64.self)
    }

    public func share(file path: String, change: Int64) async throws -> Bool {
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? file.close() }
        let logger = self.logger
        return try await database.transaction { c in
            try await c.query("SELECT pg_advisory_xact_lock(\(Self.sharingLock))", logger: logger)
            let kept = try await c.query("SELECT change FROM saved_index_part WHERE part = 0", logger: logger).collect().first?.decode(Int64.self)
            if let kept, kept >= change { return false }
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
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? file.close() }
        // One statement: its parts are one snapshot's, whatever a replica shares meanwhile.
        var change: Int64?
        for try await (saved, data) in try await database.client.query(
            "SELECT change, data FROM saved_index_part ORDER BY part", logger: logger
        ).decode((Int64, ByteBuffer).self) {
            change = saved
            try file.write(contentsOf: data.readableBytesView)
        }
        if change == nil { try? FileManager.default.removeItem(atPath: path) }
        return change
    }
}
