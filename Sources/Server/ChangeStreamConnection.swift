import ChangeFeed
import NIOCore
import NIOHTTPTypes
import Synchronization

/// A change-stream subscriber's HTTP/1.1 connection, which the hub writes each chunk to as
/// a body part of the open response, on the connection's event loop. The response's head
/// and catch-up go through Hummingbird's writer first (``ChangeHub/open(_:)`` follows them).
///
/// A connection may hold `limit` bytes that the client has not taken, beyond what the
/// kernel's buffers hold; a chunk that finds more is not written, and the hub cuts the
/// subscriber off. The chunks are shared by all subscribers without a box, so the bytes
/// held are mostly references to them.
final class ChangeStreamConnection: ChangeConnection {
    let channel: any Channel
    let limit: Int
    /// Set when the hub cuts the connection off: its close runs on the event loop after
    /// writes already queued there, which must then write nothing.
    private let closed = Atomic<Bool>(false)

    init(channel: any Channel, limit: Int) {
        self.channel = channel
        self.limit = limit
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    /// Counted in bytes, not by the channel's writability: that comes back only below the
    /// low water mark, so a client still draining its catch-up would be cut off.
    func send(_ chunk: ByteBuffer) -> Bool {
        guard channel.isActive, !closed.load(ordering: .acquiring) else { return true }  // gone: its response ends the subscription
        let unsent = (try? channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        guard unsent <= limit else { return false }
        channel.writeAndFlush(HTTPResponsePart.body(chunk), promise: nil)
        return true
    }

    func cutOff() {
        closed.store(true, ordering: .releasing)
        channel.close(promise: nil)
    }
}
