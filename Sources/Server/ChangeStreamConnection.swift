import ChangeFeed
import NIOCore
import NIOHTTPTypes

/// A change-stream subscriber's HTTP/1.1 connection, which the hub writes each chunk to as
/// a body part of the open response, on the connection's event loop. The response's head
/// and catch-up go through Hummingbird's writer first (``ChangeHub/open(_:)`` follows them).
///
/// A connection may hold `limit` bytes that the client has not taken, beyond what the
/// kernel's buffers hold: past that it is not writable, and the hub cuts it off. The
/// chunks are shared by all subscribers, so the bytes held are mostly references to them.
final class ChangeStreamConnection: ChangeConnection {
    let channel: any Channel

    init(channel: any Channel, limit: Int) {
        self.channel = channel
        // Its own bound, not the default 64 KiB: a chunk is a read's worth of events.
        channel.setOption(ChannelOptions.writeBufferWaterMark, value: .init(low: limit / 2, high: limit)).whenFailure { _ in }
    }

    var eventLoop: any EventLoop { channel.eventLoop }

    func send(_ chunk: ByteBuffer) -> Bool {
        guard channel.isActive else { return true }  // gone: its response ends the subscription
        guard channel.isWritable else { return false }
        channel.writeAndFlush(HTTPResponsePart.body(chunk), promise: nil)
        return true
    }

    func cutOff() {
        channel.close(promise: nil)
    }
}
