import Accounts
import Hummingbird
import NIOCore
import Synchronization

/// What a request carries through the router: Hummingbird's core context, and who is
/// calling (set by ``AuthenticationMiddleware`` from a valid bearer token; nil for the
/// public).
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var identity: AccountService.Identity?
    /// Kept, not read from ``channel`` when wanted: a closed channel forgets its peer.
    private let remoteAddress: SocketAddress?
    /// The request's connection, which the change stream writes to itself (``ChangeStreamConnection``).
    let channel: any Channel
    /// The client a trusted proxy forwards (``ClientMiddleware``).
    var forwardedClient: String?
    /// What the middleware outside learn of the request once it is answered.
    let facts = RequestFacts()
    /// The rate limits calls draw on (``ClientMiddleware``); nil: none.
    var limiter: RateLimiter?

    public init(source: Source) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }

    /// What an inner middleware found out, for the outer ones (the access log) to read after
    /// the answer: a context is a value, so what the inner ones set in theirs is gone.
    final class RequestFacts: Sendable {
        private let account = Mutex<Int64?>(nil)
        var accountID: Int64? {
            get { account.withLock { $0 } }
            set { account.withLock { $0 = newValue } }
        }
    }

    /// The peer's address.
    var peer: String { remoteAddress?.ipAddress ?? "unknown" }

    /// Who the client is, for login throttling and rate limits: the peer, or the address
    /// a trusted proxy forwards for it.
    public var client: String { forwardedClient ?? peer }

    /// The client as the rate limits count it (an IPv6 address's /64), for the account
    /// service's counts of failed logins and registrations.
    var clientGroup: String { RateLimiter.group(client) }

    /// Takes a call of the endpoint's kind from the client's rate limit.
    func drawRateLimit(_ endpoint: Endpoint) throws {
        if let kind = endpoint.rateClass { try limiter?.take(kind, client: client) }
    }
}
