import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sockets on 127.0.0.1: baresip's control connection, and the free ports tests and the
/// bench give their SIP and RTP peers.
public enum LoopbackSocket {
    /// A socket of `type` (SOCK_STREAM, SOCK_DGRAM) bound to `port`, or when 0 to a port the
    /// system chose, and that port; nil when none could be had.
    public static func bound(_ type: Int32, port: Int = 0) -> (fd: Int32, port: Int)? {
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
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

    /// A port of `type` free now, bound and let go, for another process to listen on.
    /// Chosen below the system's ephemeral range: the ports it gives connections and binds
    /// to port 0 come from that range, so no connection made meanwhile takes this one (one
    /// had taken a test receiver's port before it listened). Only another explicit bind
    /// can, rarely; the system's choice when nothing below the range is free.
    public static func freePort(_ type: Int32) -> Int? {
        let below = 10_000..<max(10_001, ephemeralRange.lowerBound)
        for _ in 0..<100 {
            if let (fd, port) = bound(type, port: Int.random(in: below)) {
                close(fd)
                return port
            }
        }
        guard let (fd, port) = bound(type) else { return nil }
        close(fd)
        return port
    }

    /// The ports the system gives out by itself (`ip_local_port_range`; Linux's default
    /// when it cannot be read).
    static let ephemeralRange: ClosedRange<Int> = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1] else { return 32_768...60_999 }
        return bounds[0]...bounds[1]
    }()

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
