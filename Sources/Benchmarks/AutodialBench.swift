import Autodial
import Foundation
import Geometry
import ReportModel
import ReportService
import SQLiteStore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Autodial's backlog: 1,000 numbers due at once, worked by the dialer through baresip
/// (one process a channel) against sipp on loopback, which answers every call; the message
/// is a 1 s tone. The trunk's channels should be busy all along: a call is "late" by the
/// time from the moment it could have gone out (the backlog's start, or a channel's last
/// call ending) to its claim.
struct AutodialBench {
    let numbers = 1_000
    let channels = 10

    struct Result {
        var seconds: Double
        var calls: [CallAttempt]
        /// Each call's lateness, in seconds, in the order placed.
        var lateness: [Double]
        var mostAtOnce: Int
        var messageSeconds: Double
    }

    func run(work: String) async throws -> Result {
        let directory = URL(fileURLWithPath: work).appendingPathComponent("autodial")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = try SQLiteReports(path: directory.appendingPathComponent("autodial.sqlite").path)
        let service = try await ReportService(storage: store)
        let boss = Caller(accountID: nil, role: .supervisor)
        let phones = (0..<numbers).map { "38067\(String(format: "%07d", 2_000_000 + $0))" }
        let drafts = Bench.drafts(numbers, seed: 71, reference: store.reference).enumerated().map { i, d in
            var d = d
            (d.phones, d.status) = ([phones[i]], "new")
            return d
        }
        try service.insert(drafts)
        let start = Date()
        for phone in phones {
            _ = try await service.verify(phone, outcome: .violator, note: nil, by: boss, now: start)
            _ = try await service.startAutodial(phone, note: nil, by: boss, now: start)
        }

        // A tone of 1 s as the city's recording; every hour lawful; one call per number.
        let tone = directory.appendingPathComponent("tone.wav").path
        try Self.run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", "-b", "16", "-e", "signed-integer", tone, "synth", "1", "sine", "440", "vol", "0.5"])
        var rules = AutodialRules.defaults
        rules.hours = Dictionary(uniqueKeysWithValues: (1...7).map { ($0, DailyHours(from: 0, to: 24 * 60)) })
        (rules.channels, rules.interval, rules.recording, rules.ringTimeout) = (channels, 3_600, tone, 10)
        let audio = try MessageAudio.prepare(rules, in: directory)

        // The far end: sipp answering every call, its audio sent to a socket nobody reads.
        guard let (sink, rtpPort) = LoopbackSocket.bound(Int32(SOCK_DGRAM.rawValue)) else { throw POSIXError(.EADDRINUSE) }
        defer { close(sink) }
        let sipPort = 23_000 + Int.random(in: 0..<2_000)
        let sipp = Process()
        sipp.executableURL = URL(fileURLWithPath: "/usr/bin/sipp")
        sipp.arguments = [
            "-sf", "Tests/Fixtures/sip/answer.xml", "-i", "127.0.0.1", "-p", "\(sipPort)", "-m", "\(numbers)", "-nostdin", "-key", "rtp_port", "\(rtpPort)",
        ]
        (sipp.standardOutput, sipp.standardError) = (FileHandle.nullDevice, FileHandle.nullDevice)
        try sipp.run()
        defer { if sipp.isRunning { sipp.terminate() } }
        try await Task.sleep(for: .milliseconds(300))

        let trunk = SIPTrunk(address: "127.0.0.1:\(sipPort)", user: "bench", password: nil, listen: "127.0.0.1")
        let lines = (0..<channels).map { i in
            BaresipChannel(trunk: trunk, audio: audio, timing: .init(ring: rules.ringTimeout, message: rules.maxMessageLength), directory: directory.appendingPathComponent("channel-\(i)"))
        }
        for line in lines { try await line.start() }
        let finished = Mutex(0)
        let dialer = Dialer(service: service, planner: CallPlanner(rules: rules), channels: lines, onCall: { _ in finished.withLock { $0 += 1 } })
        let began = Date()
        let dialing = Task { await dialer.run() }
        while finished.withLock({ $0 }) < numbers, Date().timeIntervalSince(began) < 900 {
            try await Task.sleep(for: .milliseconds(200))
        }
        let seconds = Date().timeIntervalSince(began)
        dialing.cancel()
        await dialing.value
        for line in lines { await line.stop() }

        var calls: [CallAttempt] = []
        for phone in phones { calls += try await service.calls(of: phone, before: nil, limit: 10, for: boss) }
        calls.sort { $0.placedAt < $1.placedAt }
        return Result(seconds: seconds, calls: calls, lateness: Self.lateness(calls, channels: channels, from: began), mostAtOnce: Self.mostAtOnce(calls), messageSeconds: audio.duration)
    }

    /// Each call's wait past the moment a channel was free for it: channels free at
    /// `from`, each taken by the next call placed and freed when that call ended.
    static func lateness(_ calls: [CallAttempt], channels: Int, from: Date) -> [Double] {
        var free = Array(repeating: from, count: channels)
        return calls.map { call in
            let i = free.indices.min { free[$0] < free[$1] }!
            let late = call.placedAt.timeIntervalSince(max(from, free[i]))
            free[i] = call.endedAt ?? call.placedAt
            return max(0, late)
        }
    }

    /// The most calls in progress at one instant.
    static func mostAtOnce(_ calls: [CallAttempt]) -> Int {
        let events = calls.flatMap { [($0.placedAt, 1), ($0.endedAt ?? $0.placedAt, -1)] }.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        var (now, most) = (0, 0)
        for (_, step) in events {
            now += step
            most = max(most, now)
        }
        return most
    }

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
    }
}

extension Bench {
    func measureAutodial(_ report: inout Report) async throws {
        let bench = AutodialBench()
        let result = try await bench.run(work: work)
        let answered = result.calls.filter { $0.outcome == .answered }.count
        let late = result.lateness.sorted()
        let p99 = late.isEmpty ? 0 : late[min(late.count - 1, Int(Double(late.count) * 0.99))]
        let worst = late.last ?? 0
        let busy = result.calls.reduce(0.0) { $0 + (($1.endedAt ?? $1.placedAt).timeIntervalSince($1.placedAt)) }
        report.section(
            "Autodial: a backlog of \(fmt(bench.numbers)) numbers due at once, \(bench.channels) channels (a baresip each), sipp answering on loopback, a \(f1(result.messageSeconds)) s message",
            header: ["what", "measured"])
        report.row(["calls placed / answered", "\(fmt(result.calls.count)) / \(fmt(answered))"])
        report.row(["backlog worked in", "\(f1(result.seconds)) s (\(f1(Double(result.calls.count) / result.seconds)) calls/s)"])
        report.row(["most calls at once (never above the channels)", "\(result.mostAtOnce)"])
        report.row(["channels busy (call time ÷ channels × time)", "\(Int((busy / (Double(bench.channels) * result.seconds) * 100).rounded())) %"])
        report.row(["a call's wait for a free channel past the moment one was free: p50 / p99 / max", "\(f3(late.isEmpty ? 0 : late[late.count / 2])) / \(f3(p99)) / \(f3(worst)) s"])
        report.goal(
            "autodial backlog of 1,000 at the channel limit: every call answered, never above the channels, no call late by more than 1 s",
            "\(answered) answered, \(result.mostAtOnce) at once, max \(f3(worst)) s late",
            answered == bench.numbers && result.mostAtOnce <= bench.channels && worst <= 1)
    }
}
