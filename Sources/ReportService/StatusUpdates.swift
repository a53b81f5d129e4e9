import Foundation
import ReportModel

/// One status change of a public report, as anyone may see it (no author, no note): what
/// Open311's service request updates list.
public struct StatusUpdate: Sendable, Hashable {
    /// The change's number: the update's id, and the cursor to read on after it.
    public var seq: Int64
    public var reportID: Int64
    public var at: Date
    public var fromStatus: String?
    public var toStatus: String
}

/// A page of status updates, and where to read on.
public struct StatusUpdates: Sendable, Hashable {
    public var updates: [StatusUpdate]
    /// The change to read on after (`after`) when the page stopped before the window's end:
    /// at its limit, or at the most changes one page reads; nil when the window was read to
    /// its end (or to the log's).
    public var next: Int64?
}

extension ReportService {
    /// The status changes of public reports made from `start` to `end` (both included),
    /// oldest first, at most `limit`; with `after`, only those after that change (a
    /// client reads on from the last it got, whatever their times).
    ///
    /// They are read from the change log, which is kept in the order of commits: the first
    /// change at or after `start` is found by bisection over its numbers (a few reads
    /// however long the log), then the log is read forward in pages until `end`, at most
    /// `scan` changes (a window of a busy city's filings holds millions, few of them
    /// steps): past it the page ends early, with where to read on. A change log pruned by
    /// retention no longer holds what it forgot.
    public func statusUpdates(
        from start: Date, to end: Date, after: Int64? = nil, limit: Int, scan: Int = statusUpdateScan
    ) async throws -> StatusUpdates {
        precondition(scan > 0, "a page reads at least one change")
        guard limit > 0, start <= end else { return StatusUpdates(updates: [], next: nil) }
        var cursor = try await max(after ?? 0, changeCursor(before: start))
        var updates: [StatusUpdate] = [], read = 0
        while true {
            let want = min(Self.statusUpdatePage, scan - read)
            guard want > 0 else { return StatusUpdates(updates: updates, next: cursor) }
            let page = try await self.read { try await $0.changes(after: cursor, limit: want) }.rows
            read += page.count
            let inWindow = page.prefix { $0.at <= end }
            let found = try await publicUpdates(inWindow.filter { $0.action == .transition && $0.at >= start })
            updates += found.prefix(limit - updates.count)
            // A full page: more may follow (the next page may be empty).
            guard updates.count < limit else { return StatusUpdates(updates: updates, next: updates.last?.seq) }
            guard let last = page.last, page.count == want, inWindow.count == page.count else { break }
            cursor = last.seq
        }
        return StatusUpdates(updates: updates, next: nil)
    }

    /// The change log is read this many rows at a time.
    static let statusUpdatePage = 1_000

    /// The most changes one page of status updates reads (some milliseconds of reads).
    public static let statusUpdateScan = 50_000

    /// A change number such that every change up to it was made before `time` and the
    /// first after it, if any, at or after `time` (0 when even the oldest kept was).
    private func changeCursor(before time: Date) async throws -> Int64 {
        let first = try await read { try await $0.changes(after: 0, limit: 1) }
        guard let oldest = first.rows.first else { return first.lastSeq }
        guard oldest.at < time else { return 0 }
        var (low, high) = (oldest.seq, first.lastSeq)
        while low < high {
            let middle = low + (high - low) / 2
            guard let row = try await read({ try await $0.changes(after: middle, limit: 1) }).rows.first, row.at < time else {
                high = middle
                continue
            }
            low = row.seq
        }
        return low
    }

    /// The steps' history rows, those of reports public now, as anyone may see them.
    private func publicUpdates(_ steps: [ChangeRow]) async throws -> [StatusUpdate] {
        guard !steps.isEmpty else { return [] }
        let (entries, reports) = try await read { storage in
            (try await storage.history(seqs: steps.compactMap(\.historySeq)), try await storage.reports(ids: Set(steps.map(\.reportID))))
        }
        let visible = Set(reports.map(\.id))
        return steps.compactMap { step in
            guard visible.contains(step.reportID), let seq = step.historySeq, let entry = entries[seq], let to = entry.toStatus else { return nil }
            return StatusUpdate(seq: step.seq, reportID: step.reportID, at: entry.at, fromStatus: entry.fromStatus, toStatus: to)
        }
    }
}
