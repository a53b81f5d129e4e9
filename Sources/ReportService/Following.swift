import Clustering
import Foundation
import Offloading
import StorePorts
import Tally

/// Other processes write to the database too: `posterwatch import`, the CLI, a second
/// server. The service follows the changes table, so its index and observers (the tile
/// cache) see their writes without a restart.
///
/// A pass reads the changes after the last one followed and the current rows of the
/// reports they name, and brings the index to them: an entry it already holds as the row
/// says costs nothing and touches no tile. This process's own writes are not read back
/// when their change numbers follow on from what was followed (``FollowedChange``); with
/// other writers between them they are, and cost nothing. The pass runs as a
/// write of its own through the group commit, so no write of this process can be applied
/// to the index between the pass's read and its effect. A bulk import's single change
/// (`imported`) rebuilds the index from the rows, aside, and swaps it in; the changes
/// after the rebuild's read are then followed as usual. So does a log whose last number
/// went back (a restore under a running server).
extension ReportService {
    /// The most changes one pass reads.
    static let followBatch = 10_000

    /// What a pass did.
    public struct CatchUp: Sendable, Hashable {
        /// The last change the index now includes.
        public var followed: Int64
        /// Index entries added, moved or removed.
        public var applied: Int
        /// Whether the index was rebuilt from the rows (after a bulk import).
        public var rebuilt: Bool
    }

    /// Brings the index up to the changes committed so far, by any process.
    @discardableResult
    public func catchUp() async throws -> CatchUp {
        // A start building the index in the background follows once it is built.
        guard indexReady else { return CatchUp(followed: followed.change, applied: 0, rebuilt: false) }
        return try await followLog()
    }

    /// ``catchUp()``, also before the index is ready (the background build's own). Where
    /// only the rows can say what the changes did (an import, forgotten changes, a log that
    /// went back), the index is rebuilt from them, or with `rebuilding` false
    /// ``CatchUpNeedsRebuild`` is thrown (a start from a saved index builds in the
    /// background instead). A pass that fails marks the rows kept in memory as not to be
    /// trusted until one succeeds (``publicReports(ids:)``).
    func followLog(rebuilding: Bool = true) async throws -> CatchUp {
        do {
            let result = try await followPasses(rebuilding: rebuilding)
            followFailing.store(false, ordering: .releasing)
            return result
        } catch {
            followFailing.store(true, ordering: .releasing)
            throw error
        }
    }

    private func followPasses(rebuilding: Bool) async throws -> CatchUp {
        var result = CatchUp(followed: followed.change, applied: 0, rebuilt: false)
        while true {
            // In this order: the log's last number, read after, is never below what this
            // process has followed of it (its own writes move that too), but when the log
            // went back.
            let from = followed.change
            let last = try await lastChange()
            if last < from || followed.takeLogWentBack() {
                // The log went back: the database was restored from an older backup under
                // this process. Only the rows can say what it holds now.
                guard rebuilding else { throw CatchUpNeedsRebuild() }
                try await rebuild()
                result.rebuilt = true
                continue
            }
            guard last > from else { break }
            let pass = try await commits.perform { [self] t in
                // Changes forgotten (retention) before they were followed: only the rows can say
                // what they did, so the index is rebuilt, as after an import.
                guard try t.prunedThrough() <= from else { return (Pass(applied: 0, rebuild: true), IndexEffect()) }
                let rows = try t.changes(after: from, limit: Self.followBatch)
                let before = rows.prefix { $0.action != .imported }
                var effect = try reconcile(Set(before.map(\.reportID)), t)
                let end = before.last?.seq ?? (rows.isEmpty ? last : from)
                effect.pass = FollowedChange.Pass(from: from, through: end)
                return (Pass(applied: effect.changes.count, rebuild: before.count < rows.count), effect)
            }
            result.applied += pass.applied
            if pass.rebuild {
                guard rebuilding else { throw CatchUpNeedsRebuild() }
                try await rebuild()
                result.rebuilt = true
            }
        }
        result.followed = followed.change
        return result
    }

    private struct Pass: Sendable {
        var applied: Int
        /// An import, or forgotten changes, come next: the index is rebuilt from the rows.
        var rebuild: Bool
    }

    /// What brings the index's entries of `ids` to the rows as `t` sees them.
    private func reconcile(_ ids: Set<Int64>, _ t: any ReportTransaction) throws -> IndexEffect {
        let rows = Dictionary(uniqueKeysWithValues: try t.markers(ids: ids, ClusterEntry.init).map { ($0.id, $0) })
        var effect = IndexEffect()
        for id in ids.sorted() {
            if let wanted = rows[id] {
                guard !index.holds(wanted) else { continue }
                effect.changes.append(.upsert(wanted))
                effect.touched.append(wanted)
                if let held = index.entry(id: id) { effect.touched.append(held) }
            } else if let held = index.entry(id: id) {
                effect.changes.append(.remove(id: id))
                effect.touched.append(held)
            }
        }
        let phones = Dictionary(uniqueKeysWithValues: try t.tallyMarkers(ids: ids).map { ($0.id, ReportTally.Entry($0)) })
        for id in ids.sorted() where tally.entry(id: id) != phones[id] {
            effect.phones.append(phones[id].map { .set(id: id, $0) } ?? .remove(id: id))
        }
        effect.rowsChanged = Array(ids)
        return effect
    }

    /// Builds an index from the rows beside the served one and swaps it in; the changes
    /// after the rows' read are followed from there.
    func rebuild() async throws {
        let (fresh, tally, lastChange) = try await Self.build(storage, grid: index.grid)
        try await commits.perform { _ in ((), IndexEffect(replacement: (fresh, tally, lastChange))) }
    }

    /// Calls `observer` when the index has been replaced by one rebuilt from the rows
    /// (after a bulk import by another process): anything drawn from it may have changed.
    public func onReplace(_ observer: @escaping @Sendable () -> Void) {
        observers.replaced.withLock { $0.append(observer) }
    }

    /// Follows other processes' writes until cancelled: a catch-up at most every
    /// `interval` while changes come, and once idle, as soon as the change log has one
    /// past what the index holds (``ChangeLog/nextChange(after:timeout:)``: a store told
    /// of commits wakes it at once).
    public func followChanges(every interval: Duration) async {
        while !Task.isCancelled {
            _ = try? await catchUp()
            try? await Task.sleep(for: interval)
            let held = followed.change
            _ = try? await read { try await $0.nextChange(after: held, timeout: Self.idleWait) }
        }
    }

    /// The longest an idle follower waits for a change before it catches up anyway.
    static let idleWait = Duration.seconds(5)
}

/// The changes after a saved index hold an import or changes already forgotten: only the
/// rows can say what they did.
struct CatchUpNeedsRebuild: Error, CustomStringConvertible {
    var description: String { "the changes since hold an import, or changes already forgotten" }
}
