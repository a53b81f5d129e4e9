import Autodial
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The far end of autodial's calls in tests: sipp (Debian's sip-tester) playing the
// advertiser's phone or the provider's trunk, and a socket that hears the RTP.

/// One sipp peer for one call, on a free port of loopback.
public final class SIPPeer: Sendable {
    public let port: Int
    private let process: Process
    private let exited = Once()

    /// sipp playing `scenario` of Tests/Fixtures/sip, with its keywords.
    public init(_ scenario: String, keys: [String: String] = [:]) async throws {
        guard let port = LoopbackSocket.freePort(Int32(SOCK_DGRAM.rawValue)) else { throw POSIXError(.EADDRINUSE) }
        self.port = port
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sipp")
        process.arguments = ["-sf", SchemaFixtures.url("sip").appendingPathComponent(scenario).path, "-i", "127.0.0.1", "-p", "\(port)", "-m", "1", "-timeout", "30s", "-nostdin"]
            + keys.flatMap { ["-key", $0.key, $0.value] }
        (process.standardOutput, process.standardError) = (FileHandle.nullDevice, FileHandle.nullDevice)
        let exited = exited
        process.terminationHandler = { exited.finish($0.terminationStatus) }
        try process.run()
        try await Task.sleep(for: .milliseconds(300))  // sipp binds its port
    }

    /// Kills a peer still waiting (for a dialer killed before it hung up: sipp's -timeout
    /// does not end a call that waits for a request).
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { stop() }

    /// sipp's exit status: 0 when the scenario ran to its end.
    public func status() async -> Int32 { await exited.value }

    public var address: String { "127.0.0.1:\(port)" }
}

/// A value one thread sets once and a task awaits.
final class Once: Sendable {
    private let state = Mutex<(value: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))
    func finish(_ value: Int32) {
        let waiter = state.withLock { s in
            s.value = value
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: value)
    }
    var value: Int32 {
        get async {
            await withCheckedContinuation { c in
                if let v = state.withLock({ s -> Int32? in
                    if s.value == nil { s.waiter = c }
                    return s.value
                }) { c.resume(returning: v) }
            }
        }
    }
}

/// The RTP the callee receives, on a socket of the test's own: PCMU payloads, decoded.
public final class RTPEar: Sendable {
    public let port: Int
    private let fd: Int32
    private let heard = Mutex<[Int16]>([])
    private let callOver = Atomic<Bool>(false)
    private let done = Once()

    public init() throws {
        guard let (fd, port) = LoopbackSocket.bound(Int32(SOCK_DGRAM.rawValue)) else { throw POSIXError(.EADDRINUSE) }
        var wait = timeval(tv_sec: 0, tv_usec: 200_000)  // how often the thread looks whether the call is over
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        (self.fd, self.port) = (fd, port)
        Thread.detachNewThread { [self] in
            var packet = [UInt8](repeating: 0, count: 2_048)
            // Until the test says the call is over and what arrived before has been read: a
            // quiet spell is no sign of the end (a loaded machine pauses the sender for
            // seconds). 300 s at most, for a test that never says so.
            let deadline = Date() + 300
            while Date() < deadline {
                let over = callOver.load(ordering: .acquiring)
                let n = packet.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { if over { break } else { continue } }
                // RTP: 12 bytes of header (no CSRC, no extension from baresip), then payload type 0 (PCMU).
                guard n > 12, packet[1] & 0x7F == 0 else { continue }
                let samples = packet[12..<n].map(Self.linear)
                heard.withLock { $0 += samples }
            }
            close(self.fd)
            done.finish(0)
        }
    }

    /// What arrived; to be asked once the call is over (its peer has seen the BYE, which
    /// the caller sends after the last packet: loopback has put them all in the socket's
    /// queue by then, and they are read before the ear stops).
    public func samples() async -> [Int16] {
        callOver.store(true, ordering: .releasing)
        _ = await done.value
        return heard.withLock { $0 }
    }

    /// G.711 μ-law to linear (ITU-T G.711), written from the standard's formula.
    public static func linear(_ byte: UInt8) -> Int16 {
        let u = ~byte
        let sign = u & 0x80, exponent = Int((u >> 4) & 0x07), mantissa = Int(u & 0x0F)
        let magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84
        return Int16(sign != 0 ? -magnitude : magnitude)
    }
}

extension RTPEar {
    /// The root mean square of samples, on the 16-bit scale.
    public static func rms(_ samples: [Int16]) -> Double {
        (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot()
    }
}
