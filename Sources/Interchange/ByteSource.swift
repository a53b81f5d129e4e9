import Foundation
import Geometry

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The immutable bytes of an input: a memory-mapped regular file, or a copy in memory
/// (in-memory data, pipes and other files that cannot be mapped).
final class ByteSource: @unchecked Sendable {
    let base: UnsafePointer<UInt8>
    let count: Int
    private let release: Release

    private enum Release {
        case unmap(UnsafeMutableRawPointer, Int)
        case deallocate(UnsafeMutableRawPointer)
    }

    init(bytes: some Collection<UInt8>) {
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(bytes.count, 1), alignment: 16)
        let typed = pointer.bindMemory(to: UInt8.self, capacity: Swift.max(bytes.count, 1))
        _ = UnsafeMutableBufferPointer(start: typed, count: bytes.count).initialize(from: bytes)
        base = UnsafePointer(typed)
        count = bytes.count
        release = .deallocate(pointer)
    }

    /// The most of an input that cannot be mapped (a pipe, a device) read into memory: an
    /// import's memory stays bounded whatever is piped into it.
    static let unmappedLimit = 1 << 30

    init(path: String, unmappedLimit: Int = ByteSource.unmappedLimit) throws(ValidationError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw Self.failure(path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.failure(path) }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw ValidationError(field: "file", "\(path) is a directory, not a file")
        }
        if (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0,
            let mapped = mmap(nil, Int(info.st_size), PROT_READ, MAP_PRIVATE, fd, 0),
            mapped != UnsafeMutableRawPointer(bitPattern: -1)
        {
            _ = madvise(mapped, Int(info.st_size), MADV_SEQUENTIAL)
            base = UnsafePointer(mapped.bindMemory(to: UInt8.self, capacity: Int(info.st_size)))
            count = Int(info.st_size)
            release = .unmap(mapped, count)
            return
        }
        // Not mappable (a pipe, an empty or special file): read it all, up to the limit.
        var capacity = 1 << 20
        var buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        var filled = 0
        while true {
            if filled >= unmappedLimit {
                buffer.deallocate()
                throw ValidationError(
                    field: "file", "\(path) is not a regular file, and is read into memory up to \(unmappedLimit >> 20) MiB; it holds more: save it to a file first")
            }
            if filled == capacity {
                let bigger = UnsafeMutableRawPointer.allocate(byteCount: capacity * 2, alignment: 16)
                bigger.copyMemory(from: buffer, byteCount: filled)
                buffer.deallocate()
                buffer = bigger
                capacity *= 2
            }
            let n = read(fd, buffer + filled, capacity - filled)
            if n < 0 {
                if errno == EINTR { continue }
                buffer.deallocate()
                throw Self.failure(path)
            }
            if n == 0 { break }
            filled += n
        }
        base = UnsafePointer(buffer.bindMemory(to: UInt8.self, capacity: capacity))
        count = filled
        release = .deallocate(buffer)
    }

    /// Gives back the mapped pages wholly inside `from..<to`, which the reader has passed: a
    /// file read once from start to end would otherwise stay resident (as the process's
    /// memory) until it is closed, 4.5 GB for ten million reports. Reading them again is
    /// still correct: the file's pages come back from the file. Returns where the pages
    /// given back end, the next call's `from`.
    func giveBack(from: Int, to offset: Int) -> Int {
        guard case .unmap = release else { return from }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (from + page - 1) / page * page, end = Swift.min(offset, count) / page * page
        guard end > start else { return from }
        _ = madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, MADV_DONTNEED)
        return end
    }

    deinit {
        switch release {
        case .unmap(let pointer, let length): munmap(pointer, length)
        case .deallocate(let pointer): pointer.deallocate()
        }
    }

    private static func failure(_ path: String) -> ValidationError {
        ValidationError(field: "file", "cannot read \(path): \(String(cString: strerror(errno)))")
    }
}
