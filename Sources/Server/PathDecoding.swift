import HTTPTypes
import Hummingbird

/// Requests reach the router with their path's percent-encoded octets decoded (RFC 3986
/// §2.1: `%40` and `@` are the same character), so `/v1/reports/%31` is report 1 and
/// `346%402x.png` a 512-px tile.
///
/// Only octets that decode to printable ASCII are decoded, and never `/`, `?`, `#` or `%`
/// themselves: a decoded `/` would split a segment in two, a decoded `%` could be decoded
/// again. Everything else stays encoded, which is no loss: no path parameter of this API
/// takes a space, a control character or non-ASCII text, so such a segment is refused
/// either way, with the encoded form quoted in the error. The query is left as it is
/// (Hummingbird decodes parameter values itself).
struct PathDecodingResponder<Base: HTTPResponder>: HTTPResponder {
    let base: Base

    func respond(to request: Request, context: Base.Context) async throws -> Response {
        guard let target = request.head.path, let decoded = Self.decode(target) else {
            return try await base.respond(to: request, context: context)
        }
        var head = request.head
        head.path = decoded
        return try await base.respond(to: Request(head: head, body: request.body), context: context)
    }

    /// The request target with its path decoded as above; nil when there is nothing to decode.
    static func decode(_ target: String) -> String? {
        guard target.utf8.prefix(while: { $0 != UInt8(ascii: "?") }).contains(UInt8(ascii: "%")) else { return nil }
        let bytes = Array(target.utf8)
        let pathEnd = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < pathEnd {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < pathEnd, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]), decodable(high << 4 | low)
            {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        out += bytes[pathEnd...]
        return String(decoding: out, as: UTF8.self)
    }

    private static func decodable(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && !"/?#%".utf8.contains(byte)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
