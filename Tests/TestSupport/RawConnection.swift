import Dispatch
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection to the server on loopback, written and read as bytes: what a client
/// that does not follow the rules sends. Its blocking reads run on a Dispatch thread, so
/// that they never hold one of the few threads the server's own tasks need.
public final class RawConnection: @unchecked Sendable {
    private let fd: Int32

    /// A connection to the server on `port`; `receiveBuffer`: the kernel's receive buffer
    /// for it, in bytes (a small one makes a client that reads slowly fall behind soon).
    public init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        // A bound on every read, so a test that waits for a close cannot hang.
        var wait = timeval(tv_sec: Int(patience.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public func send(_ text: String) {
        send(bytes: Array(text.utf8))
    }

    public func send(bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Waits until the server has read every byte sent on this connection (the receive queue
    /// of its end, in /proc/net/tcp, empty), so that a test acts on what the server has read
    /// rather than after a pause. Should the table not show the server's end within 10 s,
    /// this returns as a pause would.
    public func waitUntilRead(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let (mine, theirs) = (Self.port(of: fd, peer: false), Self.port(of: fd, peer: true))
        let unseenUntil = ContinuousClock.now + .seconds(10)
        try await eventually("the server to read what was sent", every: .milliseconds(10), sourceLocation: sourceLocation) {
            guard let queue = Self.receiveQueue(local: theirs, remote: mine) else { return ContinuousClock.now > unseenUntil }
            return queue == 0
        }
    }

    /// A file of /proc whole: its size says 0, and each read gives a page of it.
    private static func whole(_ path: String) -> String {
        let file = open(path, O_RDONLY)
        guard file >= 0 else { return "" }
        defer { close(file) }
        var bytes: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += buffer[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func port(of fd: Int32, peer: Bool) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// The bytes waiting to be read on the loopback socket from port `local` to `remote`
    /// (nil when there is none): the column after the colon of `tx_queue:rx_queue`.
    private static func receiveQueue(local: Int, remote: Int) -> Int? {
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            for line in whole(table).split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 4, let l = fields[1].split(separator: ":").last, let r = fields[2].split(separator: ":").last,
                      Int(l, radix: 16) == local, Int(r, radix: 16) == remote, let queue = fields[4].split(separator: ":").last
                else { continue }
                return Int(queue, radix: 16)
            }
        }
        return nil
    }

    /// Everything the server sends until it closes the connection (`closed`), or until
    /// nothing has come for a long while (``patience``).
    public func readToClose() async -> (text: String, closed: Bool) {
        await Self.offPool { self.blockingReadToClose() }
    }

    /// Reads until `marker` has arrived (or the connection ends, or ``patience`` has passed).
    public func read(until marker: String) async -> String {
        await Self.offPool { self.blockingRead(until: marker) }
    }

    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }

    private func blockingReadToClose() -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { received += buffer[..<n]; continue }
            return (String(decoding: received, as: UTF8.self), n == 0)
        }
    }

    private func blockingRead(until marker: String) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        // Bounded even while bytes keep coming (a stream's heartbeats): a marker that never
        // comes fails the test instead of holding it.
        let deadline = DispatchTime.now() + .seconds(Int(patience.components.seconds))
        while !String(decoding: received, as: UTF8.self).contains(marker), DispatchTime.now() < deadline {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received += buffer[..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
