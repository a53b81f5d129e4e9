import Foundation
import ReportModel
import StorePorts

/// What this process knows of credentials whose power has ended or narrowed, kept in step
/// with the account events of every process on the database (``AccountStorage``):
/// sessions ended within an access token's life, disabled accounts, the current role of
/// accounts whose role was written within a token's life, and revoked API keys.
///
/// An access token says its role when it was issued; ``admit(_:)`` grants the lower of
/// that and the account's role now, so a token issued before a demotion grants nothing
/// above the new role, and one issued before a promotion nothing above the old one (the
/// next refresh brings the new role).
struct Revocations {
    /// The last account event applied.
    var seq: Int64 = 0
    var endedSessions: [String: Date] = [:]
    var disabledAccounts: Set<Int64> = []
    var roles: [Int64: (role: Role, at: Date)] = [:]
    var revokedKeys: Set<Int64> = []
    /// When entries older than ``memory`` were last dropped.
    private var forgotAt = Date.distantPast

    /// How long an ended session or a role change matters: the life of the tokens issued
    /// before it, and a minute for the clocks of other machines.
    static let memory = AccessTokens.lifetime + 60

    mutating func apply(_ event: AccountEvent, at: Date) {
        switch event {
        case .sessionEnded(let session, _):
            endedSessions[session] = at
        case .accountChanged(let id, let role, let disabled):
            if disabled { disabledAccounts.insert(id) } else { disabledAccounts.remove(id) }
            roles[id] = (role, at)
        case .apiKeyRevoked(let id):
            revokedKeys.insert(id)
        }
    }

    /// The identity as it may act now, or nil when its session has ended, its account is
    /// disabled or its key revoked.
    func admit(_ identity: AccountService.Identity) -> AccountService.Identity? {
        if let key = identity.apiKeyID { return revokedKeys.contains(key) ? nil : identity }
        guard endedSessions[identity.sessionID] == nil, !disabledAccounts.contains(identity.accountID) else { return nil }
        guard let current = roles[identity.accountID]?.role, identity.role.includes(current) else { return identity }
        var narrowed = identity
        narrowed.role = current
        return narrowed
    }

    /// Drops what no unexpired token can need any more, at most once a minute.
    mutating func forgetOld(now: Date = Date()) {
        guard now.timeIntervalSince(forgotAt) >= 60 else { return }
        forgotAt = now
        let horizon = now.addingTimeInterval(-Self.memory)
        endedSessions = endedSessions.filter { $0.value >= horizon }
        roles = roles.filter { $0.value.at >= horizon }
    }

    /// What the store says now, as of its newest account event, so that following the
    /// events from `seq` on misses none and repeats none.
    static func load(_ storage: any AccountStorage, now: Date = Date()) async throws -> Revocations {
        let snapshot = try await storage.revocations(since: now.addingTimeInterval(-memory))
        var loaded = Revocations()
        loaded.seq = snapshot.seq
        loaded.endedSessions = snapshot.endedSessions
        loaded.disabledAccounts = snapshot.disabledAccounts
        for change in snapshot.roleChanges { loaded.roles[change.accountID] = (change.role, change.at) }
        loaded.revokedKeys = snapshot.revokedKeys
        return loaded
    }
}
