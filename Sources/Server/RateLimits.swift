import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// How many calls of each kind one client may make: a token bucket per client and kind,
/// `burst` calls at once, then `perSecond` on average. Sign-ins, registrations and writes
/// each have their own (reads are bounded by the connection limits instead).
public struct RateLimits: Sendable {
    public struct Bucket: Sendable, Equatable {
        public var burst: Double
        public var perSecond: Double
        public init(burst: Double, perSecond: Double) {
            self.burst = burst
            self.perSecond = perSecond
        }
        /// No limit.
        public static let unlimited = Bucket(burst: .infinity, perSecond: .infinity)
    }

    /// Sign-ins: 20 at once, then one every 3 s (failed passwords are also throttled per
    /// login and address, by the account service).
    public var logins = Bucket(burst: 20, perSecond: 1.0 / 3)
    /// Token refreshes, apart from sign-ins, so that someone failing sign-ins from an address
    /// its owner shares (a NAT) does not stop the owner's refreshes: 60 at once, then 2 a
    /// second (a client refreshes every 15 minutes).
    public var refreshes = Bucket(burst: 60, perSecond: 2)
    /// New accounts: 10 at once, then one a minute (a class of residents signing up from
    /// one school's address is the largest crowd expected).
    public var registrations = Bucket(burst: 10, perSecond: 1.0 / 60)
    /// Every other write (filings, edits, transitions, photos, phone steps, admin calls):
    /// 300 at once, then 50 a second: an offline app sending its queue fits in the burst.
    public var writes = Bucket(burst: 300, perSecond: 50)
    /// Peers whose `X-Forwarded-For` is believed: the reverse proxies in front of the
    /// server. From any other peer the header is ignored, so a client cannot pick its
    /// own address.
    public var trustedProxies: Set<String> = []
    /// The most clients remembered; past it, those whose buckets have refilled are forgotten
    /// (a full bucket is the same as none), and if that frees less than a quarter, every
    /// client is: memory and the sweep's work stay bounded even under a flood from more
    /// addresses than this, at the price of fresh bursts for all.
    public var maxClients = 100_000

    public init() {}

    /// No limits at all (benchmarks that file from one address).
    public static var none: RateLimits {
        var limits = RateLimits()
        limits.logins = .unlimited
        limits.refreshes = .unlimited
        limits.registrations = .unlimited
        limits.writes = .unlimited
        return limits
    }

    /// Whether `text` can be an IPv4 or IPv6 address (what `--trusted-proxy` takes).
    public static func isAddress(_ text: String) -> Bool { RateLimiter.isAddress(text) }

    /// Whether `text` is an origin as browsers send it: `scheme://host[:port]`.
    public static func isOrigin(_ text: String) -> Bool {
        origin(text) == text
    }

    func bucket(_ kind: Endpoint.RateClass) -> Bucket {
        switch kind {
        case .login: logins
        case .refresh: refreshes
        case .registration: registrations
        case .write: writes
        }
    }
}

/// Too many calls of a kind from one client (HTTP 429 with `Retry-After`).
struct RateLimited: Error, CustomStringConvertible {
    var kind: Endpoint.RateClass
    var retryAfter: Int
    var description: String { "too many \(kind.plural) from this address: try again in \(retryAfter) s" }
}

/// The buckets of every client, in memory: a server restart refills them.
final class RateLimiter: Sendable {
    let limits: RateLimits
    /// Refusals so far, by kind (metrics and tests).
    let refused = Mutex<[Endpoint.RateClass: Int]>([:])

    private struct Key: Hashable {
        var kind: Endpoint.RateClass
        var client: String
    }
    private struct Level {
        var tokens: Double
        var at: Double
    }
    private let levels = Mutex<[Key: Level]>([:])
    private let clock: @Sendable () -> Double

    init(_ limits: RateLimits, clock: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }) {
        self.limits = limits
        self.clock = clock
    }

    /// How many clients' buckets are kept (tests).
    var remembered: Int { levels.withLock { $0.count } }

    /// Takes one call of `kind` from `client`'s bucket, or throws ``RateLimited`` saying
    /// how long until there is one.
    func take(_ kind: Endpoint.RateClass, client: String) throws(RateLimited) {
        let bucket = limits.bucket(kind)
        guard bucket.perSecond.isFinite else { return }
        let now = clock()
        let key = Key(kind: kind, client: Self.group(client))
        let wait: Double? = levels.withLock { levels in
            var level = levels[key] ?? Level(tokens: bucket.burst, at: now)
            level.tokens = min(bucket.burst, level.tokens + (now - level.at) * bucket.perSecond)
            level.at = now
            defer {
                levels[key] = level
                if levels.count > limits.maxClients { forgetRefilled(&levels, now: now) }
            }
            guard level.tokens >= 1 else { return (1 - level.tokens) / bucket.perSecond }
            level.tokens -= 1
            return nil
        }
        if let wait {
            refused.withLock { $0[kind, default: 0] += 1 }
            throw RateLimited(kind: kind, retryAfter: max(1, Int(wait.rounded(.up))))
        }
    }

    private func forgetRefilled(_ levels: inout [Key: Level], now: Double) {
        levels = levels.filter { key, level in
            let bucket = limits.bucket(key.kind)
            return level.tokens + (now - level.at) * bucket.perSecond < bucket.burst
        }
        // Sweeping again at the next call would cost a pass over all of them per call.
        if levels.count > limits.maxClients * 3 / 4 { levels.removeAll(keepingCapacity: true) }
    }

    /// What a client is counted as: its IPv4 address, or the /64 network of its IPv6
    /// address (one subscriber is given a whole /64, and could otherwise take a fresh
    /// address per call). An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`, what a
    /// socket listening on `::` sees of IPv4 clients) is that IPv4 address: as a /64 every
    /// IPv4 client was one.
    static func group(_ address: String) -> String {
        let address = unmapped(address)
        guard address.contains(":") else { return address }
        var parts = address.split(separator: ":", omittingEmptySubsequences: false)
        if let gap = parts.firstIndex(of: "") {
            // Expand `::`, so that equal networks read alike.
            let present = parts.filter { !$0.isEmpty }.count
            parts.removeAll { $0.isEmpty }
            parts.insert(contentsOf: Array(repeating: "0", count: max(0, 8 - present)), at: min(gap, parts.count))
        }
        return parts.prefix(4).map { String(Int($0, radix: 16) ?? 0, radix: 16) }.joined(separator: ":") + "::/64"
    }

    /// An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`) as that IPv4 address; any other
    /// address as it is.
    static func unmapped(_ address: String) -> String {
        guard address.lowercased().hasPrefix("::ffff:"), let last = address.split(separator: ":").last, last.contains(".") else { return address }
        return String(last)
    }

    /// Whether `address` is a trusted proxy's, either way it may be written (a proxy on
    /// 127.0.0.1 reaches a socket on `::` as ::ffff:127.0.0.1, and may be configured so).
    static func isTrusted(_ address: String, _ trusted: Set<String>) -> Bool {
        trusted.contains(address) || trusted.contains(unmapped(address))
    }

    /// The client a trusted proxy says it forwards: the right-most address of
    /// `X-Forwarded-For` that is not itself a trusted proxy (those left of it were written
    /// by the client, and may be anything); nil when the header holds no such address.
    static func forwardedClient(_ header: String, trusted: Set<String>) -> String? {
        for entry in header.split(separator: ",").reversed() {
            let address = entry.trimmingCharacters(in: .whitespaces)
            guard isAddress(address) else { return nil }
            if !isTrusted(address, trusted) { return address }
        }
        return nil
    }

    /// Whether `text` can be an IPv4 or IPv6 address (only its characters and length).
    static func isAddress(_ text: String) -> Bool {
        (2...45).contains(text.utf8.count) && text.utf8.allSatisfy { $0 == 0x2E || $0 == 0x3A || (0x30...0x39).contains($0) || (0x61...0x66).contains($0 | 0x20) }
    }
}

/// Sets who the client is (its peer address, or the one a trusted proxy forwards) and the
/// limits the request draws on, which ``Router/handle(_:_:)`` applies by the endpoint.
struct ClientMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let limiter: RateLimiter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.limiter = limiter
        let trusted = limiter.limits.trustedProxies
        if !trusted.isEmpty, RateLimiter.isTrusted(context.peer, trusted), let header = request.headers[.xForwardedFor] {
            context.forwardedClient = RateLimiter.forwardedClient(header, trusted: trusted)
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
