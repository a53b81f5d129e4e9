import StorePorts
import Synchronization

/// The last change the index is known to include: every change numbered through it is in
/// the index. It moves only where effects reach the index (the group commit's thread, in
/// commit order), so that each move is ordered with the writes it accounts for:
/// - a rebuild from the rows sets it to the rows' last change, back or forth;
/// - a pass over the change log moves it up to what the pass read;
/// - a transaction of this process moves it over the numbers it gave out, when they
///   follow on from it: those changes are its own writes, whose effects are applied with
///   it, so no pass need read them back.
final class FollowedChange: Sendable {
    private let value: Atomic<Int64>

    init(_ change: Int64) { value = Atomic(change) }

    var change: Int64 { value.load(ordering: .acquiring) }

    /// After a rebuild from rows read at `change`.
    func reset(to change: Int64) { value.store(change, ordering: .releasing) }

    /// After a transaction's effects are applied: the passes in it read the log through
    /// `passes`; `own` are the change numbers it gave out. Both hold only what is now in
    /// the index, so the greatest of them counts; own numbers count only when every
    /// change before them is in it too.
    func advance(passes: [Int64], own: ChangeNumbers?) {
        var through = max(change, passes.max() ?? .min)
        if let own, own.after <= through { through = max(through, own.through) }
        value.store(through, ordering: .releasing)
    }
}
