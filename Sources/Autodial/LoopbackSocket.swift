import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sockets on 127.0.0.1: baresip's control connection, and the free ports tests and the
/// bench give their SIP and RTP peers.
public enum LoopbackSocket {
    /// A socket of `type` (SOCK_STREAM, SOCK_DGRAM) bound to a port the system chose, and
    /// that port; nil when none could be had.
    public static func bound(_ type: Int32) -> (fd: Int32, port: Int)? {
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            return nil
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A port of `type` free now (bound and let go: another may take it meanwhile, rarely).
    public static func freePort(_ type: Int32) -> Int? {
        guard let (fd, port) = bound(type) else { return nil }
        close(fd)
        return port
    }

    /// A TCP connection to `port`; nil when nothing accepts it.
    public static func connected(to port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}
