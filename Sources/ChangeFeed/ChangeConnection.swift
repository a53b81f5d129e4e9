import NIOCore

/// A subscriber's connection, which the hub writes its chunks to itself, on the
/// connection's event loop (``ChangeHub/subscribe(after:staff:box:connection:)``).
public protocol ChangeConnection: AnyObject, Sendable {
    var eventLoop: any EventLoop { get }

    /// Writes a chunk; called on ``eventLoop``. False, writing nothing, when the connection
    /// already holds more unsent than it may: the hub cuts its subscriber off.
    func send(_ chunk: ByteBuffer) -> Bool

    /// Ends the connection at once: it fell behind, and what it holds unsent would wait
    /// for a client that does not read.
    func cutOff()
}
