import Foundation

/// Reads a file ``FlatFileWriter`` wrote: its header at once, each section on demand
/// (``section(_:)``); sections may be read on several threads at once. Anything that does
/// not match what was written (a file cut short, a flipped byte, another machine's
/// layout, an array of another element size or beyond a caller's limit) is a
/// ``FlatFileError``, never a crash. What the values mean is the caller's to check: a
/// CRC-32 finds damage, not a file forged to pass it (the file is trusted as the
/// database beside it is).
public final class FlatFileReader: Sendable {
    private let fd: Int32
    let path: String
    /// What the writer put in the header.
    public let properties: [String: String]
    private let sections: [String: FlatFile.Section]

    public init(path: String) throws {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FlatFileError("cannot open \(path): \(String(cString: strerror(errno)))") }
        self.path = path
        do {
            var status = stat()
            guard fstat(fd, &status) == 0 else { throw FlatFileError("cannot read \(path): \(String(cString: strerror(errno)))") }
            let size = Int(status.st_size)
            let magic = FlatFile.magic.count
            guard size >= 2 * magic + 8 else { throw FlatFileError("\(path) is cut short (\(size) bytes)") }
            let head = try Self.bytes(fd, path, at: 0, count: magic)
            let trailer = try Self.bytes(fd, path, at: size - magic - 8, count: magic + 8)
            guard head == FlatFile.magic, Array(trailer[8...]) == FlatFile.magic else { throw FlatFileError("\(path) is not a whole flat file") }
            let length = trailer[0..<8].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            guard length > 0, length <= min(size - 2 * magic - 8, FlatFile.maxHeader) else { throw FlatFileError("\(path) has a damaged header") }
            let header: FlatFile.Header
            do {
                header = try JSONDecoder().decode(FlatFile.Header.self, from: Data(try Self.bytes(fd, path, at: size - magic - 8 - length, count: length)))
            } catch let error as FlatFileError { throw error } catch { throw FlatFileError("\(path) has a damaged header") }
            guard header.layout == FlatFile.layout else { throw FlatFileError("\(path) was written on a \(header.layout) machine") }
            let end = size - magic - 8 - length
            for (name, s) in header.sections where s.offset < magic || s.length < 0 || s.offset > end - s.length {
                throw FlatFileError("\(path): section \(name) lies outside the file")
            }
            properties = header.properties
            sections = header.sections
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// A reader of section `name`.
    public func section(_ name: String) throws -> FlatSectionReader {
        guard let s = sections[name] else { throw FlatFileError("\(path) has no section \(name)") }
        return FlatSectionReader(file: self, section: s, name: name)
    }

    /// What `body` reads of section `name`, which it must read whole (its checksum is
    /// checked after): a section read short is an error.
    public func read<T>(section name: String, _ body: (inout FlatSectionReader) throws -> T) throws -> T {
        var section = try section(name)
        let value = try body(&section)
        try section.finish()
        return value
    }

    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws {
        try Self.read(fd, path, into: buffer, at: offset)
    }

    private static func read(_ fd: Int32, _ path: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FlatFileError("cannot read \(path): \(n == 0 ? "it ends early" : String(cString: strerror(errno)))") }
            done += n
        }
    }

    private static func bytes(_ fd: Int32, _ path: String, at offset: Int, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withUnsafeMutableBytes { try read(fd, path, into: $0, at: offset) }
        return bytes
    }
}

/// The values of one section, read in the order they were written.
public struct FlatSectionReader {
    private let file: FlatFileReader
    private let name: String
    private let section: FlatFile.Section
    private var position: Int
    private var crc = FlatFile.emptyCRC

    fileprivate init(file: FlatFileReader, section: FlatFile.Section, name: String) {
        (self.file, self.section, self.name, position) = (file, section, name, section.offset)
    }

    /// One integer.
    public mutating func read() throws -> Int64 {
        let one: [Int64] = try read(limit: 1)
        guard one.count == 1 else { throw damaged("a value is missing") }
        return one[0]
    }

    /// An integer that must lie in `range`.
    public mutating func read(in range: ClosedRange<Int64>) throws -> Int64 {
        let value = try read()
        guard range.contains(value) else { throw damaged("a value lies outside \(range)") }
        return value
    }

    /// An array of at most `limit` plain values.
    public mutating func read<T: BitwiseCopyable>(limit: Int) throws -> [T] {
        let count = try head(T.self, limit: limit)
        return try [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            try take(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Arrays written by ``FlatFileWriter/write(nested:)``: at most `limit` lists of at
    /// most `elementLimit` elements in all. Inlinable so that it is specialized where it is
    /// called: unspecialized, each of the millions of lists a start reads looked up its
    /// type's metadata (a fifth of the start's time).
    @inlinable
    public mutating func read<T: BitwiseCopyable>(nestedLimit limit: Int, elementLimit: Int) throws -> [[T]] {
        let (counts, flat): ([UInt32], [T]) = try readRuns(limit: limit, elementLimit: elementLimit)
        var lists: [[T]] = []
        lists.reserveCapacity(counts.count)
        // Each list copied straight from the run (no slice in between: a start reads millions).
        flat.withUnsafeBufferPointer { flat in
            var start = 0
            for n in counts.lazy.map(Int.init) {
                lists.append(n == 0 ? [] : [T](unsafeUninitializedCapacity: n) { buffer, initialized in
                    _ = buffer.initialize(fromContentsOf: flat[start..<(start + n)])
                    initialized = n
                })
                start += n
            }
        }
        return lists
    }

    /// Strings written by ``FlatFileWriter/write(strings:)``; bytes that are not UTF-8 are an error.
    public mutating func readStrings(limit: Int, byteLimit: Int) throws -> [String] {
        let (counts, bytes): ([UInt32], [UInt8]) = try readRuns(limit: limit, elementLimit: byteLimit)
        var strings: [String] = []
        strings.reserveCapacity(counts.count)
        try bytes.withUnsafeBufferPointer { bytes in
            var start = 0
            for n in counts.lazy.map(Int.init) {
                guard let s = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<(start + n)]), as: UTF8.self) else { throw damaged("a string is not UTF-8") }
                strings.append(s)
                start += n
            }
        }
        return strings
    }

    /// The counts of lists and the run of all their elements, checked to agree.
    @inlinable
    public mutating func readRuns<T: BitwiseCopyable>(limit: Int, elementLimit: Int) throws -> (counts: [UInt32], flat: [T]) {
        let counts: [UInt32] = try read(limit: limit)
        let flat: [T] = try read(limit: elementLimit)
        // Added up with a bound at each step (a sum could overflow).
        var total = 0
        for n in counts {
            total += Int(n)
            guard total <= flat.count else { throw FlatFileError("\(description): lists and elements disagree") }
        }
        guard total == flat.count else { throw FlatFileError("\(description): lists and elements disagree") }
        return (counts, flat)
    }

    /// Checks that the section was read to its end and its bytes are those written.
    public func finish() throws {
        guard position == section.offset + section.length else { throw damaged("it holds more than was read") }
        guard crc == section.crc else { throw damaged("its checksum does not match") }
    }

    private mutating func head<T>(_: T.Type, limit: Int) throws -> Int {
        var head = (UInt64(0), UInt64(0))
        try withUnsafeMutableBytes(of: &head) { bytes in try take(bytes) }
        let (stride, count) = (UInt64(littleEndian: head.0), UInt64(littleEndian: head.1))
        guard stride == UInt64(MemoryLayout<T>.stride) else { throw damaged("an array of \(stride)-byte values where \(MemoryLayout<T>.stride) were expected") }
        guard count <= UInt64(max(0, limit)) else { throw damaged("an array of \(count) values, more than \(limit)") }
        guard Int(count) * Int(stride) <= section.offset + section.length - position else { throw damaged("an array runs past its end") }
        return Int(count)
    }

    private mutating func take(_ buffer: UnsafeMutableRawBufferPointer) throws {
        guard buffer.count <= section.offset + section.length - position else { throw damaged("it ends early") }
        // A piece at a time, each summed while it is still in the cache (summing a whole
        // array after reading it read it from memory twice).
        var done = 0
        while done < buffer.count {
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[done..<min(buffer.count, done + Self.piece)])
            try file.read(into: piece, at: position)
            crc = FlatFile.crc(crc, UnsafeRawBufferPointer(piece))
            position += piece.count
            done += piece.count
        }
    }

    private static let piece = 256 << 10

    private func damaged(_ what: String) -> FlatFileError {
        FlatFileError("\(description): \(what)")
    }

    /// The file and the section, for errors.
    public var description: String { "\(file.path), section \(name)" }
}
