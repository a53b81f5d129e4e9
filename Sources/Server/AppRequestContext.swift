import Accounts
import Hummingbird
import NIOCore

/// What a request carries through the router: Hummingbird's core context, and who is
/// calling (set by ``AuthenticationMiddleware`` from a valid bearer token; nil for the
/// public).
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: AccountService.Identity?
    private let remoteAddress: SocketAddress?

    public init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The peer's address (what login throttling counts by).
    public var client: String { remoteAddress?.ipAddress ?? "unknown" }
}
