import Geometry

/// Where a phone number stands: what a supervisor found out about it, and whether the
/// operators block it.
public enum PhoneStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Nobody has checked it yet (every number seen on a report starts here).
    case unverified
    /// Verified as the advertiser's: it may be blocked.
    case violator
    /// Verified as someone else's (a number written on a poster to harm its owner).
    case notViolator = "not_violator"
    /// Nobody answered it.
    case unreachable
    /// The operators' call-blocking systems block it (it was verified as `violator`).
    case blocked

    /// What a verification may find.
    public static let outcomes: [PhoneStatus] = [.violator, .notViolator, .unreachable]

    /// The outcome `text` names; anything else is an error on `outcome`.
    public init(outcome text: String) throws(ValidationError) {
        guard let status = PhoneStatus(rawValue: text), Self.outcomes.contains(status) else {
            throw ValidationError(field: "outcome", "must be one of \(Self.outcomes.map(\.rawValue).joined(separator: ", ")), got \"\(text.prefix(40))\"")
        }
        self = status
    }
}
