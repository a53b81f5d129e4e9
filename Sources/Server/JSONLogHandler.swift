import Foundation
import Interchange
import Logging
import Synchronization

/// A swift-log handler that writes one JSON object per line to standard error, for log
/// collectors (`serve --log-format json`): `time`, `level`, `message`, the logger's
/// label and every metadata value as a member (numbers as numbers).
///
/// What reaches it is chosen by the code that logs: the access log names the route's
/// template, never the path with its values, and no token, password or key is ever
/// logged (`SecretLogTests` checks a served log).
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    let label: String
    /// One write at a time, so lines never interleave.
    private static let output = Mutex(FileHandle.standardError)

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var members: [(String, JSONValue)] = [
            ("time", .string(Self.time(Date()))), ("level", .string(event.level.rawValue)), ("message", .string(event.message.description)),
            ("logger", .string(label)),
        ]
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for key in merged.keys.sorted() { members.append((Self.name(key), Self.value(merged[key]!))) }
        let line = JSONValue.object(members).text + "\n"
        Self.output.withLock { $0.write(Data(line.utf8)) }
    }

    /// `hb.request.id` → `request_id`: Hummingbird's names without their prefix.
    static func name(_ key: String) -> String {
        (key.hasPrefix("hb.") ? String(key.dropFirst(3)) : key).replacingOccurrences(of: ".", with: "_")
    }

    static func value(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let item):
            if let n = item as? Int { .int(n) } else if let n = item as? Int64 { .int(Int(n)) } else if let x = item as? Double, x.isFinite { .number(x) } else { .string(item.description) }
        case .array(let items): .array(items.map { Self.value($0) })
        case .dictionary(let entries): .object(entries.keys.sorted().map { ($0, Self.value(entries[$0]!)) })
        }
    }

    static func time(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
