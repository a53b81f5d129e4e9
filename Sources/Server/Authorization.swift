import Accounts
import HTTPTypes
import Hummingbird
import ReportModel

/// Reads `Authorization: Bearer <token>` into the request's identity. No header: the
/// public. A header that is not a valid access token of an open session: a 401 at once,
/// so that a client learns to refresh instead of being served the public form silently.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let accounts: AccountService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else { return try await next(request, context) }
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw Unauthorized(reason: "the Authorization header must be Bearer and a token")
        }
        var context = context
        // Not Foundation's trimming, which goes through NSString on Linux: it showed in
        // profiles of the write bench, as every authenticated request pays it.
        var token = header.dropFirst(7)
        while token.first == " " || token.first == "\t" { token.removeFirst() }
        while token.last == " " || token.last == "\t" { token.removeLast() }
        context.identity = try await accounts.authenticate(String(token))
        context.facts.accountID = context.identity?.accountID
        return try await next(request, context)
    }
}

extension Endpoint.Access {
    /// The caller, when it may call an endpoint of this access: nil for the public on a
    /// public endpoint. No token where one is needed is a 401; a role below the one
    /// needed, a 403.
    func check(_ context: AppRequestContext) throws -> AccountService.Identity? {
        guard let roles else { return context.identity }
        guard let identity = context.identity else {
            throw Unauthorized(reason: "sign in first: send Authorization: Bearer and an access token")
        }
        guard roles.contains(where: identity.role.includes) else {
            throw Forbidden(reason: "this needs \(needs); the caller is \(identity.role)")
        }
        return identity
    }

    /// The roles that may call (each with those above it); nil: anyone.
    var roles: [Role]? {
        switch self {
        case .anyone: nil
        case .role(let role): [role]
        case .anyOf(let roles): roles
        }
    }

    /// Who may call, in words.
    var needs: String {
        switch self {
        case .anyone: "no role"
        case .role(let role): "the role \(role) or above"
        case .anyOf(let roles): "one of the roles " + roles.map(\.rawValue).joined(separator: ", ")
        }
    }
}

extension Router<AppRequestContext> {
    /// Registers an endpoint of the table that needs a signed-in caller: its method on its
    /// path, its query checked against the parameters it lists, and its access checked
    /// before the handler runs, which gets the caller.
    func handle(
        _ endpoint: Endpoint,
        _ handler: @escaping @Sendable (Request, QueryParameters, AppRequestContext, AccountService.Identity) async throws -> Response
    ) {
        precondition(endpoint.access != .anyone, "\(endpoint.path) is public: register it with read or handlePublic")
        on(RouterPath(endpoint.path), method: endpoint.method) { request, context in
            try context.drawRateLimit(endpoint)
            let query = try QueryParameters(request, endpoint: endpoint)
            // A role is needed, so check gives the caller or throws.
            let identity = try endpoint.access.check(context)!
            return try await handler(request, query, context, identity)
        }
    }

    /// Registers a public endpoint of the table that is not a read (sign-in and the like).
    func handlePublic(_ endpoint: Endpoint, _ handler: @escaping @Sendable (Request, QueryParameters, AppRequestContext) async throws -> Response) {
        precondition(endpoint.access == .anyone, "\(endpoint.path) needs a caller: register it with handle")
        on(RouterPath(endpoint.path), method: endpoint.method) { request, context in
            try context.drawRateLimit(endpoint)
            return try await handler(request, try QueryParameters(request, endpoint: endpoint), context)
        }
    }
}
