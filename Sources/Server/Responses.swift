import HTTPTypes
import Hummingbird

/// Bodies of the API's answers.
enum Responses {
    static func json(_ text: String) throws -> Response {
        body(Array(text.utf8), type: "application/json")
    }

    static func body(_ bytes: [UInt8], type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func geoJSON(_ bytes: [UInt8]) -> Response { body(bytes, type: "application/geo+json") }
}

/// What every successful read gets on its way out, when its body is built whole
/// (streamed bodies pass untouched):
/// - a strong `ETag` (a 64-bit FNV-1a hash of the body; `-gz` appended for the gzip
///   variant, as a strong tag names one representation) and the configured `Cache-Control`;
/// - `304 Not Modified` when `If-None-Match` names that tag;
/// - gzip when the client accepts it and the body is over 1 KiB (`Vary: Accept-Encoding`).
struct ReadResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    let cacheControl: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard request.method == .get || request.method == .head, response.status == .ok, response.body.contentLength != nil else { return response }
        let collector = BodyCollector()
        try await response.body.write(BodyCollector.Writer(into: collector))
        let gzip = collector.buffer.readableBytes > 1024 && Gzip.accepted(by: request.headers[.acceptEncoding])
        let tag = "\"" + String(collector.hash, radix: 16) + (gzip ? "-gz" : "") + "\""
        response.headers[.eTag] = tag
        response.headers[.cacheControl] = cacheControl
        response.headers[.vary] = "Accept-Encoding"
        if let wanted = request.headers[.ifNoneMatch], Self.matches(wanted, tag) {
            response.headers[.contentLength] = nil
            return Response(status: .notModified, headers: response.headers)
        }
        if gzip, let compressed = collector.buffer.withUnsafeReadableBytes({ Gzip.compress($0) }) {
            response.headers[.contentEncoding] = "gzip"
            response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: compressed))
        } else {
            response.body = ResponseBody(byteBuffer: collector.buffer)
        }
        return response
    }

    /// Whether an `If-None-Match` value names `tag`: `*`, or one of its entity tags under
    /// the weak comparison RFC 9110 prescribes for it (`W/` ignored).
    static func matches(_ header: String, _ tag: String) -> Bool {
        header.split(separator: ",").contains { item in
            var t = item.trimmingCharacters(in: .whitespaces)
            if t.hasPrefix("W/") { t.removeFirst(2) }
            return t == "*" || t == tag
        }
    }
}

/// The API reads: GET, HEAD (the router answers it as GET without the body) and CORS preflights.
/// Any other method is a 405 with `Allow`; a request line longer than 8 KiB is a 414.
struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    static var maxURILength: Int { 8_192 }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.description.utf8.count <= Self.maxURILength else {
            throw APIError(.uriTooLong, code: "too_long", message: "the request URI is longer than \(Self.maxURILength) bytes", field: nil)
        }
        switch request.method {
        case .get, .head, .options:
            return try await next(request, context)
        default:
            var error = APIError(.methodNotAllowed, code: "method_not_allowed", message: "\(request.method) is not allowed here; this API answers GET and HEAD")
            error.allow = "GET, HEAD, OPTIONS"
            throw error
        }
    }
}

/// A response body collected and hashed (FNV-1a, 64 bits), within one request.
final class BodyCollector: @unchecked Sendable {
    var buffer = ByteBuffer()
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    func append(_ part: ByteBuffer) {
        part.withUnsafeReadableBytes { bytes in
            for b in bytes {
                hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01B3
            }
        }
        var part = part
        buffer.writeBuffer(&part)
    }

    struct Writer: ResponseBodyWriter {
        let into: BodyCollector
        mutating func write(_ part: ByteBuffer) async throws { into.append(part) }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
