import Foundation
import Synchronization

/// A value computed on a thread of its own while the caller goes on (a bulk import packs
/// its R*Tree this way while SQLite takes the rows).
final class Background<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(name: String, _ work: @escaping @Sendable () -> Value) {
        let thread = Thread { [self] in
            let result = work()
            value.withLock { $0 = result }
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// The value, waiting for it if it is not ready yet. Called once.
    func wait() -> Value {
        done.wait()
        return value.withLock { $0.take()! }
    }
}

