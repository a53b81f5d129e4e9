import Foundation
import HTTPTypes
import Hummingbird
import Interchange

/// Bodies of the API's answers. Every body built whole carries its strong `ETag`, hashed
/// here while the bytes are at hand (``ReadResponseMiddleware`` then needs no second look
/// at them unless it compresses them).
enum Responses {
    static func body(_ bytes: [UInt8], type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .eTag: bytes.withUnsafeBytes(ETag.of)],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The `links` member of a GeoJSON page that has a next one: the one place its JSON
    /// is written.
    static func nextLink(_ href: String) -> (String, String) {
        ("links", #"[{"rel":"next","type":"application/geo+json","href":"# + GeoJSON.string(href) + "}]")
    }

    static func geoJSON(_ bytes: [UInt8]) -> Response { body(bytes, type: "application/geo+json") }

    /// A `Codable` value as a JSON body, members sorted (the same value is the same bytes,
    /// and so the same tag), slashes unescaped.
    static func json(_ value: some Encodable, type: String = "application/json") throws -> Response {
        body(try jsonBytes(value) + [0x0A], type: type)
    }

    /// A `Codable` value for the caller alone (tokens, accounts): never stored by a cache.
    static func `private`(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try jsonBytes(value) + [0x0A])))
    }

    static func jsonBytes(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }
}

/// Strong entity tags: a 64-bit hash of the body, in quotes. Four lanes take 32 bytes a
/// step (each a multiply-xorshift mix of eight bytes, independent of the others so that
/// they overlap in the processor); each lane is then finalized (murmur's finalizer, so
/// that the same change in two lanes cannot cancel out) and mixed into one, which takes
/// the last whole words and the bytes after them, and is finalized in turn.
enum ETag {
    static func of(_ bytes: UnsafeRawBufferPointer) -> String {
        @inline(__always) func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
            let m = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
            return m ^ (m >> 32)
        }
        @inline(__always) func finalize(_ h: UInt64) -> UInt64 {
            var h = h
            h ^= h >> 33
            h = h &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 33
            h = h &* 0xC4CE_B9FE_1A85_EC53
            return h ^ (h >> 33)
        }
        let seed: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var lanes = (seed, seed &+ 1, seed &+ 2, seed &+ 3)
        var i = 0
        while i + 32 <= bytes.count {
            lanes.0 = mix(lanes.0, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            lanes.1 = mix(lanes.1, bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self))
            lanes.2 = mix(lanes.2, bytes.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self))
            lanes.3 = mix(lanes.3, bytes.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self))
            i += 32
        }
        var h = mix(mix(mix(finalize(lanes.0), finalize(lanes.1)), finalize(lanes.2)), finalize(lanes.3))
        while i + 8 <= bytes.count {
            h = mix(h, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            i += 8
        }
        while i < bytes.count {
            h = (h ^ UInt64(bytes[i])) &* 0xC4CE_B9FE_1A85_EC53
            i += 1
        }
        return "\"" + String(finalize(h), radix: 16) + "\""
    }
}

/// What every successful read with an `ETag` (a body built whole; streamed bodies pass
/// untouched) gets on its way out:
/// - the configured `Cache-Control` (unless the route set its own, as tiles do), and
///   `Vary: Accept-Encoding`;
/// - `304 Not Modified` when `If-None-Match` names its tag;
/// - gzip when the client accepts it and the body is over 1 KiB and not an image (PNG is
///   compressed already), with `-gz` appended to the tag (a strong tag names one
///   representation).
struct ReadResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    let cacheControl: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard request.method == .get || request.method == .head, response.status == .ok,
              let identityTag = response.headers[.eTag], let length = response.body.contentLength else { return response }
        let gzip = length > 1024 && response.headers[.contentType]?.hasPrefix("image/") != true
            && Gzip.accepted(by: request.headers[.acceptEncoding])
        let tag = gzip ? identityTag.dropLast() + "-gz\"" : identityTag
        response.headers[.eTag] = tag
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = cacheControl }
        response.headers[.vary] = response.headers[.vary].map { $0 + ", Accept-Encoding" } ?? "Accept-Encoding"
        if let wanted = request.headers[.ifNoneMatch], Self.matches(wanted, tag) {
            response.headers[.contentLength] = nil
            return Response(status: .notModified, headers: response.headers)
        }
        if gzip {
            let collector = BodyCollector()
            try await response.body.write(BodyCollector.Writer(into: collector))
            if let compressed = collector.buffer.withUnsafeReadableBytes({ Gzip.compress($0) }) {
                response.headers[.contentEncoding] = "gzip"
                response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: compressed))
            } else {
                response.body = ResponseBody(byteBuffer: collector.buffer)
            }
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

/// The methods of the endpoint table: a method a path does not take is a 405 with `Allow`
/// listing those it does (GET brings HEAD; every path answers CORS preflights); a request
/// line longer than 8 KiB is a 414.
struct MethodMiddleware<Context: RequestContext>: RouterMiddleware {
    static var maxURILength: Int { 8_192 }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.description.utf8.count <= Self.maxURILength else {
            throw APIError(.uriTooLong, code: "too_long", message: "the request URI is longer than \(Self.maxURILength) bytes", field: nil)
        }
        // A request the router finds a route for is let through at once; only the router's
        // "no route" is looked into, to tell a wrong method (405) from a wrong path (404).
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = Self.methods(of: request.uri.path)
            guard allowed.isEmpty || request.method == .options || allowed.contains(request.method) else {
                let names = allowed.map(\.rawValue).joined(separator: ", ")
                var refusal = APIError(.methodNotAllowed, code: "method_not_allowed", message: "\(request.method) is not allowed here; this path takes \(names)")
                refusal.headers[.allow] = names
                throw refusal
            }
            throw error
        }
    }

    /// The methods the endpoints of a path take (empty: no endpoint has the path).
    static func methods(of path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var methods: [HTTPRequest.Method] = []
        for (template, endpoints) in table where template.count == segments.count
            && zip(template, segments).allSatisfy({ $0.contains("{") || $0 == $1 })
        {
            for e in endpoints where !methods.contains(e.method) {
                methods.append(e.method)
                if e.method == .get { methods.append(.head) }
            }
        }
        if !methods.isEmpty { methods.append(.options) }
        return methods
    }

    static var table: [([Substring], [Endpoint])] { EndpointPaths.table }
}

/// The endpoint table by path, each path split into its segments.
enum EndpointPaths {
    static let table: [([Substring], [Endpoint])] = Dictionary(grouping: Endpoint.all, by: \.path)
        .map { ($0.key.split(separator: "/", omittingEmptySubsequences: false), $0.value) }
}

/// A response body collected (to be compressed), within one request.
final class BodyCollector: @unchecked Sendable {
    var buffer = ByteBuffer()

    func append(_ part: ByteBuffer) {
        var part = part
        buffer.writeBuffer(&part)
    }

    struct Writer: ResponseBodyWriter {
        let into: BodyCollector
        mutating func write(_ part: ByteBuffer) async throws { into.append(part) }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
