import Foundation

/// Runs a producer on a thread of its own, a few items ahead of the consumer, so that
/// reading and parsing a file overlaps with storing what was parsed (two cores, two jobs).
///
/// ```swift
/// let batches = ReadAhead { try reader.next() }   // `reader` is owned by the producer thread
/// while let batch = try batches.next() { store(batch) }
/// ```
///
/// The producer stops after it returns nil or throws; ``next()`` then keeps returning
/// that end. Dropping the value stops the producer at its next item.
public final class ReadAhead<Element: Sendable>: Sendable {
    private let state = State()

    /// - Parameters:
    ///   - depth: how many items may wait, produced but not yet taken.
    ///   - produce: the next item, or nil at the end. Called on the producer thread only.
    public init(depth: Int = 2, _ produce: @escaping @Sendable () throws -> Element?) {
        precondition(depth >= 1)
        // The thread holds the state, not `self`, so dropping `self` can stop it.
        let thread = Thread { [state] in
            while true {
                state.condition.lock()
                while state.buffer.count >= depth && !state.cancelled { state.condition.wait() }
                let stop = state.cancelled
                state.condition.unlock()
                if stop { return }
                let item = Result { try produce() }
                state.condition.lock()
                state.buffer.append(item)
                state.condition.broadcast()
                state.condition.unlock()
                if case .success(.some) = item { continue }
                return
            }
        }
        thread.name = "posterwatch.read-ahead"
        thread.start()
    }

    /// The next item, waiting for the producer if it is behind; nil at the end.
    public func next() throws -> Element? {
        state.condition.lock()
        defer { state.condition.unlock() }
        while state.buffer.isEmpty { state.condition.wait() }
        let item = state.buffer[0]
        if case .success(.some) = item {
            state.buffer.removeFirst()
            state.condition.broadcast()
        }
        return try item.get()
    }

    deinit {
        state.condition.lock()
        state.cancelled = true
        state.condition.broadcast()
        state.condition.unlock()
    }

    /// What the two threads share; every access holds `condition`.
    private final class State: @unchecked Sendable {
        let condition = NSCondition()
        var buffer: [Result<Element?, any Error>] = []
        var cancelled = false
    }
}

extension ReportReader {
    /// The reader's batches, read and parsed on a thread of their own, ahead of the consumer.
    public consuming func readingAhead(depth: Int = 2) -> ReadAhead<ReportBatch> {
        let box = ReaderBox(self)
        return ReadAhead(depth: depth) { try box.reader.next() }
    }
}

/// Hands a reader to the producer thread, the only one that uses it afterwards.
private final class ReaderBox: @unchecked Sendable {
    var reader: ReportReader
    init(_ reader: ReportReader) { self.reader = reader }
}
