import HTTPTypes
import Hummingbird
import Logging

/// One log line per request, once it is answered: its method, the route it took (the
/// endpoint's template, `/v1/phones/{number}`: never the values in the path, which may
/// be a phone number), the names of its query parameters (never their values, nor a name
/// that is not a plain word: a client may paste a token anywhere in a URL), the status,
/// the time to answer and the caller's account. The request id is in every line.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let metrics: ServerMetrics?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var status = 500
        defer { log(request, context, status: status, took: ContinuousClock.now - started) }
        let response = try await next(request, context)
        status = response.status.code
        return response
    }

    private func log(_ request: Request, _ context: Context, status: Int, took: Duration) {
        let names = QueryParameters.pairs(request.uri.query ?? "").map { pair in
            pair.name.count <= 32 && pair.name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) ? pair.name : "…"
        }
        var metadata: Logger.Metadata = [
            "hb.request.method": .string(request.method.rawValue), "route": .string(context.endpointPath ?? "unmatched"),
            "hb.request.query": .string(names.joined(separator: ",")), "status": .stringConvertible(status),
            "duration_ms": .stringConvertible((took / .microseconds(1)).rounded() / 1_000),
        ]
        if let account = context.facts.accountID { metadata["user_id"] = .stringConvertible(account) }
        context.logger.info("request", metadata: metadata)
        metrics?.request(method: request.method.rawValue, route: context.endpointPath ?? "unmatched", status: status, took: took)
    }
}

/// What every answer carries: its request id (`hb.request.id` in the logs) as
/// `X-Request-Id`, and `X-Content-Type-Options: nosniff`, so that a browser never takes
/// an answer (an uploaded photo, a CSV export, an error) for another type than it says.
struct CommonHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.requestID] = context.id
        response.headers[.xContentTypeOptions] = "nosniff"
        return response
    }
}

extension HTTPField.Name {
    static let requestID = Self("X-Request-Id")!
}
