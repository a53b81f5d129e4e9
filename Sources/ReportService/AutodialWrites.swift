import Foundation
import Geometry
import ReportModel
import StorePorts

/// A campaign's start or end, with the phone's history row it wrote.
public struct CampaignChange: Sendable {
    public var campaign: Campaign
    public var entry: PhoneHistoryEntry
}

/// Autodial's writes: supervisors start and stop campaigns; the service ends one by itself
/// in the transaction that makes it pointless (the number verified as someone else's, the
/// last poster gone); the dialer claims and finishes calls. Each start and end is a change
/// of the number (the feed's `phone.autodial_started` and `phone.autodial_stopped`, and so
/// a webhook event) with its history row.
extension ReportService {
    /// The statuses of a report whose poster is gone. A duplicate counts: its poster is
    /// the one its original reports.
    public static let posterGoneStatuses = ["removed", "rejected", "cancelled", "duplicate"]

    /// Starts a campaign on a number verified as the advertiser's (blocked numbers too)
    /// while a public report carrying it is open (its poster not gone).
    public func startAutodial(_ number: String, note: String?, by caller: Caller, now: Date = Date()) async throws -> CampaignChange {
        let note = try checkAutodialWrite(by: caller, note: note)
        return try await commits.perform { t in
            guard try t.knows(phone: number) else { throw PhoneNotFound(number: number) }
            let status = try t.phoneStatus(number)
            guard status == .violator || status == .blocked else { throw PhoneStatusConflict(number: number, status: status, wanted: .autodialStarted) }
            if let running = try t.activeCampaign(number) {
                throw CampaignConflict(number: number, reason: "a campaign is already running (started \(running.startedAt.formatted(.iso8601)))")
            }
            // Its posters all gone already: a campaign would call for nothing until its last day.
            guard try t.openReportCount(carrying: number, excluding: Self.posterGoneStatuses) > 0 else {
                throw CampaignConflict(number: number, reason: "no public report carrying it is open: its posters are gone")
            }
            let (campaign, entry) = try t.startCampaign(number, note: note, author: caller.author, now: now)
            return (CampaignChange(campaign: campaign, entry: entry), IndexEffect())
        }
    }

    /// Stops a number's running campaign.
    public func stopAutodial(_ number: String, note: String?, by caller: Caller, now: Date = Date()) async throws -> CampaignChange {
        let note = try checkAutodialWrite(by: caller, note: note)
        return try await commits.perform { t in
            guard let running = try t.activeCampaign(number) else {
                guard try t.knows(phone: number) else { throw PhoneNotFound(number: number) }
                throw CampaignConflict(number: number, reason: "no autodial campaign is running")
            }
            let (campaign, entry) = try t.endCampaign(running, reason: .stopped, note: note, author: caller.author, now: now)
            return (CampaignChange(campaign: campaign, entry: entry), IndexEffect())
        }
    }

    /// Ends, in the caller's transaction, the campaigns of these numbers when no public
    /// report carrying them is left in a status other than ``posterGoneStatuses``.
    func endCampaignsIfPostersGone(_ numbers: [String], _ t: any ReportTransaction, now: Date) throws {
        for number in Set(numbers) {
            guard let running = try t.activeCampaign(number),
                  try t.openReportCount(carrying: number, excluding: Self.posterGoneStatuses) == 0
            else { continue }
            _ = try t.endCampaign(running, reason: .posterGone, note: nil, author: .system, now: now)
        }
    }

    /// Ends a number's campaign, if it runs, when it is verified as someone else's.
    func endCampaignIfNotViolator(_ number: String, outcome: PhoneStatus, _ t: any ReportTransaction, now: Date) throws {
        guard outcome == .notViolator, let running = try t.activeCampaign(number) else { return }
        _ = try t.endCampaign(running, reason: .notViolator, note: nil, author: .system, now: now)
    }

    /// Only staff start and stop campaigns; the note is checked as a transition's.
    private func checkAutodialWrite(by caller: Caller, note: String?) throws -> String? {
        guard caller.isStaff else { throw Forbidden(reason: "only supervisors start and stop autodial") }
        return try Self.note(note, required: false)
    }

    // MARK: The dialer's

    /// The running campaigns with their numbers' recent calls.
    public func dialerCampaigns(callsSince: Date) async throws -> [DialerCampaign] {
        try await read { try await $0.activeCampaigns(callsSince: callsSince) }
    }

    /// Claims a call: its row is written, or the claim's first broken rule comes back.
    public func claimCall(_ claim: CallClaim) async throws -> Result<CallAttempt, ClaimRefusal> {
        try await commits.perform { t in (try t.claimCall(claim), IndexEffect()) }
    }

    /// Writes how a call ended.
    @discardableResult
    public func finishCall(_ id: Int64, _ result: CallResult) async throws -> CallAttempt? {
        try await commits.perform { t in (try t.finishCall(id, result), IndexEffect()) }
    }

    /// Marks interrupted the calls whose dialer never finished them in time.
    public func expireCalls(now: Date) async throws -> Int {
        try await commits.perform { t in (try t.expireCalls(now: now), IndexEffect()) }
    }

    /// Ends a campaign that ran the rules' most days.
    public func endExpiredCampaign(_ campaign: Campaign, now: Date) async throws {
        let _: Void = try await commits.perform { t in
            if let running = try t.activeCampaign(campaign.number), running.id == campaign.id {
                _ = try t.endCampaign(running, reason: .maxDays, note: nil, author: .system, now: now)
            }
            return ((), IndexEffect())
        }
    }

    // MARK: Reads (staff's)

    /// A number's campaigns, newest first.
    public func campaigns(of number: String, for caller: Caller) async throws -> [Campaign] {
        try Self.checkAutodialRead(caller)
        return try await read { try await $0.campaigns(of: number) }
    }

    /// A page of a number's calls, newest first.
    public func calls(of number: String, before: Int64?, limit: Int, for caller: Caller) async throws -> [CallAttempt] {
        try Self.checkAutodialRead(caller)
        return try await read { try await $0.calls(of: number, before: before, limit: limit) }
    }

    /// A page of campaigns with what each did.
    public func campaignEffects(before: Int64?, limit: Int, for caller: Caller, now: Date = Date()) async throws -> [CampaignEffect] {
        try Self.checkAutodialRead(caller)
        return try await read { try await $0.campaignEffects(now: now, before: before, limit: limit) }
    }

    private static func checkAutodialRead(_ caller: Caller) throws {
        guard caller.isStaff else { throw Forbidden(reason: "only supervisors read autodial campaigns and calls") }
    }
}
