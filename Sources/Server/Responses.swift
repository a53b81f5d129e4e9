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

/// A strong `ETag` on every successful read whose body is built whole (a 64-bit FNV-1a
/// hash of it; streamed bodies pass untouched), `304 Not Modified` when `If-None-Match`
/// names it, and the configured `Cache-Control`.
struct ETagMiddleware<Context: RequestContext>: RouterMiddleware {
    let cacheControl: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard request.method == .get || request.method == .head, response.status == .ok, response.body.contentLength != nil else { return response }
        let collector = BodyCollector()
        try await response.body.write(BodyCollector.Writer(into: collector))
        let tag = "\"" + String(collector.hash, radix: 16) + "\""
        response.headers[.eTag] = tag
        response.headers[.cacheControl] = cacheControl
        if let wanted = request.headers[.ifNoneMatch], wanted.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag || $0 == "*" }) {
            return Response(status: .notModified, headers: response.headers)
        }
        response.body = ResponseBody(byteBuffer: collector.buffer)
        return response
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
