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

extension ReportService {
    /// The status changes of public reports made from `start` to `end` (both included),
    /// oldest first, at most `limit`; with `after`, only those after that change (a
    /// client reads on from the last it got, whatever their times).
    ///
    /// They are read from the change log, which is kept in the order of commits: the first
    /// change at or after `start` is found by bisection over its numbers (a few reads
    /// however long the log), then the log is read forward in pages until `end`. A change
    /// log pruned by retention no longer holds what it forgot.
    public func statusUpdates(from start: Date, to end: Date, after: Int64? = nil, limit: Int) async throws -> [StatusUpdate] {
        guard limit > 0, start <= end else { return [] }
        var cursor = try await max(after ?? 0, changeCursor(before: start))
        var updates: [StatusUpdate] = []
        while updates.count < limit {
            let page = try await read { try await $0.changes(after: cursor, limit: Self.statusUpdatePage) }.rows
            let inWindow = page.prefix { $0.at <= end }
            updates += try await publicUpdates(inWindow.filter { $0.action == .transition && $0.at >= start }).prefix(limit - updates.count)
            guard let last = page.last, page.count == Self.statusUpdatePage, inWindow.count == page.count else { break }
            cursor = last.seq
        }
        return updates
    }

    /// The change log is read this many rows at a time.
    static let statusUpdatePage = 1_000

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
