/// A copy of a saved cluster index kept in the database itself, for a store that several
/// replicas share (PostgreSQL): a new replica, which has no saved file of its own, starts
/// from the copy and the changes made since instead of building its index from every row.
///
/// The copy is a saved index's file, byte for byte; what it holds is checked when it is
/// read as any saved file is (its change, its database, its checksums). A store keeps one
/// copy: the one saved at the highest change.
///
/// Requirements: ``share(file:change:unlessWithin:)`` replaces the copy in one transaction,
/// so that a reader finds the whole old copy or the whole new one; two replicas sharing at
/// once leave the later change's; an import of a new data set drops the copy (it is of the
/// old one), and no index saved before an import is shared after it.
public protocol SharedIndexStorage: Sendable {
    /// The change the kept copy was saved at; nil when the database keeps none.
    func sharedIndexChange() async throws -> Int64?
    /// Keeps the file at `path`, an index saved at `change`, in place of the copy, unless
    /// the copy was saved at most `slack` changes before `change` or later (nil: whatever
    /// its change, for a copy no replica could read), or an import came after `change`;
    /// whether it was kept.
    func share(file path: String, change: Int64, unlessWithin slack: Int64?) async throws -> Bool
    /// Writes the kept copy to a new file at `path` and returns the change it was saved
    /// at; nil (and no file) when the database keeps none.
    func copySharedIndex(to path: String) async throws -> Int64?
}

extension SharedIndexStorage {
    /// Whether a copy saved at `kept` stays rather than give way to one saved at `change`:
    /// at or past it, or at most `slack` changes before it (nil: it gives way, whatever its
    /// change). The rule of ``share(file:change:unlessWithin:)``, which a caller may check
    /// first to spare itself a save.
    public static func keeps(_ kept: Int64?, over change: Int64, unlessWithin slack: Int64?) -> Bool {
        guard let kept, let slack else { return false }
        return kept >= change || change - kept <= slack
    }
}
