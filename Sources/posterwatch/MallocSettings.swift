#if canImport(Glibc)
import CMalloc
import Foundation

/// How glibc's allocator serves a long-running server. By default it keeps up to eight arenas
/// a core, one per thread that happens to allocate at once (NIO's event loops, the
/// concurrency pool, the blocking queue's threads, the writer), and each keeps what was freed
/// in it; and it raises its mmap threshold to the largest block freed so far, so the index's
/// and the tallies' arrays, once they have grown, come back from the heap and stay there. The
/// server's own memory then crept up by a tenth in `make soak` though nothing leaked. One
/// arena a core and a fixed threshold of 128 KiB hold it flat (BENCHMARKS.md, the soak).
enum MallocSettings {
    static let mmapThreshold: Int32 = 128 * 1024
    /// How much an arena grows by at a time. The millions of small arrays a start reads
    /// from the saved index grew the arenas a page at a time, an `mprotect` each: a start
    /// on 10M reports answered in 0.89–0.93 s with 16 MiB against 0.96–1.02 s without
    /// (three runs each, `posterwatch-bench --only-start`).
    static let topPad: Int32 = 16 << 20

    /// Applies the settings, unless the operator set `GLIBC_TUNABLES`, which then decides.
    static func apply() {
        guard ProcessInfo.processInfo.environment["GLIBC_TUNABLES"] == nil else { return }
        let cores = Int32(clamping: max(2, ProcessInfo.processInfo.activeProcessorCount))
        _ = mallopt(M_ARENA_MAX, cores)
        _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        _ = mallopt(M_TOP_PAD, topPad)
    }
}
#else
enum MallocSettings {
    static func apply() {}
}
#endif
