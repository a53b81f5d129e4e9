import Foundation
import Geometry

/// Why an autodial campaign ended.
public enum CampaignEnd: String, Sendable, Hashable, Codable, CaseIterable {
    /// A supervisor stopped it.
    case stopped
    /// The number was verified as someone else's.
    case notViolator = "not_violator"
    /// Every public report carrying the number is removed, rejected or cancelled (or none is left).
    case posterGone = "poster_gone"
    /// It ran for the rules' most days.
    case maxDays = "max_days"

    /// What the phone's history says of an end nobody wrote a note for.
    public var explanation: String {
        switch self {
        case .stopped: "stopped by a supervisor"
        case .notViolator: "the number was verified as not the advertiser's"
        case .posterGone: "every report carrying the number is removed, rejected or cancelled"
        case .maxDays: "the campaign ran for the most days the rules allow"
        }
    }
}

/// A number the robot calls until the poster comes down: who started it and when, and how
/// it ended, once it has.
public struct Campaign: Sendable, Hashable {
    public var id: Int64
    public var number: String
    public var startedAt: Date
    public var startedBy: Author
    public var note: String?
    public var endedAt: Date?
    public var endedBy: Author?
    public var endReason: CampaignEnd?
    public var endNote: String?

    public var isActive: Bool { endedAt == nil }

    public init(
        id: Int64, number: String, startedAt: Date, startedBy: Author, note: String? = nil,
        endedAt: Date? = nil, endedBy: Author? = nil, endReason: CampaignEnd? = nil, endNote: String? = nil
    ) {
        self.id = id
        self.number = number
        self.startedAt = startedAt
        self.startedBy = startedBy
        self.note = note
        self.endedAt = endedAt
        self.endedBy = endedBy
        self.endReason = endReason
        self.endNote = endNote
    }
}

/// How a call ended, as the call log and `/metrics` count it.
public enum CallOutcome: String, Sendable, Hashable, Codable, CaseIterable {
    /// Claimed and not finished yet (a call in progress, or one its dialer never finished).
    case placing
    case answered
    /// The callee was busy (486, 600).
    case busy
    /// Nobody answered before the dialer gave up (it cancelled the call).
    case unanswered
    /// The trunk or the network refused it (another final code, or no answer at all).
    case failed
    /// Its dialer stopped mid-call (a restart, `kill -9`): it may or may not have gone out,
    /// so it counts as placed and is never placed again.
    case interrupted
}

/// One call to a number: claimed before it is dialled, finished when it ends.
public struct CallAttempt: Sendable, Hashable {
    public var id: Int64
    public var campaignID: Int64
    public var number: String
    /// When it was claimed, just before it was dialled.
    public var placedAt: Date
    public var endedAt: Date?
    public var outcome: CallOutcome
    /// The SIP final response's code (200 when answered), when one came.
    public var sipCode: Int?
    /// How many seconds of the message the callee heard.
    public var secondsPlayed: Double
    /// Why it ended, in the dialer's words (the SIP reason phrase, a timeout).
    public var reason: String?

    public init(
        id: Int64, campaignID: Int64, number: String, placedAt: Date, endedAt: Date? = nil, outcome: CallOutcome = .placing,
        sipCode: Int? = nil, secondsPlayed: Double = 0, reason: String? = nil
    ) {
        self.id = id
        self.campaignID = campaignID
        self.number = number
        self.placedAt = placedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.sipCode = sipCode
        self.secondsPlayed = secondsPlayed
        self.reason = reason
    }
}

/// How a finished call ended: what the dialer writes on its attempt.
public struct CallResult: Sendable, Hashable {
    public var outcome: CallOutcome
    public var sipCode: Int?
    public var secondsPlayed: Double
    public var reason: String?
    public var endedAt: Date

    public init(outcome: CallOutcome, sipCode: Int? = nil, secondsPlayed: Double = 0, reason: String? = nil, endedAt: Date) {
        self.outcome = outcome
        self.sipCode = sipCode
        self.secondsPlayed = secondsPlayed
        self.reason = reason
        self.endedAt = endedAt
    }
}

/// What a store checks, in the transaction that claims a call, so that no replica, restart
/// or backlog places one the rules forbid: the campaign is active, the number's last call
/// is at least the interval ago, the day's calls are under the most, and fewer calls are in
/// progress than the trunk has channels.
public struct CallClaim: Sendable, Hashable {
    public var campaignID: Int64
    public var now: Date
    /// The number's last call must be no later than this (now less the interval).
    public var lastCallBy: Date
    /// Calls placed since this instant (the start of the city's day) count toward the day's most.
    public var dayStart: Date
    public var maxPerDay: Int
    public var channels: Int
    /// Until when the claim holds a channel if its dialer never finishes it.
    public var leaseUntil: Date

    public init(campaignID: Int64, now: Date, lastCallBy: Date, dayStart: Date, maxPerDay: Int, channels: Int, leaseUntil: Date) {
        self.campaignID = campaignID
        self.now = now
        self.lastCallBy = lastCallBy
        self.dayStart = dayStart
        self.maxPerDay = maxPerDay
        self.channels = channels
        self.leaseUntil = leaseUntil
    }
}

/// Why a store refused to claim a call.
public enum ClaimRefusal: String, Error, Sendable, Hashable {
    case campaignEnded = "campaign_ended"
    case tooSoon = "too_soon"
    case dayFull = "day_full"
    case channelsBusy = "channels_busy"
}

/// An active campaign as the dialer plans it: the campaign and the times of its recent calls.
public struct DialerCampaign: Sendable, Hashable {
    public var campaign: Campaign
    /// The calls placed since the asked-for instant, oldest first.
    public var recentCalls: [Date]

    public init(campaign: Campaign, recentCalls: [Date]) {
        self.campaign = campaign
        self.recentCalls = recentCalls
    }
}

/// What a campaign did: its calls, and the reports carrying its number filed in equal
/// periods before and after it started (the seed's question: does the number stop appearing?).
public struct CampaignEffect: Sendable, Hashable {
    public var campaign: Campaign
    public var calls: Int
    public var answered: Int
    /// The length of each period: the campaign's run so far (to its end, or to now).
    public var period: TimeInterval
    public var reportsBefore: Int
    public var reportsAfter: Int

    public init(campaign: Campaign, calls: Int, answered: Int, period: TimeInterval, reportsBefore: Int, reportsAfter: Int) {
        self.campaign = campaign
        self.calls = calls
        self.answered = answered
        self.period = period
        self.reportsBefore = reportsBefore
        self.reportsAfter = reportsAfter
    }
}

/// A campaign started on a number that already has one running, or one that is not active
/// to stop (HTTP 409).
public struct CampaignConflict: Error, Sendable, Hashable, CustomStringConvertible {
    public var number: String
    public var reason: String
    public init(number: String, reason: String) {
        self.number = number
        self.reason = reason
    }
    public var description: String { "+\(number): \(reason)" }
}
