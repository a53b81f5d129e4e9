import StorePorts
import Synchronization

/// The last change the index is known to include: every change numbered through it is in
/// the index. It moves only where effects reach the index (the group commit's thread, in
/// commit order), so that each move is ordered with the writes it accounts for:
/// - a rebuild from the rows sets it to the rows' last change, back or forth;
/// - a pass over the change log moves it up to what the pass read, when the pass read on
///   from it (a pass that began before a rebuild set it back, or that shares the
///   rebuild's transaction, was reconciled against another index: it counts for nothing);
/// - a transaction of this process moves it over the numbers it gave out, when they
///   follow on from it: those changes are its own writes, whose effects are applied with
///   it, so no pass need read them back.
///
/// Own numbers starting below it mean the log went back (a restore under the running
/// process, followed by a write of its own before any pass noticed): that is kept for the
/// next catch-up, which rebuilds from the rows (``takeLogWentBack()``).
final class FollowedChange: Sendable {
    private let value: Atomic<Int64>
    private let wentBack = Atomic<Bool>(false)

    init(_ change: Int64) { value = Atomic(change) }

    var change: Int64 { value.load(ordering: .acquiring) }

    /// A pass over the log: it read the changes after `from` through `through`.
    struct Pass: Sendable {
        var from: Int64
        var through: Int64
    }

    /// After a rebuild from rows read at `change`.
    func reset(to change: Int64) { value.store(change, ordering: .releasing) }

    /// After a transaction's effects are applied (`replaced`: after a rebuild's, whose
    /// reset came first): the passes in it, and the change numbers it gave out.
    func advance(passes: [Pass], own: ChangeNumbers?, replaced: Bool) {
        let start = change
        var through = start
        if !replaced {
            for pass in passes where pass.from <= start { through = max(through, pass.through) }
        }
        if let own {
            if own.after < start {
                wentBack.store(true, ordering: .releasing)
            } else if own.after <= through {
                through = max(through, own.through)
            }
        }
        value.store(through, ordering: .releasing)
    }

    /// Whether a write of this process found the log gone back since it was last asked.
    func takeLogWentBack() -> Bool { wentBack.exchange(false, ordering: .acquiringAndReleasing) }
}
