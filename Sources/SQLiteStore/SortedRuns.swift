import Foundation

/// Records sorted by a key, however many there are, in memory of a fixed budget: a
/// record is a key and bytes of the caller's (``RecordBytes``); they gather in memory
/// until the budget is spent, are then sorted and written to a scratch file as one run,
/// and come back merged from all the runs in key order (``Merge``). Equal keys come
/// back in the order they were added.
///
/// Why ours: a bulk import used to sort its rows through SQLite's sorter, a staging
/// table read back with `ORDER BY`, which encodes every row as a record, decodes it again
/// and compares it column by column: at ten million reports that sort, of 4.5 GB, was a
/// third of the import. Here a row is encoded once, its key compared as a plain value,
/// and only the index of a run (key, place) is sorted in memory.
///
/// The scratch file is unlinked as soon as it is made, so nothing is left behind however
/// the import ends. One thread at a time adds, then one thread (any) merges.
final class SortedRuns<Key: Comparable & BitwiseCopyable & Sendable>: @unchecked Sendable {
    /// Where a record waiting in memory lies in its batch.
    private struct Entry {
        var key: Key
        var offset: UInt32
        var length: UInt32
    }

    /// Records waiting in memory: their bytes end to end, and where each lies. (Handed
    /// whole to the spiller's thread and back.)
    private struct Batch: @unchecked Sendable {
        let bytes: UnsafeMutableRawPointer
        let capacity: Int
        var used = 0
        var entries: [Entry] = []

        init(capacity: Int) {
            bytes = .allocate(byteCount: capacity, alignment: 8)
            self.capacity = capacity
        }

        /// Whether a record of `length` bytes fits, with its entry.
        func fits(_ length: Int) -> Bool { used + length + (entries.count + 1) * MemoryLayout<Entry>.stride <= capacity }

        mutating func add(_ key: Key, _ payload: UnsafeRawBufferPointer) {
            if let source = payload.baseAddress { (bytes + used).copyMemory(from: source, byteCount: payload.count) }  // none when empty
            entries.append(Entry(key: key, offset: UInt32(used), length: UInt32(payload.count)))
            used += payload.count
        }

        /// Equal keys keep the order they were added in: the offsets rise with it.
        mutating func sort() { entries.sort { $0.key < $1.key || ($0.key == $1.key && $0.offset < $1.offset) } }

        mutating func empty() {
            used = 0
            entries.removeAll(keepingCapacity: true)
        }

        func records() -> some Sequence<(Key, UnsafeRawBufferPointer)> {
            entries.lazy.map { [bytes] in ($0.key, UnsafeRawBufferPointer(start: bytes + Int($0.offset), count: Int($0.length))) }
        }

        func free() { bytes.deallocate() }
    }

    /// A run written to the file: where it starts and its bytes.
    fileprivate struct Run {
        var start: Int
        var length: Int
    }

    let budget: Int
    private let scratch: String
    private(set) var count = 0
    /// The batch being filled.
    private var filling: Batch
    /// The batch the spiller gave back, filled next (nil before the first spill).
    private var spare: Batch?
    /// Held while a run is written: by the spiller's thread, or by the caller writing one
    /// itself. `spare`, `failure` and what follows are touched only under it.
    private let writer = DispatchSemaphore(value: 1)
    private let spiller = DispatchQueue(label: "posterwatch.sorted-runs")
    private var failure: (any Error)?
    private var file: Int32 = -1
    private var fileSize = 0
    private var runs: [Run] = []

    /// A record in a run: the key, the payload's length, the payload.
    fileprivate static var headerSize: Int { MemoryLayout<Key>.size + 4 }

    /// An empty set whose records and index take at most `budget` bytes of memory: two
    /// batches of half of it, one filled while the other is sorted and written on a
    /// thread of its own (the import's reading thread is the busiest). A record larger
    /// than a batch is a run of its own. Runs go to a scratch file at `scratch`, made when
    /// the first run is written.
    init(budget: Int, scratch: String) {
        // Places in a batch are 32-bit.
        self.budget = min(max(budget, 1 << 17), Int(UInt32.max))
        self.scratch = scratch
        filling = Batch(capacity: self.budget / 2)
    }

    deinit {
        writer.wait()  // a spill under way
        writer.signal()  // (libdispatch refuses to free a semaphore below its first value)
        filling.free()
        spare?.free()
        if file >= 0 { close(file) }
    }

    /// Adds a record.
    func append(_ key: Key, _ payload: RecordBytes) throws {
        try payload.bytes.withUnsafeBytes { bytes in
            if !filling.fits(bytes.count), !filling.entries.isEmpty { try spillInBackground() }
            if filling.fits(bytes.count) {
                filling.add(key, bytes)
            } else {
                try writing { try writeRun([(key, bytes)]) }
            }
        }
        count += 1
    }

    /// Every record, in key order; the set takes no more records.
    func merged() throws -> Merge {
        writer.wait()  // the last spill written
        defer { writer.signal() }
        if let failure { throw failure }
        spare?.free()
        spare = nil
        filling.sort()
        if runs.isEmpty { return Merge(memory: self) }
        if !filling.entries.isEmpty { try writeRun(filling.records()) }
        filling.free()
        filling = Batch(capacity: 8)
        // The merge's now, closed by it even if it fails to start.
        let handed = file
        file = -1
        return try Merge(file: handed, runs: runs, memory: budget)
    }

    /// Hands the batch filled to the spiller (once the previous spill is written), and
    /// goes on with the one it gave back.
    private func spillInBackground() throws {
        writer.wait()
        if let failure {
            writer.signal()
            throw failure
        }
        // Boxed, so that the batch handed over is the only holder of its entries (a copy
        // captured by the closure would make the sort copy them).
        let full = BatchBox(filling)
        filling = spare ?? Batch(capacity: full.batch.capacity)
        filling.empty()
        spare = nil
        spiller.async { [self] in
            full.batch.sort()
            try? writeRun(full.batch.records())  // a failure is kept in `failure`
            full.batch.empty()
            spare = full.batch
            writer.signal()
        }
    }

    /// Runs `body` holding the writer (after any spill under way).
    private func writing(_ body: () throws -> Void) throws {
        writer.wait()
        defer { writer.signal() }
        if let failure { throw failure }
        try body()
    }

    /// Writes one run of records, in the order given. A failure is kept: the file's end
    /// is then unknown, and the set takes nothing more.
    private func writeRun(_ records: some Sequence<(Key, UnsafeRawBufferPointer)>) throws {
        do {
            if file < 0 { file = try Self.makeScratch(scratch) }
            let start = fileSize
            var out = OutputBuffer(file: file, path: scratch)
            for (key, payload) in records {
                out.write(key: key, length: UInt32(payload.count))
                try out.write(payload)
            }
            try out.flush()
            fileSize += out.written
            runs.append(Run(start: start, length: fileSize - start))
        } catch {
            failure = error
            throw error
        }
    }

    private final class BatchBox: @unchecked Sendable {
        var batch: Batch
        init(_ batch: Batch) { self.batch = batch }
    }

    /// A file for the runs, already unlinked: it goes when its descriptor is closed.
    private static func makeScratch(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SortedRunsError("cannot make the scratch file \(path): \(String(cString: strerror(errno)))") }
        unlink(path)
        return fd
    }

    /// Writes through a buffer of its own (a run's records are small).
    private struct OutputBuffer {
        let file: Int32
        let path: String
        var bytes: [UInt8] = []
        var written = 0
        static var size: Int { 1 << 20 }

        init(file: Int32, path: String) {
            self.file = file
            self.path = path
            bytes.reserveCapacity(Self.size)
        }

        mutating func write(key: Key, length: UInt32) {
            withUnsafeBytes(of: key) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: length) { bytes.append(contentsOf: $0) }
        }

        mutating func write(_ payload: UnsafeRawBufferPointer) throws {
            bytes.append(contentsOf: payload)
            if bytes.count >= Self.size { try flush() }
        }

        mutating func flush() throws {
            do {
                try FileHandle(fileDescriptor: file, closeOnDealloc: false).write(contentsOf: bytes)
            } catch {
                throw SortedRunsError("cannot write the scratch file \(path): \(error.localizedDescription)")
            }
            written += bytes.count
            bytes.removeAll(keepingCapacity: true)
        }
    }

    /// The records of every run, in key order (equal keys: the earlier run's first). The
    /// payload handed out is valid until the next call.
    final class Merge: @unchecked Sendable {
        /// A run being read: a window of its bytes, and the record at its head.
        private struct Cursor {
            var window: UnsafeMutableRawPointer
            var capacity: Int
            /// The window holds the run's bytes `[windowStart, windowStart + filled)` from `position` on.
            var position = 0
            var filled = 0
            var next: Int
            var end: Int
            var key: Key?
            var payloadOffset = 0
            var payloadLength = 0
        }

        private let source: SortedRuns?
        private var memoryIndex = 0
        private let file: Int32
        private var cursors: [Cursor] = []
        /// Cursors with a record, as a binary min-heap by (key, run).
        private var heap: [Int] = []
        /// The cursor whose record was handed out last, to advance on the next call.
        private var last: Int?

        fileprivate init(memory source: SortedRuns) {
            self.source = source
            file = -1
        }

        fileprivate init(file: Int32, runs: [Run], memory: Int) throws {
            source = nil
            self.file = file
            let window = max(64 << 10, min(256 << 10, memory / max(runs.count, 1)))
            for run in runs {
                cursors.append(Cursor(window: .allocate(byteCount: window, alignment: 8), capacity: window, next: run.start, end: run.start + run.length))
            }
            for i in cursors.indices {
                try advance(i)
                if cursors[i].key != nil { push(i) }
            }
        }

        deinit {
            for cursor in cursors { cursor.window.deallocate() }
            if file >= 0 { close(file) }
        }

        /// The next record in key order, nil after the last.
        func next() throws -> (key: Key, payload: UnsafeRawBufferPointer)? {
            if let source {
                guard memoryIndex < source.filling.entries.count else { return nil }
                let entry = source.filling.entries[memoryIndex]
                memoryIndex += 1
                return (entry.key, UnsafeRawBufferPointer(start: source.filling.bytes + Int(entry.offset), count: Int(entry.length)))
            }
            if let last {
                try advance(last)
                if cursors[last].key != nil { siftDown(0) } else { pop() }
                self.last = nil
            }
            guard let top = heap.first else { return nil }
            last = top
            let cursor = cursors[top]
            return (cursor.key!, UnsafeRawBufferPointer(start: cursor.window + cursor.payloadOffset, count: cursor.payloadLength))
        }

        /// Moves cursor `i` to its run's next record (its key nil at the run's end).
        private func advance(_ i: Int) throws {
            var c = cursors[i]
            defer { cursors[i] = c }
            c.position = c.key == nil ? c.position : c.payloadOffset + c.payloadLength
            let header = SortedRuns.headerSize
            guard try fill(&c, atLeast: header) else {
                c.key = nil
                return
            }
            let key = c.window.loadUnaligned(fromByteOffset: c.position, as: Key.self)
            let length = Int(c.window.loadUnaligned(fromByteOffset: c.position + MemoryLayout<Key>.size, as: UInt32.self))
            guard try fill(&c, atLeast: header + length) else { throw SortedRunsError("a run of the scratch file ends inside a record") }
            c.key = key
            c.payloadOffset = c.position + header
            c.payloadLength = length
        }

        /// Makes sure the window holds `count` bytes from the cursor's position on, moving
        /// what is left to its start and reading on (growing it for a record larger than
        /// it); false at the run's end.
        private func fill(_ c: inout Cursor, atLeast count: Int) throws -> Bool {
            if c.filled - c.position >= count { return true }
            let left = c.filled - c.position
            if left + (c.end - c.next) < count {
                guard left == 0 && c.next == c.end else { throw SortedRunsError("a run of the scratch file ends inside a record") }
                return false
            }
            if count > c.capacity {
                let larger = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 8)
                larger.copyMemory(from: c.window + c.position, byteCount: left)
                c.window.deallocate()
                c.window = larger
                c.capacity = count
            } else if left > 0 {
                c.window.copyMemory(from: c.window + c.position, byteCount: left)  // memmove: overlapping is allowed
            }
            c.position = 0
            c.filled = left
            while c.filled < count {
                let want = min(c.capacity - c.filled, c.end - c.next)
                let n = pread(file, c.window + c.filled, want, off_t(c.next))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw SortedRunsError("cannot read the scratch file: \(n < 0 ? String(cString: strerror(errno)) : "it ends early")") }
                c.filled += n
                c.next += n
            }
            return true
        }

        private func before(_ a: Int, _ b: Int) -> Bool {
            let x = cursors[a].key!, y = cursors[b].key!
            return x < y || (x == y && a < b)
        }

        private func push(_ i: Int) {
            heap.append(i)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard before(heap[child], heap[parent]) else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        private func pop() {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            if !heap.isEmpty { siftDown(0) }
        }

        private func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1, right = left + 1
                var least = parent
                if left < heap.count && before(heap[left], heap[least]) { least = left }
                if right < heap.count && before(heap[right], heap[least]) { least = right }
                guard least != parent else { return }
                heap.swapAt(parent, least)
                parent = least
            }
        }
    }
}

/// A failure to write or read a sort's scratch file (a full disc, most likely).
struct SortedRunsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A record's payload as it is built: plain values and texts, end to end, read back in
/// the same order by ``RecordReader``.
struct RecordBytes {
    fileprivate(set) var bytes: [UInt8] = []

    init(capacity: Int = 1024) { bytes.reserveCapacity(capacity) }

    mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    mutating func int(_ value: Int64) { withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) } }

    mutating func double(_ value: Double) { withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) } }

    /// A text, or none (read back as nil).
    mutating func text(_ value: String?) {
        guard let value else {
            withUnsafeBytes(of: UInt32.max) { bytes.append(contentsOf: $0) }
            return
        }
        withUnsafeBytes(of: UInt32(value.utf8.count)) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: value.utf8)
    }

    /// Texts joined by `separator`, read back as one text.
    mutating func text(joining values: [String], separator: UInt8) {
        let start = bytes.count
        withUnsafeBytes(of: UInt32(0)) { bytes.append(contentsOf: $0) }
        for (i, value) in values.enumerated() {
            if i > 0 { bytes.append(separator) }
            bytes.append(contentsOf: value.utf8)
        }
        let length = UInt32(bytes.count - start - 4)
        withUnsafeBytes(of: length) { for (i, byte) in $0.enumerated() { bytes[start + i] = byte } }
    }
}

/// Reads what ``RecordBytes`` wrote, in the order it was written.
struct RecordReader {
    private let payload: UnsafeRawBufferPointer
    private var offset = 0

    init(_ payload: UnsafeRawBufferPointer) { self.payload = payload }

    mutating func int() -> Int64 { value(Int64.self) }

    mutating func double() -> Double { value(Double.self) }

    /// A text's bytes (valid as long as the payload is), nil for none.
    mutating func text() -> UnsafeRawBufferPointer? {
        let length = value(UInt32.self)
        guard length != .max else { return nil }
        defer { offset += Int(length) }
        return UnsafeRawBufferPointer(rebasing: payload[offset..<(offset + Int(length))])
    }

    private mutating func value<T: BitwiseCopyable>(_ type: T.Type) -> T {
        defer { offset += MemoryLayout<T>.size }
        return payload.loadUnaligned(fromByteOffset: offset, as: T.self)
    }
}
