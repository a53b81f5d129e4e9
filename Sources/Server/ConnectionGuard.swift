import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// How many connections the server holds and how long it waits for them: the limits that
/// keep idle or half-sent connections from taking every file descriptor.
public struct ConnectionLimits: Sendable {
    /// A connection with no request under way for this long is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// A request whose head (request line and headers) is not complete this long after its
    /// first byte arrived is answered 408 and its connection closed (slow-header clients).
    public var headerTimeout: Duration = .seconds(10)
    /// Connections past this many are answered 503 and closed at once. At start it is
    /// lowered, if need be, to half the process's descriptor limit, so that SQLite, the
    /// log and the listening socket always find one.
    public var maxConnections = 4_096

    public init() {}

    /// Raises the soft limit on open descriptors as far as the hard limit allows (at most
    /// 1,048,576) and answers the soft limit in force.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        let wanted = min(limit.rlim_max, 1 << 20)
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }

    /// ``maxConnections``, lowered to half of `descriptorLimit`.
    func connectionCap(descriptorLimit: Int) -> Int { max(1, min(maxConnections, descriptorLimit / 2)) }
}

/// HTTP/1.1 with the server's connection rules (``HTTPRules``, ``ConnectionGuard``)
/// around Hummingbird's own channel.
struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let headerTimeout: TimeAmount
    let maxConnections: Int
    let open: OpenConnections

    init(responder: @escaping HTTPChannelHandler.Responder, limits: ConnectionLimits, maxConnections: Int, open: OpenConnections) {
        inner = HTTP1Channel(responder: responder, configuration: .init(idleTimeout: TimeAmount(limits.idleTimeout)))
        headerTimeout = TimeAmount(limits.headerTimeout)
        self.maxConnections = maxConnections
        self.open = open
    }

    var responder: HTTPChannelHandler.Responder { inner.responder }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger).flatMapThrowing { [headerTimeout, maxConnections, open] value in
            let pipeline = channel.pipeline.syncOperations
            let clock = RequestClock()
            try pipeline.addHandler(
                ConnectionGuard(clock: clock, headerTimeout: headerTimeout, maxConnections: maxConnections, open: open), position: .first)
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(HTTPRules(clock: clock), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// The number of connections open, shared by all of them.
final class OpenConnections: Sendable {
    let count = Atomic<Int>(0)
    init() {}
}

/// Where a connection is between requests, shared by its two handlers (both on the
/// connection's event loop).
final class RequestClock {
    /// Whether a request head has arrived and its response has not ended.
    var inRequest = false
    /// The header timeout, while a request's first bytes are in and its head is not.
    var deadline: Scheduled<Void>?

    func headArrived() {
        deadline?.cancel()
        deadline = nil
        inRequest = true
    }
}

/// Counts the connection against the limit, and times request heads from their first byte.
/// It sits first in the pipeline, so it sees bytes and answers in bytes.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let clock: RequestClock
    let headerTimeout: TimeAmount
    let maxConnections: Int
    let open: OpenConnections
    private var counted = false

    init(clock: RequestClock, headerTimeout: TimeAmount, maxConnections: Int, open: OpenConnections) {
        self.clock = clock
        self.headerTimeout = headerTimeout
        self.maxConnections = maxConnections
        self.open = open
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        clock.deadline?.cancel()
        release()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !clock.inRequest && clock.deadline == nil {
            clock.deadline = context.eventLoop.assumeIsolated().scheduleTask(in: headerTimeout) { [clock] in
                clock.deadline = nil
                Self.refuse(context, status: "408 Request Timeout", code: "timeout", message: "the request head did not arrive in time")
            }
        }
        context.fireChannelRead(data)
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard !counted else { return }
        counted = true
        if open.count.add(1, ordering: .relaxed).newValue > maxConnections {
            Self.refuse(context, status: "503 Service Unavailable", code: "busy", message: "the server holds as many connections as it may; try again", retryAfter: 1)
        }
    }

    private func release() {
        guard counted else { return }
        counted = false
        open.count.subtract(1, ordering: .relaxed)
    }

    /// Answers in bytes, below the HTTP codec, and closes the connection.
    static func refuse(_ context: ChannelHandlerContext, status: String, code: String, message: String, retryAfter: Int? = nil) {
        let body = APIError.body(code: code, message: message, field: nil)
        var head = "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nConnection: close\r\n"
        if let retryAfter { head += "Retry-After: \(retryAfter)\r\n" }
        head += "Content-Length: \(body.utf8.count)\r\n\r\n"
        context.writeAndFlush(NIOAny(ByteBuffer(string: head + body)), promise: nil)
        context.close(promise: nil)
    }
}

/// Rules of HTTP/1.x that sit below Hummingbird's view of a request (it sees no version):
/// - an HTTP/1.1 request without `Host` is a 400 (RFC 9112 §3.2);
/// - an HTTP/1.0 request, or one that says `Connection: close`, gets its answer as
///   HTTP/1.0 or with `Connection: close`, and then the connection is closed (RFC 9112
///   §9.3; a 1.0 answer is never chunked: its end is the connection's);
/// - each request head stops the header timeout of ``ConnectionGuard``, and each answer's
///   end lets the next request's first byte start it.
final class HTTPRules: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    let clock: RequestClock
    /// The version of each request read and not yet answered, and whether its connection
    /// closes after its answer: pipelined requests are all read before the first is
    /// answered, and answered in order.
    private var unanswered: [(version: HTTPVersion, closing: Bool)] = []
    private var refused = false

    init(clock: RequestClock) { self.clock = clock }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            clock.headArrived()
            guard !refused else { return }
            if head.version.minor >= 1 && !head.headers.contains(name: "host") {
                refused = true
                refuseMissingHost(context)
                return
            }
            let closing = head.version.minor == 0
                || head.headers[canonicalForm: "connection"].contains { $0.lowercased() == "close" }
            unanswered.append((head.version, closing))
            if closing { head.headers.replaceOrAdd(name: "connection", value: "close") }
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .body, .end:
            if !refused { context.fireChannelRead(data) }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where unanswered.first?.closing == true:
            head.version = unanswered[0].version.minor == 0 ? .http1_0 : head.version
            head.headers.replaceOrAdd(name: "connection", value: "close")
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            if !unanswered.isEmpty { unanswered.removeFirst() }
            clock.inRequest = !unanswered.isEmpty
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    private func refuseMissingHost(_ context: ChannelHandlerContext) {
        let body = APIError.body(code: "bad_request", message: "an HTTP/1.1 request must carry a Host header", field: "Host")
        let headers = HTTPHeaders([
            ("Content-Type", "application/json"), ("Cache-Control", "no-store"), ("Connection", "close"), ("Content-Length", "\(body.utf8.count)"),
        ])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.close(promise: nil)
    }
}
