import Foundation
import ReportModel

/// When each number may be called, by the rules alone: no I/O and no clock of its own, so
/// that tests drive it across days, daylight-saving changes and backlogs without waiting.
///
/// The store has the last word (``CallClaim``): the planner proposes, the claim's
/// transaction checks the interval, the day's most and the channels again against what
/// every replica wrote.
public struct CallPlanner: Sendable {
    public let rules: AutodialRules
    private let calendar: Calendar

    public init(rules: AutodialRules) {
        self.rules = rules
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = rules.timeZone
        self.calendar = calendar
    }

    /// The start of the city's day holding `instant`.
    public func dayStart(_ instant: Date) -> Date { calendar.startOfDay(for: instant) }

    /// The lawful window of the city's day that starts at `day`, as instants (daylight
    /// saving moves them in UTC, never on the city's clock).
    private func window(ofDayStarting day: Date) -> Range<Date>? {
        let weekday = calendar.component(.weekday, from: day)
        guard let hours = rules.hours[weekday] else { return nil }
        func instant(_ minutes: Int) -> Date? {
            var parts = calendar.dateComponents([.year, .month, .day], from: day)
            if minutes == 24 * 60 { return calendar.date(byAdding: .day, value: 1, to: day) }
            (parts.hour, parts.minute) = (minutes / 60, minutes % 60)
            return calendar.date(from: parts)
        }
        guard let from = instant(hours.from), let to = instant(hours.to), from < to else { return nil }
        return from..<to
    }

    /// Whether a call may start at `instant`.
    public func isLawful(_ instant: Date) -> Bool {
        window(ofDayStarting: dayStart(instant))?.contains(instant) ?? false
    }

    /// The first instant at or after `instant` when a call may start; nil when no day of
    /// the week has lawful hours.
    public func nextLawful(atOrAfter instant: Date) -> Date? {
        var day = dayStart(instant)
        for _ in 0...7 {
            if let window = window(ofDayStarting: day), instant < window.upperBound {
                return max(instant, window.lowerBound)
            }
            guard let next = calendar.date(byAdding: .day, value: 1, to: day) else { return nil }
            day = next
        }
        return nil
    }

    /// When the next call of a campaign may go out: the interval after its last call, the
    /// next day once the day's most are placed, and inside the lawful hours.
    public func nextCall(for campaign: DialerCampaign) -> Date? {
        var candidate = campaign.campaign.startedAt
        if let last = campaign.recentCalls.last {
            candidate = max(candidate, last.addingTimeInterval(rules.interval))
            let day = dayStart(last)
            if campaign.recentCalls.count(where: { $0 >= day }) >= rules.maxCallsPerDay, dayStart(candidate) == day,
               let nextDay = calendar.date(byAdding: .day, value: 1, to: day) {
                candidate = nextDay
            }
        }
        return nextLawful(atOrAfter: candidate)
    }

    /// The campaigns due at `now`, the most overdue first, at most `free` of them; none
    /// outside the lawful hours, however overdue (a backlog, a dialer that was down).
    public func due(_ campaigns: [DialerCampaign], now: Date, free: Int) -> [DialerCampaign] {
        guard free > 0, isLawful(now) else { return [] }
        return campaigns.compactMap { c in nextCall(for: c).flatMap { $0 <= now ? (c, $0) : nil } }
            .sorted { ($0.1, $0.0.campaign.id) < ($1.1, $1.0.campaign.id) }
            .prefix(free).map(\.0)
    }

    /// When the dialer should look again after a round at `now`: the earliest of the
    /// campaigns' next calls, or, when one is overdue, the next lawful instant (at once when
    /// that is now: the calls wait for a channel).
    public func nextLook(_ campaigns: [DialerCampaign], after now: Date) -> Date? {
        guard let earliest = campaigns.compactMap(nextCall(for:)).min() else { return nil }
        return earliest > now ? earliest : nextLawful(atOrAfter: now)
    }

    /// What the store checks when the dialer claims a call of this campaign at `now`.
    public func claim(_ campaign: Campaign, now: Date) -> CallClaim {
        CallClaim(
            campaignID: campaign.id, now: now, lastCallBy: now.addingTimeInterval(-rules.interval), dayStart: dayStart(now),
            maxPerDay: rules.maxCallsPerDay, channels: rules.channels, leaseUntil: now.addingTimeInterval(callLength + Self.leaseMargin))
    }

    /// How long past its ring and message a call's claim holds: a channel may take 10 s
    /// to start baresip, 3 s past the message and 5 s to hang up, then the end is recorded.
    public static let leaseMargin: TimeInterval = 30

    /// The longest a call may last: ringing, then the message.
    public var callLength: TimeInterval { rules.ringTimeout + rules.maxMessageLength }

    /// When a campaign ends by itself for having run the most days.
    public func expiry(of campaign: Campaign) -> Date {
        campaign.startedAt.addingTimeInterval(Double(rules.maxCampaignDays) * 86_400)
    }

    /// How far back the dialer reads calls so that the day of any campaign's last call is whole.
    public func recentSince(_ now: Date) -> Date { dayStart(now).addingTimeInterval(-86_400 - 3_600) }
}
