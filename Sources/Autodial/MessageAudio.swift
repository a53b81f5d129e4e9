import Foundation
import Geometry

/// The message the robot plays, as audio the trunk takes: 8 kHz mono 16-bit PCM in a WAV
/// file, not silent, not longer than the rules allow. Spoken from the rules' text by
/// Debian's `espeak-ng` and resampled by `sox` (well-kept programs for solved problems),
/// or the city's own recording; either way checked here before any call is placed.
public struct MessageAudio: Sendable, Hashable {
    /// The WAV file the dialer plays.
    public var path: String
    public var duration: TimeInterval
    /// The root mean square of its samples, on the 16-bit scale (silence is near 0).
    public var rms: Double

    /// What a sample rate, channel count or size must be.
    public static let sampleRate = 8_000
    /// Below this RMS a message is taken as silence (speech at a normal level is in the thousands).
    public static let silence = 50.0

    /// Makes the message into `directory` (the rules' recording, or their text spoken in
    /// each language in turn) and checks it.
    public static func prepare(_ rules: AutodialRules, in directory: URL) throws -> MessageAudio {
        let output = directory.appendingPathComponent("message.wav").path
        if let recording = rules.recording {
            return try check(path: recording, maxLength: rules.maxMessageLength)
        }
        var spoken: [String] = []
        for (index, message) in rules.messages.enumerated() {
            let part = directory.appendingPathComponent("spoken-\(index).wav").path
            try run("espeak-ng", ["-v", message.language, "-w", part, "--", message.text])
            spoken.append(part)
        }
        // sox joins the parts in order and makes them what the trunk takes.
        try run("sox", spoken + ["-r", "\(sampleRate)", "-c", "1", "-b", "16", "-e", "signed-integer", output])
        return try check(path: output, maxLength: rules.maxMessageLength)
    }

    /// Checks a WAV file: PCM, 8 kHz, mono, 16-bit, at least half a second, at most
    /// `maxLength`, not silent.
    public static func check(path: String, maxLength: TimeInterval) throws -> MessageAudio {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MessageRejected(reason: "the message \(path) cannot be read")
        }
        let pcm = try WAVFile(data)
        let problems = [
            pcm.format != 1 ? "it must be PCM (format 1), not format \(pcm.format)" : nil,
            pcm.sampleRate != sampleRate ? "it must be sampled at \(sampleRate) Hz, not \(pcm.sampleRate)" : nil,
            pcm.channels != 1 ? "it must be mono, not \(pcm.channels) channels" : nil,
            pcm.bitsPerSample != 16 ? "it must have 16-bit samples, not \(pcm.bitsPerSample)" : nil,
        ].compactMap { $0 }
        guard problems.isEmpty else { throw MessageRejected(reason: "the message \(path) is not what the trunk takes: " + problems.joined(separator: "; ")) }
        let samples = pcm.samples
        let duration = Double(samples.count) / Double(sampleRate)
        guard duration >= 0.5, duration <= maxLength else {
            throw MessageRejected(reason: "the message \(path) lasts \(duration.formatted(.number.precision(.fractionLength(1)))) s; it must last from 0.5 s to \(maxLength.formatted()) s (max_message_seconds)")
        }
        let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
        guard rms >= silence else { throw MessageRejected(reason: "the message \(path) is silent (RMS \(Int(rms)) of 32768)") }
        return MessageAudio(path: path, duration: duration, rms: rms)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.environment = SIPTrunk.helperEnvironment
        process.arguments = [tool] + arguments
        let errors = Pipe()
        (process.standardOutput, process.standardError) = (FileHandle.nullDevice, errors)
        do { try process.run() } catch { throw MessageRejected(reason: "\(tool) cannot be started: \(error)") }
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MessageRejected(reason: "\(tool) failed (\(process.terminationStatus)): \(String(decoding: said.prefix(300), as: UTF8.self)); install Debian's espeak-ng and sox")
        }
    }
}

/// A message the dialer will not send, and why.
public struct MessageRejected: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

/// The chunks of a RIFF WAVE file that say what its samples are, and the samples.
struct WAVFile {
    var format = 0, channels = 0, sampleRate = 0, bitsPerSample = 0
    var data = Data()

    init(_ bytes: Data) throws {
        let b = [UInt8](bytes)
        func u32(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24 }
        func u16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        guard b.count >= 12, b[0..<4].elementsEqual("RIFF".utf8), b[8..<12].elementsEqual("WAVE".utf8) else {
            throw MessageRejected(reason: "the message is not a WAV file (RIFF WAVE)")
        }
        var at = 12, sawFormat = false
        while at + 8 <= b.count {
            let (id, size) = (String(decoding: b[at..<at + 4], as: UTF8.self), u32(at + 4))
            let body = at + 8
            // espeak-ng streams its WAV with an unknown size (0x7fffffff): take what is there.
            let end = min(b.count, body + size)
            if id == "fmt ", end - body >= 16 {
                (format, channels, sampleRate, bitsPerSample) = (u16(body), u16(body + 2), u32(body + 4), u16(body + 14))
                sawFormat = true
            } else if id == "data" {
                data = bytes.subdata(in: body..<end)
            }
            at = body + size + (size & 1)
        }
        guard sawFormat else { throw MessageRejected(reason: "the WAV file has no fmt chunk") }
    }

    /// The samples as signed 16-bit little-endian values.
    var samples: [Int16] {
        data.withUnsafeBytes { raw in
            (0..<raw.count / 2).map { Int16(bitPattern: UInt16(raw[2 * $0]) | UInt16(raw[2 * $0 + 1]) << 8) }
        }
    }
}
