import GRDB
import ReportModel

extension StoreBusy {
    /// `error`, or ``StoreBusy`` when it is SQLite's busy: another process (an import into
    /// the served file) held the lock past the busy timeout, and nothing was written.
    static func replacing(_ error: any Error) -> any Error {
        (error as? DatabaseError)?.resultCode == .SQLITE_BUSY ? StoreBusy() : error
    }
}

extension DatabasePool {
    /// A write of its own transaction that throws ``StoreBusy`` (HTTP 503 with a retry)
    /// when another process holds the lock past the busy timeout.
    func writeOrBusy<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await write(updates)
        } catch {
            throw StoreBusy.replacing(error)
        }
    }
}
