import HTTPTypes
import Hummingbird

/// Cross-origin requests from browsers. Reads are open to every origin: any page may show
/// the public data, and read every answer, errors included, with the headers a client
/// needs (`ETag`, `X-Request-Id`, `X-Last-Seq`, `Content-Crs`, `Location`, `Retry-After`,
/// `WWW-Authenticate`). Writes (any method but GET, HEAD and OPTIONS) are taken from a
/// browser only on the server's own page or on a configured origin (`serve --cors-origin`):
/// a write from another origin is a 403 before anything runs, and its preflight is
/// answered without the CORS headers, so the browser does not send it. Credentials are
/// bearer tokens the page sends itself, never cookies, and `*` is given only to reads.
/// (Hummingbird's CORS middleware exposes headers only on preflights and wraps errors,
/// which would hide our JSON error bodies.) Errors reach it as responses.
struct CORSMiddleware<Context: RequestContext>: RouterMiddleware {
    let writeOrigins: Set<String>

    static var exposed: String { "ETag, X-Request-Id, X-Last-Seq, Content-Crs, Link, Location, Retry-After, WWW-Authenticate" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .options { return try await preflight(request, context: context, next: next) }
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        if Self.isRead(request.method) {
            var response = try await next(request, context)
            response.headers[.accessControlAllowOrigin] = "*"
            response.headers[.accessControlExposeHeaders] = Self.exposed
            return response
        }
        guard mayWrite(origin, request) else {
            let refusal = APIError(
                .forbidden, code: "origin_not_allowed",
                message: "writes from a browser are taken from this server's own page and the origins it is configured with (serve --cors-origin), not from \(origin.prefix(100))",
                field: "Origin")
            return try refusal.response(from: request, context: context)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlExposeHeaders] = Self.exposed
        response.headers[.vary] = "Origin"
        return response
    }

    /// A preflight (or any `OPTIONS`): the path's methods from the endpoint table; the
    /// CORS headers for a read from anywhere, or a write from an origin that may write.
    private func preflight(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let methods = MethodMiddleware<Context>.methods(of: request.uri.path).map(\.rawValue).joined(separator: ", ")
        guard !methods.isEmpty else { return try await next(request, context) }
        var headers: HTTPFields = [.allow: methods]
        if let origin = request.headers[.origin] {
            let wanted = request.headers[.accessControlRequestMethod].map { HTTPRequest.Method($0) ?? .post } ?? .get
            let read = Self.isRead(wanted)
            if read || mayWrite(origin, request) {
                headers[.accessControlAllowOrigin] = read ? "*" : origin
                headers[.accessControlAllowMethods] = methods
                headers[.accessControlAllowHeaders] = "Accept, Accept-Encoding, Authorization, If-None-Match, If-Match, Idempotency-Key, Content-Type, Last-Event-ID"
                headers[.accessControlMaxAge] = "86400"
                if !read { headers[.vary] = "Origin" }
            }
        }
        return Response(status: .noContent, headers: headers)
    }

    static func isRead(_ method: HTTPRequest.Method) -> Bool { method == .get || method == .head }

    /// The server's own page (its origin names the host the request was sent to), or a
    /// configured origin.
    func mayWrite(_ origin: String, _ request: Request) -> Bool {
        if writeOrigins.contains(origin) { return true }
        guard let host = request.head.authority else { return false }
        return origin == "http://" + host || origin == "https://" + host
    }
}
