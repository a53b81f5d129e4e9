/// A door a task waits at until the test opens it (e.g. a service's background build, so
/// that a test sees the service while it builds).
public final class Gate: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    public init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }

    /// Waits until ``open()`` (at once when it was opened already).
    public func wait() async {
        for await _ in stream { return }
    }

    public func open() {
        continuation.yield()
        continuation.finish()
    }
}
