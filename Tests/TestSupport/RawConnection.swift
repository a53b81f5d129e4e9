import Dispatch
import Foundation
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
        var wait = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public func send(_ text: String) {
        send(bytes: Array(text.utf8))
    }

    public func send(bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything the server sends until it closes the connection (`closed`), or until
    /// nothing has come for 30 s.
    public func readToClose() async -> (text: String, closed: Bool) {
        await Self.offPool { self.blockingReadToClose() }
    }

    /// Reads until `marker` has arrived (or the connection ends, or a minute has passed).
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
