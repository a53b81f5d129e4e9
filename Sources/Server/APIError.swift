import Accounts
import ChangeFeed
import Clustering
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import Photos
import ReportModel
import ReportService
import StorePorts
import Webhooks

/// An error as every endpoint answers it: a status and
/// `{"error": {"code", "message", "field", "fields": [{"field", "message"}]}}`, where
/// `field` is the first field at fault and `fields` lists every one.
///
/// Bad input is a 400 (a parameter) or a 422 (a body's fields) naming each field and its
/// rule; a missing thing is a 404; a missing or bad credential a 401 with
/// `WWW-Authenticate`; a role that may not do this a 403; a failure of ours is a 500 whose
/// message says nothing of the internals (they go to the log).
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// A stable machine-readable code, e.g. `invalid_parameter`, `not_found`.
    public var code: String
    public var message: String
    /// The parameter at fault, when there is one.
    public var field: String?
    /// Every field at fault with its rule (the one of `field` when there is only that).
    public var fields: [ValidationError] = []
    /// Extra headers: `Allow` on a 405, `WWW-Authenticate` on a 401, `Retry-After` on a 429 and on a 503 while the index is built.
    var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, code: String, message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    /// A 422 naming every field of a body that broke a rule.
    init(_ errors: ValidationErrors) {
        let count = errors.issues.count
        self.init(
            .unprocessableContent, code: "invalid_body",
            message: count == 1 ? errors.issues[0].description : "\(count) fields are invalid: " + errors.description, field: errors.issues.first?.field)
        fields = errors.issues
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        let fields = self.fields.isEmpty ? field.map { [ValidationError(field: $0, message)] } ?? [] : self.fields
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: Self.body(code: code, message: message, field: field, fields: fields))))
    }

    /// The JSON body of an error.
    static func body(code: String, message: String, field: String?, fields: [ValidationError] = []) -> String {
        struct Body: Encodable {
            struct Detail: Encodable {
                struct Field: Encodable { var field, message: String }
                var code, message: String
                var field: String?
                var fields: [Field]

                func encode(to encoder: any Encoder) throws {
                    var container = encoder.container(keyedBy: CodingKeys.self)
                    try container.encode(code, forKey: .code)
                    try container.encode(message, forKey: .message)
                    try container.encode(field, forKey: .field)  // null when there is none
                    try container.encode(fields, forKey: .fields)
                }
                enum CodingKeys: CodingKey { case code, message, field, fields }
            }
            var error: Detail
        }
        let body = Body(error: .init(code: code, message: message, field: field, fields: fields.map { .init(field: $0.field, message: $0.message) }))
        return String(decoding: (try? Responses.jsonBytes(body)) ?? Array(#"{"error":{"code":"internal"}}"#.utf8), as: UTF8.self) + "\n"
    }

    /// A failure of ours; the details are in the log under the request id.
    static let `internal` = APIError(.internalServerError, code: "internal", message: "the server failed to answer; the request id is in the log")

    /// The answer for any error a handler throws.
    static func from(_ error: any Error) -> APIError? {
        switch error {
        case let e as APIError: return e
        case let e as ValidationError: return APIError(.badRequest, code: "invalid_parameter", message: e.message, field: e.field)
        case let e as ValidationErrors: return APIError(e)
        case let e as Unauthorized:
            var error = APIError(.unauthorized, code: "unauthorized", message: e.reason)
            error.headers[.wwwAuthenticate] = #"Bearer realm="posterwatch", error="invalid_token""#
            return error
        case let e as Forbidden: return APIError(.forbidden, code: "forbidden", message: e.reason)
        case let e as TooManyAttempts:
            var error = APIError(.tooManyRequests, code: "too_many_attempts", message: e.description)
            error.headers[.retryAfter] = String(e.retryAfter)
            return error
        case let e as RateLimited:
            var error = APIError(.tooManyRequests, code: "rate_limited", message: e.description)
            error.headers[.retryAfter] = String(e.retryAfter)
            return error
        case let e as AccountNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as SessionNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as ClusterNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as NoSuchCluster: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as ReportNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as WebhookNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "id")
        case let e as PhotoNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "photo")
        case let e as PhotoLimitReached: return APIError(ValidationErrors([ValidationError(field: "photos", e.description)]))
        case let e as ImageRejected: return APIError(ValidationErrors([ValidationError(field: "body", e.reason)]))
        case let e as PhoneNotFound: return APIError(.notFound, code: "not_found", message: e.description, field: "number")
        case let e as PhoneStatusConflict: return APIError(.conflict, code: "phone_status_conflict", message: e.description, field: "number")
        case let e as CampaignConflict: return APIError(.conflict, code: "autodial_conflict", message: e.description, field: "number")
        case let e as AssignmentConflict: return APIError(.conflict, code: "assignment_conflict", message: e.description, field: e.reportID == nil ? nil : "id")
        case let e as TransitionNotAllowed: return APIError(.conflict, code: "transition_not_allowed", message: e.description, field: "to")
        case let e as ReportHidden: return APIError(.conflict, code: e.hidden ? "hidden" : "not_hidden", message: e.description, field: "id")
        case let e as PreconditionFailed: return APIError(.preconditionFailed, code: "precondition_failed", message: e.description, field: "If-Match")
        case let e as IdempotencyKeyReused: return APIError(.unprocessableContent, code: "idempotency_key_reused", message: e.description, field: "Idempotency-Key")
        case let e as IdempotencyKeyInFlight: return APIError(.conflict, code: "idempotency_key_in_flight", message: e.description, field: "Idempotency-Key")
        case let e as ChangesUnavailable: return APIError(.gone, code: "changes_unavailable", message: e.description, field: "since")
        case let e as IndexBuilding:
            var error = APIError(.serviceUnavailable, code: "starting", message: e.description)
            error.headers[.retryAfter] = "5"
            return error
        case let e as StoreBusy:
            var error = APIError(.serviceUnavailable, code: "busy", message: e.description)
            error.headers[.retryAfter] = "5"
            return error
        case let e as RecordsRejected: return APIError(ValidationErrors(e.issues.map(\.error)))
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
/// logged (a ``RedactedError`` by its values-free description).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            guard let answer = APIError.from(error) else {
                let text = (error as? any RedactedError)?.logDescription ?? String(reflecting: error)
                context.logger.error("request failed", metadata: ["error": "\(text)"])
                return try APIError.internal.response(from: request, context: context)
            }
            return try answer.response(from: request, context: context)
        }
    }
}
