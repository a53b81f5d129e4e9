import ArgumentParser
import Autodial
import Foundation
import Logging
import ReportModel
import ReportService
import Server
import ServiceLifecycle

/// `serve`'s autodial options: with a trunk named, the process dials (each call claimed by
/// one replica only, so every replica may run it).
struct AutodialOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The SIP trunk of the city's telephony provider, host or host:port; with it, this process places autodial's calls (through Debian's baresip).", valueName: "host[:port]"))
    var autodialTrunk: String?

    @Option(help: ArgumentHelp("The trunk's user name (digest authentication, and the caller's SIP identity).", valueName: "name"))
    var autodialUser = "posterwatch"

    @Option(help: ArgumentHelp("A file holding the trunk's password (its first line); or set POSTERWATCH_SIP_PASSWORD. Never on the command line.", valueName: "path"))
    var autodialPasswordFile: String?

    @Option(help: ArgumentHelp("The caller name shown to the callee, if the provider passes it on.", valueName: "name"))
    var autodialCallerName: String?

    @Option(help: ArgumentHelp("The local address calls are sent from (SIP and RTP).", valueName: "address"))
    var autodialListen = "0.0.0.0"

    @Option(help: ArgumentHelp("Written before a number's digits in the call's address: + for E.164, or the provider's prefix.", valueName: "prefix"))
    var autodialNumberPrefix = "+"

    @Option(help: ArgumentHelp("The rules of autodial: interval, lawful hours, the most calls, the channels, the message (docs/autodial.md).", valueName: "path"))
    var autodialRules = "data/autodial.json"

    /// The trunk, checked; nil when autodial is off.
    func trunk() throws -> SIPTrunk? {
        guard let autodialTrunk else { return nil }
        let trunk = SIPTrunk(
            address: autodialTrunk, user: autodialUser, password: try StoreOptions.password(file: autodialPasswordFile, environment: "POSTERWATCH_SIP_PASSWORD"),
            callerName: autodialCallerName, listen: autodialListen, numberPrefix: autodialNumberPrefix)
        do { try trunk.check() } catch { throw ValidationError(error.issues.map { "--\($0.field) \($0.message)" }.joined(separator: "; ")) }
        return trunk
    }

    /// The dialer, its message made and checked and a baresip per channel; nil when off.
    func dialer(service: ReportService, metrics: ServerMetrics?, logger: Logger) throws -> DialerService? {
        guard let trunk = try trunk() else { return nil }
        guard let data = FileManager.default.contents(atPath: autodialRules) else {
            throw ValidationError("--autodial-rules: \(autodialRules) cannot be read")
        }
        let rules: AutodialRules
        do { rules = try AutodialRules(json: data) } catch { throw ValidationError("\(autodialRules): " + error.issues.map { "\($0.field) \($0.message)" }.joined(separator: "; ")) }
        BaresipChannel.removeStale(in: FileManager.default.temporaryDirectory)
        // A name nobody can guess, made here or refused: another user's directory of that name
        // would hold the trunk's password and say which modules baresip loads.
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("posterwatch-autodial-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let audio: MessageAudio
        do { audio = try MessageAudio.prepare(rules, in: directory) } catch { throw ValidationError("autodial's message: \(error)") }
        let channels = (0..<rules.channels).map { i in
            BaresipChannel(
                trunk: trunk, audio: audio, timing: .init(ring: rules.ringTimeout, message: rules.maxMessageLength),
                directory: directory.appendingPathComponent("channel-\(i)"))
        }
        metrics?.autodialStarted()
        let dialer = Dialer(
            service: service, planner: CallPlanner(rules: rules), channels: channels, logger: logger,
            onCall: { call in metrics?.autodialCall(outcome: call.outcome.rawValue) },
            onInterrupted: { lapsed in metrics?.autodialCall(outcome: CallOutcome.interrupted.rawValue, count: lapsed) })
        Console.error("autodial: \(rules.channels) channel(s) to \(trunk.address), message \(String(format: "%.1f", audio.duration)) s")
        return DialerService(dialer: dialer, channels: channels, directory: directory)
    }
}

/// The dialer as a service of `serve`'s group: it stops starting calls on shutdown, lets
/// the calls in progress end, then stops baresip and removes its files (the password's among them).
struct DialerService: Service {
    let dialer: Dialer
    let channels: [BaresipChannel]
    let directory: URL

    func run() async throws {
        await cancelWhenGracefulShutdown { await dialer.run() }
        for channel in channels { await channel.stop() }
        try? FileManager.default.removeItem(at: directory)
    }
}
