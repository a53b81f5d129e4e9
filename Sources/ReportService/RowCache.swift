import ReportModel
import Synchronization

/// Public report rows read lately, by id, so that a search's page of fifty or a map's
/// single markers need no read of the database: on PostgreSQL that read is a round trip
/// and its rows decoded, most of a search's time (BENCHMARKS.md, "the rows a replica keeps").
///
/// Every write drops what it changed: this process's as its transaction commits, before the
/// writer is answered (the reports it wrote, ``ReportTransaction/takeReportsWritten()``);
/// other processes' as the change log is followed (the reports their changes name); all of
/// it when the index is rebuilt from the rows. So a row kept is never older than the index
/// beside it. A read that began before a write and ended after it could hold the row as it
/// was: each stripe counts its drops, and rows read are kept only when their stripe's
/// count is what it was before the read began.
final class RowCache: Sendable {
    private struct Stripe {
        var rows: [Int64: Report] = [:]
        var drops: UInt64 = 0
    }

    private final class Lane: Sendable {
        let state = Mutex(Stripe())
    }

    private let lanes: [Lane]
    private let perLane: Int
    /// Rows answered from memory, and rows that had to be read (for the metrics and tests).
    let hits = Atomic<Int>(0), misses = Atomic<Int>(0)

    /// A cache of at most about `capacity` rows (a stripe that fills is emptied).
    init(capacity: Int) {
        let count = 64
        lanes = (0..<count).map { _ in Lane() }
        perLane = max(1, capacity / count)
    }

    private func lane(_ id: Int64) -> Int { Int(UInt64(bitPattern: id) % UInt64(lanes.count)) }

    /// What a read of the rows not kept must be stamped with.
    struct Lookup {
        var found: [Int64: Report] = [:]
        var missing: [Int64] = []
        /// The drops counted by the stripes of the missing ids, before their read.
        var stamps: [Int: UInt64] = [:]
    }

    func lookup(_ ids: some Sequence<Int64>) -> Lookup {
        var result = Lookup()
        for id in ids {
            let l = lane(id)
            let (row, drops) = lanes[l].state.withLock { ($0.rows[id], $0.drops) }
            if let row {
                result.found[id] = row
            } else {
                result.missing.append(id)
                if result.stamps[l] == nil { result.stamps[l] = drops }
            }
        }
        hits.add(result.found.count, ordering: .relaxed)
        misses.add(result.missing.count, ordering: .relaxed)
        return result
    }

    /// Keeps rows read after `lookup`, those of stripes no write touched since.
    func keep(_ rows: [Report], stamps: [Int: UInt64]) {
        for row in rows {
            let l = lane(row.id)
            lanes[l].state.withLock { stripe in
                guard stripe.drops == stamps[l] else { return }
                if stripe.rows.count >= perLane, stripe.rows[row.id] == nil { stripe.rows.removeAll(keepingCapacity: true) }
                stripe.rows[row.id] = row
            }
        }
    }

    /// Forgets these reports' rows.
    func drop(_ ids: some Sequence<Int64>) {
        for id in ids {
            lanes[lane(id)].state.withLock { stripe in
                stripe.rows[id] = nil
                stripe.drops &+= 1
            }
        }
    }

    /// Forgets every row (the index was rebuilt from the rows).
    func dropAll() {
        for lane in lanes {
            lane.state.withLock { stripe in
                stripe.rows.removeAll()
                stripe.drops &+= 1
            }
        }
    }
}
