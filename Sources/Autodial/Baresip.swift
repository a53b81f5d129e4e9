import Foundation
import ReportModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One call at a time through one baresip process, driven over its `ctrl_tcp` interface
/// (JSON in netstrings): the trunk's channels are as many of these. baresip does SIP
/// (digest authentication included), RTP and G.711, and plays the message from `aufile`,
/// ending the call (BYE) when the file ends.
public actor BaresipChannel: CallChannel {
    public struct Timing: Sendable {
        public var ring: TimeInterval
        public var message: TimeInterval
        public init(ring: TimeInterval, message: TimeInterval) { (self.ring, self.message) = (ring, message) }
    }

    private let trunk: SIPTrunk
    private let audio: MessageAudio
    private let timing: Timing
    private let directory: URL
    private var process: Process?
    private var control: ControlConnection?

    /// A channel whose baresip keeps its files in `directory` (created, mode 0700).
    public init(trunk: SIPTrunk, audio: MessageAudio, timing: Timing, directory: URL) {
        (self.trunk, self.audio, self.timing, self.directory) = (trunk, audio, timing, directory)
    }

    /// Starts baresip, if it is not running, and connects to its control port.
    public func start() async throws {
        if let process, process.isRunning, control != nil { return }
        stop()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard let port = LoopbackSocket.freePort(Int32(SOCK_STREAM.rawValue)) else { throw CallChannelFailed(reason: "no free port for baresip's control interface") }
        let config = """
            poll_method\t\tepoll
            sip_listen\t\t\(trunk.listen):0
            audio_player\t\taufile,/dev/null
            audio_source\t\taufile,\(audio.path)
            audio_alert\t\tnone
            module_path\t\t/usr/lib/baresip/modules
            module\t\t\tg711.so
            module\t\t\taufile.so
            module_app\t\taccount.so
            module_app\t\tmenu.so
            module_app\t\tctrl_tcp.so
            ctrl_tcp_listen\t\t127.0.0.1:\(port)

            """
        try write(config, to: "config")
        try write(trunk.accountLine + "\n", to: "accounts")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/baresip")
        process.environment = SIPTrunk.helperEnvironment
        process.arguments = ["-f", directory.path]
        // Its console may print the account; nothing of it reaches our logs.
        (process.standardInput, process.standardOutput, process.standardError) = (FileHandle.nullDevice, FileHandle.nullDevice, FileHandle.nullDevice)
        do { try process.run() } catch { throw CallChannelFailed(reason: "baresip cannot be started: \(error); install Debian's baresip-core") }
        self.process = process
        try? write("\(process.processIdentifier)\n", to: Self.pidFile)
        let deadline = Date() + 10
        while control == nil {
            if let connection = try? ControlConnection(port: port) {
                control = connection
            } else {
                guard process.isRunning, Date() < deadline else {
                    stop()
                    throw CallChannelFailed(reason: "baresip did not open its control port")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    private func write(_ text: String, to name: String) throws {
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CallChannelFailed(reason: "baresip's \(name) cannot be written in \(directory.path)")
        }
    }

    static let pidFile = "baresip.pid"

    /// Stops the baresips a process that died without stopping them left running (`kill
    /// -9` leaves its children), and removes their files: those under `parent` named
    /// `posterwatch-autodial-<pid>` whose pid no longer runs.
    public static func removeStale(in parent: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where name.hasPrefix("posterwatch-autodial-") {
            let owner = name.dropFirst("posterwatch-autodial-".count).prefix { $0 != "-" }
            guard let owner = Int32(owner), kill(owner, 0) != 0, errno == ESRCH else { continue }
            let directory = parent.appendingPathComponent(name)
            for channel in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
                let file = directory.appendingPathComponent(channel).appendingPathComponent(pidFile).path
                if let text = try? String(contentsOfFile: file, encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
                   (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) == "/usr/bin/baresip" {
                    kill(pid, SIGKILL)  // its SIGTERM is blocked (see stop())
                }
            }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Stops baresip (its files stay for the next start, which rewrites them): asked to
    /// quit, then killed if it has not within a second. (A child of Foundation's `Process`
    /// here starts with SIGTERM blocked, so `terminate()` alone would leave it running.)
    public func stop() {
        if let control {
            try? control.send(["command": "quit", "token": "quit"])
            control.close()
        }
        control = nil
        if let process {
            // It is given a second to quit, the wait on a thread of its own, never on Swift's pool.
            Thread.detachNewThread {
                let deadline = Date() + 1
                while process.isRunning, Date() < deadline { usleep(10_000) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            }
        }
        process = nil
    }

    public func call(_ number: String) async -> CallResult {
        do {
            try await start()
            return try await place(number)
        } catch {
            stop()  // a fresh baresip for the next call
            return CallResult(outcome: .failed, reason: "\(error)", endedAt: Date())
        }
    }

    private func place(_ number: String) async throws -> CallResult {
        guard let control else { throw CallChannelFailed(reason: "baresip is not connected") }
        control.events.drain()
        try control.send(["command": "dial", "params": trunk.requestURI(number), "token": "dial"])
        var callID: String?
        var established: Date?
        var hungUp = false
        // Ringing until the ring time; then the message until its length and a margin.
        var deadline = Date() + timing.ring
        while true {
            // A call task cancelled (the server stopping) hangs up at once, then waits for the end.
            guard let event = await control.events.next(until: deadline, cancellable: !hungUp) else {
                guard !hungUp else { throw CallChannelFailed(reason: "baresip did not end the call") }
                try control.send(["command": "hangup", "token": "hangup"])
                hungUp = true
                deadline = Date() + 5
                continue
            }
            if let response = event["response"] as? Bool, response, event["token"] as? String == "dial", event["ok"] as? Bool == false {
                return CallResult(outcome: .failed, reason: "baresip refused to dial: \(event["data"] as? String ?? "")", endedAt: Date())
            }
            // Ours only: baresip listens for SIP, and an incoming INVITE (a scanner's) makes events too.
            guard event["class"] as? String == "call", event["direction"] as? String == "outgoing", let type = event["type"] as? String else { continue }
            let id = event["id"] as? String
            if callID == nil { callID = id } else if id != callID { continue }
            switch type {
            case "CALL_ESTABLISHED":
                established = Date()
                if !hungUp { deadline = Date() + min(audio.duration, timing.message) + 3 }
            case "CALL_CLOSED":
                let result = Self.result(closed: event["param"] as? String ?? "", established: established, hungUp: hungUp, audio: audio, ring: timing.ring)
                return Task.isCancelled ? Self.stopped(result) : result
            default:
                continue
            }
        }
    }

    /// A call the server hung up as it stopped: answered if it was (the message played as
    /// far as it did), else interrupted (it may have rung), which counts as placed.
    static func stopped(_ result: CallResult) -> CallResult {
        var stopped = result
        if result.outcome != .answered { stopped.outcome = .interrupted }
        stopped.reason = "hung up: the server is stopping"
        return stopped
    }

    /// What a call's end means: answered (the message played as long as the call lasted),
    /// or the final code's outcome; a call we cancelled after ringing is unanswered.
    static func result(closed reason: String, established: Date?, hungUp: Bool, audio: MessageAudio, ring: TimeInterval) -> CallResult {
        let now = Date()
        if let established {
            let played = min(now.timeIntervalSince(established), audio.duration)
            return CallResult(outcome: .answered, sipCode: 200, secondsPlayed: (played * 10).rounded() / 10, reason: reason.isEmpty ? nil : reason, endedAt: now)
        }
        let code = Int(reason.prefix(3)).flatMap { (100...699).contains($0) ? $0 : nil }
        if hungUp {
            return CallResult(outcome: .unanswered, sipCode: code ?? 487, reason: "no answer in \(Int(ring)) s; cancelled", endedAt: now)
        }
        let outcome: CallOutcome = switch code {
        case 486, 600: .busy
        case 408, 480, 487: .unanswered
        default: .failed
        }
        return CallResult(outcome: outcome, sipCode: code, reason: reason.isEmpty ? nil : String(reason.prefix(200)), endedAt: now)
    }
}

/// A channel's failure to place a call (it never holds a secret).
public struct CallChannelFailed: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// The TCP connection to baresip's `ctrl_tcp`: netstrings of JSON each way. A thread of its
/// own reads (a blocking read, never on Swift's cooperative threads) into ``events``.
final class ControlConnection: Sendable {
    private let fd: Int32
    let events = Mailbox<Event>()

    init(port: Int) throws {
        guard let fd = LoopbackSocket.connected(to: port) else { throw CallChannelFailed(reason: "baresip's control port \(port) does not answer") }
        self.fd = fd
        let events = events
        Thread.detachNewThread { Self.read(fd, into: events) }
    }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    deinit { Glibc.close(fd) }

    func send(_ command: [String: String]) throws {
        let json = try JSONSerialization.data(withJSONObject: command, options: [.sortedKeys])
        let frame = Array("\(json.count):".utf8) + Array(json) + Array(",".utf8)
        let sent = frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == frame.count else { throw CallChannelFailed(reason: "baresip's control connection is closed") }
    }

    /// Reads netstrings until the connection ends; a frame longer than 64 KiB ends it too.
    private static func read(_ fd: Int32, into events: Mailbox<Event>) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            buffer += chunk[0..<n]
            while let colon = buffer.firstIndex(of: UInt8(ascii: ":")), let length = Int(String(decoding: buffer[..<colon], as: UTF8.self)) {
                guard (0..<65_536).contains(length) else { events.close(); return }
                let end = colon + 1 + length
                guard buffer.count > end else { break }
                guard buffer[end] == UInt8(ascii: ",") else { events.close(); return }
                if let object = try? JSONSerialization.jsonObject(with: Data(buffer[(colon + 1)..<end])) as? [String: Any] {
                    events.put(Event(object))
                }
                buffer.removeFirst(end + 1)
            }
            if buffer.count > 70_000 { break }
        }
        events.close()
    }
}

/// One JSON object baresip sent, its values kept as JSON gives them.
struct Event: @unchecked Sendable {
    private let object: [String: Any]
    init(_ object: [String: Any]) { self.object = object }
    subscript(key: String) -> Any? { object[key] }
}

