import Accounts
import Hummingbird

/// What a request carries through the router: Hummingbird's core context, and who is
/// calling (set by ``AuthenticationMiddleware`` from a valid bearer token; nil for the
/// public).
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: AccountService.Identity?
    /// The peer's address (what login throttling counts by).
    public let client: String

    public init(source: Source) {
        coreContext = .init(source: source)
        client = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
