import Autodial
import Foundation
import ReportModel
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The dialer's channel over real SIP on loopback: baresip places the call, `sipp` plays
/// the advertiser's phone or the provider's trunk (Tests/Fixtures/sip), and a socket of the
/// test's own receives the RTP the callee would hear, decoded from G.711 μ-law here.
@Suite(.serialized) struct SIPTests {
    static let folder = SchemaFixtures.url("sip")

    /// The message of the default rules, made once.
    static let message: (audio: MessageAudio, directory: TemporaryDirectory) = {
        let directory = try! TemporaryDirectory()
        return (try! MessageAudio.prepare(.defaults, in: directory.url), directory)
    }()

    /// One sipp peer for one call, on a free port of loopback.
    final class Peer: Sendable {
        let port: Int
        private let process: Process
        private let exited = Mailbox()

        init(_ scenario: String, keys: [String: String] = [:]) throws {
            port = try Self.freeUDPPort()
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sipp")
            process.arguments = ["-sf", SIPTests.folder.appendingPathComponent(scenario).path, "-i", "127.0.0.1", "-p", "\(port)", "-m", "1", "-timeout", "30s", "-nostdin"]
                + keys.flatMap { ["-key", $0.key, $0.value] }
            (process.standardOutput, process.standardError) = (FileHandle.nullDevice, FileHandle.nullDevice)
            let exited = exited
            process.terminationHandler = { exited.finish($0.terminationStatus) }
            try process.run()
            Thread.sleep(forTimeInterval: 0.3)  // sipp binds its port
        }

        /// sipp's exit status: 0 when the scenario ran to its end.
        func status() async -> Int32 { await exited.value }

        var address: String { "127.0.0.1:\(port)" }

        static func freeUDPPort() throws -> Int {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 } }
            return Int(UInt16(bigEndian: address.sin_port))
        }
    }

    /// A value one thread sets once and a task awaits.
    final class Mailbox: Sendable {
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

    /// The RTP the callee receives: PCMU payloads, decoded.
    final class Ear: Sendable {
        let port: Int
        private let fd: Int32
        private let heard = Mutex<[Int16]>([])
        private let done = Mailbox()

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 } }
            var wait = timeval(tv_sec: 2, tv_usec: 0)  // quiet this long after the last packet: the call is over
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            (self.fd, port) = (fd, Int(UInt16(bigEndian: address.sin_port)))
            Thread.detachNewThread { [self] in
                var packet = [UInt8](repeating: 0, count: 2_048)
                var started = false
                // Up to 60 s for the first packet, then until 2 s of silence on the wire.
                let deadline = Date() + 60
                while Date() < deadline {
                    let n = packet.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
                    if n <= 0 { if started { break } else { continue } }
                    started = true
                    // RTP: 12 bytes of header (no CSRC, no extension from baresip), then payload type 0 (PCMU).
                    guard n > 12, packet[1] & 0x7F == 0 else { continue }
                    let samples = packet[12..<n].map(Self.linear)
                    heard.withLock { $0 += samples }
                }
                close(self.fd)
                done.finish(0)
            }
        }

        /// What arrived, once the line has gone quiet.
        func samples() async -> [Int16] {
            _ = await done.value
            return heard.withLock { $0 }
        }

        /// G.711 μ-law to linear (ITU-T G.711), written from the standard's formula.
        static func linear(_ byte: UInt8) -> Int16 {
            let u = ~byte
            let sign = u & 0x80, exponent = Int((u >> 4) & 0x07), mantissa = Int(u & 0x0F)
            let magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84
            return Int16(sign != 0 ? -magnitude : magnitude)
        }
    }

    static func channel(_ trunk: SIPTrunk, ring: TimeInterval = 10) throws -> (BaresipChannel, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        let channel = BaresipChannel(
            trunk: trunk, audio: message.audio, timing: .init(ring: ring, message: 60), directory: URL(fileURLWithPath: directory.path("baresip")))
        return (channel, directory)
    }

    static func trunk(_ peer: Peer, password: String? = nil) -> SIPTrunk {
        SIPTrunk(address: peer.address, user: "city", password: password, callerName: "Kyiv City", listen: "127.0.0.1")
    }

    @Test func theMessageIsSpokenAsTheTrunkTakesIt() throws {
        let audio = Self.message.audio
        #expect(audio.duration > 1 && audio.duration < 20 && audio.rms > MessageAudio.silence)
        // What sox says of it, independently.
        let soxi = Process()
        soxi.executableURL = URL(fileURLWithPath: "/usr/bin/soxi")
        soxi.arguments = ["-r", audio.path]
        let out = Pipe()
        soxi.standardOutput = out
        try soxi.run()
        soxi.waitUntilExit()
        #expect(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "8000")
    }

    @Test func aMessageTheTrunkWouldNotTakeIsRefused() throws {
        let directory = try TemporaryDirectory()
        let cases: [(arguments: [String], words: String)] = [
            (["-n", "-r", "8000", "-c", "1", "-b", "16", "-e", "signed-integer"], "silent"),
            (["-n", "-r", "22050", "-c", "1", "-b", "16", "-e", "signed-integer"], "8000 Hz"),
            (["-n", "-r", "8000", "-c", "2", "-b", "16", "-e", "signed-integer"], "mono"),
        ]
        for (arguments, words) in cases {
            let path = directory.path("\(words.hashValue).wav")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
            let tone = words == "silent" ? ["trim", "0", "3"] : ["synth", "3", "sine", "440"]
            p.arguments = arguments + [path] + tone
            try p.run()
            p.waitUntilExit()
            #expect(throws: MessageRejected.self) { try MessageAudio.check(path: path, maxLength: 60) }
            do { _ = try MessageAudio.check(path: path, maxLength: 60) } catch { #expect("\(error)".contains(words), "\(error)") }
        }
        #expect(throws: MessageRejected.self) { try MessageAudio.check(path: Self.message.audio.path, maxLength: 1) }
        #expect(throws: MessageRejected.self) { try MessageAudio.check(path: directory.path("absent.wav"), maxLength: 60) }
    }

    @Test func anAnsweredCallHearsTheMessageAndTheDialerHangsUp() async throws {
        let ear = try Ear()
        let peer = try Peer("answer.xml", keys: ["rtp_port": "\(ear.port)"])
        let (channel, keep) = try Self.channel(Self.trunk(peer))
        let result = await channel.call("380671234567")
        await channel.stop()
        #expect(result.outcome == .answered && result.sipCode == 200, "\(result)")
        let duration = Self.message.audio.duration
        #expect(abs(result.secondsPlayed - duration) < 1, "played \(result.secondsPlayed) s of \(duration) s")
        #expect(await peer.status() == 0, "sipp saw the call to its end: the dialer's BYE")
        let samples = await ear.samples()
        let heard = Double(samples.count) / 8_000
        #expect(abs(heard - duration) < 1, "heard \(heard) s of \(duration) s")
        let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot()
        #expect(rms > MessageAudio.silence, "not silence: RMS \(rms)")
        _ = keep
    }

    @Test func aBusyCalleeIsRecordedAsBusy() async throws {
        let peer = try Peer("busy.xml")
        let (channel, keep) = try Self.channel(Self.trunk(peer))
        let result = await channel.call("380671234567")
        await channel.stop()
        #expect(result.outcome == .busy && result.sipCode == 486 && result.secondsPlayed == 0, "\(result)")
        #expect(await peer.status() == 0)
        _ = keep
    }

    @Test func aCallNobodyAnswersIsCancelled() async throws {
        let peer = try Peer("no-answer.xml")
        let (channel, keep) = try Self.channel(Self.trunk(peer), ring: 2)
        let result = await channel.call("380671234567")
        await channel.stop()
        #expect(result.outcome == .unanswered && result.secondsPlayed == 0, "\(result)")
        #expect(await peer.status() == 0, "sipp received the CANCEL")
        _ = keep
    }

    @Test func theTrunksDigestChallengeIsAnswered() async throws {
        let password = "s3cret-Trunk"
        let good = try Peer("digest.xml", keys: ["auth_user": "city", "auth_password": password])
        let (channel, keep) = try Self.channel(Self.trunk(good, password: password))
        let result = await channel.call("380671234567")
        await channel.stop()
        #expect(result.sipCode == 486, "authenticated, then busy: \(result)")
        #expect(await good.status() == 0)

        let wrong = try Peer("digest.xml", keys: ["auth_user": "city", "auth_password": "another"])
        let (refused, keep2) = try Self.channel(Self.trunk(wrong, password: password))
        let failed = await refused.call("380671234567")
        await refused.stop()
        #expect(failed.outcome == .failed && failed.sipCode == 403, "\(failed)")
        #expect(!"\(failed)".contains(password))
        _ = (keep, keep2)
    }
}
