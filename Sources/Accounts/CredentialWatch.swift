import ReportModel
import Synchronization

/// A long-lived answer's hold on its caller's power (a change stream's staff events). It
/// ends, and calls `onEnd` once, as soon as the credential no longer grants `role`: its
/// session is ended, its account disabled or given a lower role, its API key revoked (in
/// this process or any other on the database), or its access token expires.
public final class CredentialWatch: Sendable {
    public let identity: AccountService.Identity
    let role: Role
    let id: Int
    private let onEnd: @Sendable () -> Void
    private let done = Atomic<Bool>(false)

    init(identity: AccountService.Identity, role: Role, id: Int, onEnd: @escaping @Sendable () -> Void) {
        self.identity = identity
        self.role = role
        self.id = id
        self.onEnd = onEnd
    }

    /// Whether it has ended: the answer must give nothing more that needs `role`.
    public var isEnded: Bool { done.load(ordering: .acquiring) }

    /// Ends it; only the first call calls `onEnd`.
    func end() {
        guard done.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        onEnd()
    }
}

/// The watches of this process, by id.
struct CredentialWatches {
    var next = 0
    var all: [Int: CredentialWatch] = [:]
}
