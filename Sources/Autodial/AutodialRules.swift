import Foundation
import Geometry

/// The city's rules for autodial, read from `data/autodial.json` so that a city changes
/// them without a build. The defaults follow Kyiv City Council's decision of 25 December
/// 2008 No. 114.1.7.051/1051: a call every few minutes, in the day, until the poster is gone.
public struct AutodialRules: Sendable {
    /// The city's time zone, whose daylight saving the lawful hours follow.
    public var timeZone: TimeZone
    /// The least time between two calls to one number.
    public var interval: TimeInterval
    /// The lawful hours of each weekday (1 Sunday … 7 Saturday, as `Calendar` numbers
    /// them); a day without any has no calls.
    public var hours: [Int: DailyHours]
    public var maxCallsPerDay: Int
    /// The most calls at once: the trunk's channels.
    public var channels: Int
    /// A campaign ends by itself after this many days.
    public var maxCampaignDays: Int
    /// How long a call may ring before the dialer cancels it.
    public var ringTimeout: TimeInterval
    /// The longest message the dialer sends.
    public var maxMessageLength: TimeInterval
    /// The message's text per language (BCP 47 code), in the order spoken; unused when a
    /// recording is given.
    public var messages: [(language: String, text: String)]
    /// A recording the city supplies (a WAV file, 8 kHz mono 16-bit), used instead of speech.
    public var recording: String?

    public init(
        timeZone: TimeZone, interval: TimeInterval, hours: [Int: DailyHours], maxCallsPerDay: Int, channels: Int, maxCampaignDays: Int,
        ringTimeout: TimeInterval, maxMessageLength: TimeInterval, messages: [(language: String, text: String)], recording: String? = nil
    ) {
        self.timeZone = timeZone
        self.interval = interval
        self.hours = hours
        self.maxCallsPerDay = maxCallsPerDay
        self.channels = channels
        self.maxCampaignDays = maxCampaignDays
        self.ringTimeout = ringTimeout
        self.maxMessageLength = maxMessageLength
        self.messages = messages
        self.recording = recording
    }

    /// The decision's defaults: every 5 minutes, 09:00–20:00 Kyiv time every day.
    public static let defaults = AutodialRules(
        timeZone: TimeZone(identifier: "Europe/Kyiv")!, interval: 300, hours: Dictionary(uniqueKeysWithValues: (1...7).map { ($0, DailyHours(from: 9 * 60, to: 20 * 60)) }),
        maxCallsPerDay: 100, channels: 4, maxCampaignDays: 30, ringTimeout: 30, maxMessageLength: 60,
        messages: [("uk", "Увага! Реклама з вашим номером телефону розміщена незаконно. Негайно демонтуйте її.")])
}

/// The lawful hours of one day, in minutes after the city's midnight; `to` is excluded
/// (a call may start at 09:00 and not at 20:00).
public struct DailyHours: Sendable, Hashable {
    public var from: Int
    public var to: Int

    public init(from: Int, to: Int) {
        self.from = from
        self.to = to
    }
}

// MARK: The file

extension AutodialRules {
    /// The rules file as written: every field optional but `time_zone`'s companions, each
    /// missing one the default.
    struct File: Decodable {
        var timeZone: String?
        var intervalMinutes: Double?
        var hours: [String: [String]?]?
        var maxCallsPerNumberPerDay: Int?
        var maxConcurrentCalls: Int?
        var maxCampaignDays: Int?
        var ringSeconds: Double?
        var maxMessageSeconds: Double?
        var message: [String: String]?
        var messageOrder: [String]?
        var recording: String?
    }

    static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    /// Reads the rules file, naming every field that breaks its rule.
    public init(json data: Data) throws(ValidationErrors) {
        let file: File
        do {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            file = try decoder.decode(File.self, from: data)
        } catch {
            throw ValidationErrors([ValidationError(field: "autodial", "must be a JSON object of the autodial rules: \(error)")])
        }
        var issues: [ValidationError] = []
        var rules = Self.defaults
        if let name = file.timeZone {
            if let zone = TimeZone(identifier: name) { rules.timeZone = zone } else {
                issues.append(ValidationError(field: "time_zone", "must be an IANA time zone such as Europe/Kyiv, got \"\(name.prefix(60))\""))
            }
        }
        Self.check(file.intervalMinutes, "interval_minutes", 0.1...1_440, into: &issues).map { rules.interval = $0 * 60 }
        Self.check(file.maxCallsPerNumberPerDay.map(Double.init), "max_calls_per_number_per_day", 1...10_000, into: &issues).map { rules.maxCallsPerDay = Int($0) }
        Self.check(file.maxConcurrentCalls.map(Double.init), "max_concurrent_calls", 1...1_000, into: &issues).map { rules.channels = Int($0) }
        Self.check(file.maxCampaignDays.map(Double.init), "max_campaign_days", 1...3_650, into: &issues).map { rules.maxCampaignDays = Int($0) }
        Self.check(file.ringSeconds, "ring_seconds", 1...300, into: &issues).map { rules.ringTimeout = $0 }
        Self.check(file.maxMessageSeconds, "max_message_seconds", 1...600, into: &issues).map { rules.maxMessageLength = $0 }
        if let hours = file.hours { rules.hours = Self.parse(hours: hours, into: &issues) }
        if let message = file.message {
            rules.messages = Self.parse(message: message, order: file.messageOrder, into: &issues)
        }
        rules.recording = file.recording
        // A number is never called again while its last call may still ring or play.
        if rules.interval < rules.ringTimeout + rules.maxMessageLength, issues.isEmpty {
            issues.append(ValidationError(
                field: "interval_minutes",
                "must be at least ring_seconds + max_message_seconds (\((rules.ringTimeout + rules.maxMessageLength).formatted()) s), so that a number is not called while its last call may last"))
        }
        if rules.recording == nil, rules.messages.isEmpty {
            issues.append(ValidationError(field: "message", "must give the message's text in at least one language, or a recording"))
        }
        guard issues.isEmpty else { throw ValidationErrors(issues) }
        self = rules
    }

    private static func check(_ value: Double?, _ field: String, _ range: ClosedRange<Double>, into issues: inout [ValidationError]) -> Double? {
        guard let value else { return nil }
        guard range.contains(value) else {
            issues.append(ValidationError(field: field, "must be from \(range.lowerBound.formatted()) to \(range.upperBound.formatted()), got \(value.formatted())"))
            return nil
        }
        return value
    }

    /// `every_day` first, then each weekday named: `["09:00", "20:00"]`, or null for none.
    private static func parse(hours: [String: [String]?], into issues: inout [ValidationError]) -> [Int: DailyHours] {
        var result: [Int: DailyHours] = [:]
        for key in hours.keys where key != "every_day" && !weekdays.contains(key) {
            issues.append(ValidationError(field: "hours.\(key.prefix(20))", "must be every_day or a weekday (\(weekdays.joined(separator: ", ")))"))
        }
        func window(_ key: String) -> DailyHours?? {
            guard let entry = hours[key] else { return .none }
            guard let pair = entry else { return .some(nil) }
            let minutes = pair.map(minutes(of:))
            guard minutes.count == 2, let from = minutes[0], let to = minutes[1], from < to else {
                issues.append(ValidationError(field: "hours.\(key)", "must be [\"HH:MM\", \"HH:MM\"] with the first before the second (24:00 may end a day), or null for no calls"))
                return .some(nil)
            }
            return .some(DailyHours(from: from, to: to))
        }
        let everyDay = window("every_day")
        for (index, name) in weekdays.enumerated() {
            if let own = window(name) { result[index + 1] = own } else if let all = everyDay { result[index + 1] = all }
        }
        return result.compactMapValues { $0 }
    }

    private static func minutes(of text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 }), let h = Int(parts[0]), let m = Int(parts[1]),
              (0...24).contains(h), (0...59).contains(m), h < 24 || m == 0 else { return nil }
        return h * 60 + m
    }

    static let maxMessageCharacters = 1_000

    private static func parse(message: [String: String], order: [String]?, into issues: inout [ValidationError]) -> [(language: String, text: String)] {
        let languages = order ?? message.keys.sorted { ($0 == "uk" ? 0 : 1, $0) < ($1 == "uk" ? 0 : 1, $1) }
        var result: [(language: String, text: String)] = []
        for language in languages {
            guard let text = message[language] else {
                issues.append(ValidationError(field: "message_order", "names \(language.prefix(20)), which message does not give"))
                continue
            }
            guard language.range(of: #"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$"#, options: .regularExpression) != nil else {
                issues.append(ValidationError(field: "message.\(language.prefix(20))", "must be keyed by a language code such as uk or en"))
                continue
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, trimmed.count <= maxMessageCharacters else {
                issues.append(ValidationError(field: "message.\(language)", "must be 1 to \(maxMessageCharacters) characters"))
                continue
            }
            result.append((language, trimmed))
        }
        return result
    }
}
