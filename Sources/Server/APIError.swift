import Clustering
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import ReportStore

/// An error as every endpoint answers it: a status and `{"error": {"code", "message", "field"}}`.
///
/// Bad input is a 400 naming the parameter and the rule; a missing thing is a 404; a
/// failure of ours is a 500 whose message says nothing of the internals (they go to the log).
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// A stable machine-readable code, e.g. `invalid_parameter`, `not_found`.
    public var code: String
    public var message: String
    /// The parameter at fault, when there is one.
    public var field: String?
    /// The `Allow` header of a 405.
    var allow: String?

    public init(_ status: HTTPResponse.Status, code: String, message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = Self.body(code: code, message: message, field: field)
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if let allow { headers[.allow] = allow }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    /// The JSON body of an error.
    static func body(code: String, message: String, field: String?) -> String {
        #"{"error":{"code":"# + GeoJSON.string(code) + #","message":"# + GeoJSON.string(message)
            + #","field":"# + (field.map(GeoJSON.string) ?? "null") + "}}\n"
    }

    /// A failure of ours; the details are in the log under the request id.
    static let `internal` = APIError(.internalServerError, code: "internal", message: "the server failed to answer; the request id is in the log")

    /// The answer for any error a handler throws.
    static func from(_ error: any Error) -> APIError? {
        switch error {
        case let e as APIError: return e
        case let e as ValidationError: return APIError(.badRequest, code: "invalid_parameter", message: e.message, field: e.field)
        case let e as ClusterNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as NoSuchCluster: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as ReportNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as HTTPError:
            let code = switch e.status {
            case .notFound: "not_found"
            case .methodNotAllowed: "method_not_allowed"
            case .contentTooLarge: "too_large"
            case .uriTooLong: "too_long"
            default: e.status.code >= 500 ? "internal" : "bad_request"
            }
            let message = e.body ?? (e.status == .notFound ? "no such endpoint" : e.status.reasonPhrase)
            return APIError(e.status, code: code, message: message)
        default: return nil
        }
    }
}

/// Answers every error with ``APIError``'s JSON body (the middleware outside it only ever
/// see responses); errors of no known kind become a 500 with a generic message, and are
/// logged.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            guard let answer = APIError.from(error) else {
                context.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
                return try APIError.internal.response(from: request, context: context)
            }
            return try answer.response(from: request, context: context)
        }
    }
}
