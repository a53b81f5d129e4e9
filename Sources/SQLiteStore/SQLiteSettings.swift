import CSQLiteConfig
import Foundation

/// SQLite's process-wide settings, made once, before the first connection opens.
enum SQLiteSettings {
    /// Memory statistics off: with them on, every SQLite allocation of every connection
    /// takes one process-wide mutex, so connections at work on two cores queue there (a
    /// bulk import builds its phone index on a second connection: 8.4 s → 6.9 s for a
    /// million reports). The store reads no memory statistics and sets no heap limit.
    /// Should SQLite already be initialized (by other code of the process), this is a
    /// no-op and only speed is lost. `POSTERWATCH_SQLITE_MEMORY_STATS=1` keeps them on, for
    /// `sqlite_heap_bytes` in /metrics (`make soak` tells SQLite's caches from the rest).
    static let applied: Void = {
        _ = csqlite_config_memstatus(memoryStatistics ? 1 : 0)
    }()

    static let memoryStatistics = ProcessInfo.processInfo.environment["POSTERWATCH_SQLITE_MEMORY_STATS"] == "1"
}
