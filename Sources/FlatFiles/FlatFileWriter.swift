import CISAL
import Foundation

/// Writes a file of named sections, each a run of plain values and arrays of them copied
/// byte for byte from memory, with a CRC-32 per section and a header (JSON) at the end.
/// What the service saves its in-memory indexes in, so that a start reads them back in a
/// fraction of the time building them takes (``FlatFileReader``).
///
/// The layout: the magic; the sections, one after the other; the header; its length and
/// the magic again (8 bytes each). A file cut short anywhere lacks its trailer and is
/// refused whole. Values are in this machine's byte order and layout: the header records
/// the layout's fingerprint, and a reader on another refuses the file.
public final class FlatFileWriter {
    private let fd: Int32
    private let path: String
    private var buffer: [UInt8] = []
    /// The bytes written to the file so far (those in `buffer` follow).
    private var offset = 0
    private var sectionStart = 0
    private var crc = FlatFile.emptyCRC
    private var sections: [String: FlatFile.Section] = [:]
    private static let bufferSize = 1 << 20

    /// Creates (or truncates) the file at `path`, readable by its owner only.
    public init(path: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FlatFileError("cannot create \(path): \(String(cString: strerror(errno)))") }
        self.path = path
        buffer.reserveCapacity(Self.bufferSize)
        append(FlatFile.magic)
        try flush()
        sectionStart = offset
        crc = FlatFile.emptyCRC
    }

    deinit { close(fd) }

    /// One integer.
    public func write(_ value: Int64) throws {
        try write([value])
    }

    /// An array of plain values: its element size, its count, its bytes.
    public func write<T: BitwiseCopyable>(_ values: [T]) throws {
        try writeHead(stride: MemoryLayout<T>.stride, count: values.count)
        try values.withUnsafeBytes { bytes in try writeBytes(bytes) }
    }

    /// Arrays of plain values, read back as the same arrays: their counts, then all their
    /// elements in one run.
    public func write<T: BitwiseCopyable>(nested lists: [[T]]) throws {
        try write(lists.map { UInt32($0.count) })
        try writeHead(stride: MemoryLayout<T>.stride, count: lists.reduce(0) { $0 + $1.count })
        for list in lists {
            try list.withUnsafeBytes { bytes in try writeBytes(bytes) }
        }
    }

    /// Strings, as their UTF-8 lengths and then their bytes in one run.
    public func write(strings: [String]) throws {
        try write(nested: strings.map { Array($0.utf8) })
    }

    /// Ends the section begun after the previous one (or at the start), under `name`.
    public func endSection(_ name: String) throws {
        try flush()
        sections[name] = FlatFile.Section(offset: sectionStart, length: offset - sectionStart, crc: crc)
        sectionStart = offset
        crc = FlatFile.emptyCRC
    }

    /// Writes the header with `properties` and the trailer, and flushes the file to the
    /// disk. The caller renames it into place: a reader never sees it half written.
    public func finish(properties: [String: String]) throws {
        precondition(sectionStart == offset && buffer.isEmpty, "a section is not ended")
        let header = FlatFile.Header(layout: FlatFile.layout, properties: properties, sections: sections)
        let json: Data
        do { json = try JSONEncoder().encode(header) } catch { throw FlatFileError("cannot encode the header: \(error)") }
        append(Array(json))
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { append(Array($0)) }
        append(FlatFile.magic)
        try flush()
        guard fsync(fd) == 0 else { throw FlatFileError("cannot sync \(path): \(String(cString: strerror(errno)))") }
    }

    private func writeHead(stride: Int, count: Int) throws {
        withUnsafeBytes(of: (UInt64(stride).littleEndian, UInt64(count).littleEndian)) { append(Array($0)) }
    }

    private func writeBytes(_ bytes: UnsafeRawBufferPointer) throws {
        if bytes.count < Self.bufferSize / 4 {
            if buffer.count + bytes.count > Self.bufferSize { try flush() }
            buffer.append(contentsOf: bytes)
            return
        }
        try flush()
        try put(bytes)
    }

    private func append(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { bytes in try put(bytes) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes bytes at the end of the file, counting them into the section's checksum.
    private func put(_ bytes: UnsafeRawBufferPointer) throws {
        crc = FlatFile.crc(crc, bytes)
        var done = 0
        while done < bytes.count {
            let n = Foundation.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FlatFileError("cannot write \(path): \(String(cString: strerror(errno)))") }
            done += n
        }
        offset += bytes.count
    }
}

/// What is wrong with a flat file, or with writing one.
public struct FlatFileError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The format's constants, shared by the writer and the reader.
enum FlatFile {
    static let magic = Array("PWFLAT01".utf8)
    /// The longest header a reader takes (a section's entry is some 80 bytes).
    static let maxHeader = 1 << 20
    static let emptyCRC: UInt = 0

    struct Section: Codable {
        var offset: Int
        var length: Int
        var crc: UInt
    }

    struct Header: Codable {
        var layout: String
        var properties: [String: String]
        var sections: [String: Section]
    }

    /// What a file's bytes mean on this machine: its byte order and word size.
    static var layout: String {
        "\(1.littleEndian == 1 ? "little" : "big")-endian, \(MemoryLayout<Int>.size * 8)-bit"
    }

    /// `crc` continued over `bytes`: the CRC-32 of gzip and zlib, by ISA-L (36 GB/s here
    /// with carry-less multiplies, against zlib's 7.5: an eighth of a start on ten million
    /// reports went to checksums).
    static func crc(_ crc: UInt, _ bytes: UnsafeRawBufferPointer) -> UInt {
        guard let start = bytes.baseAddress else { return crc }
        return UInt(crc32_gzip_refl(UInt32(truncatingIfNeeded: crc), start.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count)))
    }
}
