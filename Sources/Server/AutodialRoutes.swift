import Foundation
import Hummingbird
import Interchange
import ReportModel
import ReportService

/// `/v1/phones/{number}/autodial` and `/calls`, and `/v1/stats/autodial`: supervisors start
/// and stop campaigns and read what the robot did. The dialer itself runs beside the
/// server (`serve --autodial-trunk`), on whichever replica claims each call.
struct AutodialRoutes {
    let service: ReportService

    static let maxPage = 500

    func register(on router: Router<AppRequestContext>) {
        router.handle(.startAutodial) { request, _, context, identity in
            let number = try PhoneRoutes.number(context)
            let note = try await Note<PhoneNote>.read(request).note
            let change = try await service.startAutodial(number, note: note, by: identity.caller)
            var response = try Responses.json(CampaignView(change.campaign))
            response.status = .created
            response.headers[.cacheControl] = "no-store"
            return response
        }
        router.handle(.stopAutodial) { request, _, context, identity in
            let number = try PhoneRoutes.number(context)
            let note = try await Note<PhoneNote>.read(request).note
            return try Responses.private(CampaignView(try await service.stopAutodial(number, note: note, by: identity.caller).campaign))
        }
        router.handle(.campaigns) { _, _, context, identity in
            let number = try PhoneRoutes.number(context)
            let campaigns = try await service.campaigns(of: number, for: identity.caller)
            return try Responses.private(Campaigns(campaigns: campaigns.map(CampaignView.init)))
        }
        router.handle(.calls) { _, query, context, identity in
            let number = try PhoneRoutes.number(context)
            let (limit, before) = try Self.page(query)
            let calls = try await service.calls(of: number, before: before, limit: limit, for: identity.caller)
            let next = calls.count == limit ? calls.last.map { "/v1/phones/\(Phone.written(number))/calls?limit=\(limit)&before=\($0.id)" } : nil
            return try Responses.private(Calls(calls: calls.map(CallView.init), next: next))
        }
        router.handle(.autodialStats) { _, query, _, identity in
            let (limit, before) = try Self.page(query)
            let effects = try await service.campaignEffects(before: before, limit: limit, for: identity.caller)
            let next = effects.count == limit ? effects.last.map { "/v1/stats/autodial?limit=\(limit)&before=\($0.campaign.id)" } : nil
            return try Responses.private(Stats(campaigns: effects.map(EffectView.init), next: next))
        }
    }

    private static func page(_ query: QueryParameters) throws -> (limit: Int, before: Int64?) {
        let limit = try query.integer("limit", in: 1...maxPage, default: 50)!
        return (limit, try query.integer("before", in: 1...Int(Int64.max)).map(Int64.init))
    }

    struct Campaigns: Encodable { var campaigns: [CampaignView] }

    struct Calls: Encodable {
        var calls: [CallView]
        var next: String?
    }

    struct Stats: Encodable {
        var campaigns: [EffectView]
        var next: String?
    }
}

/// A campaign as staff see it.
struct CampaignView: Encodable {
    struct By: Encodable {
        var id: Int64?
        var apiKey: Int64?
        enum CodingKeys: String, CodingKey { case id, apiKey = "api_key" }
        init(_ author: Author) { (id, apiKey) = (author.accountID, author.apiKeyID) }
    }
    var id: Int64
    var number: String
    var active: Bool
    var startedAt: String
    var startedBy: By
    var note: String?
    var endedAt: String?
    var endedBy: By?
    var endReason: String?
    var endNote: String?

    init(_ c: Campaign) {
        (id, number, active, note, endNote) = (c.id, c.number, c.isActive, c.note, c.endNote)
        startedAt = RFC3339.string(from: c.startedAt)
        startedBy = By(c.startedBy)
        endedAt = c.endedAt.map { RFC3339.string(from: $0) }
        endedBy = c.endedBy.map(By.init)
        endReason = c.endReason?.rawValue
    }

    enum CodingKeys: String, CodingKey {
        case id, number, active, startedAt = "started_at", startedBy = "started_by", note, endedAt = "ended_at", endedBy = "ended_by"
        case endReason = "end_reason", endNote = "end_note"
    }
}

/// One call of the log.
struct CallView: Encodable {
    var id: Int64
    var campaignID: Int64
    var placedAt: String
    var endedAt: String?
    var outcome: String
    var answered: Bool
    var sipCode: Int?
    var secondsPlayed: Double
    var reason: String?

    init(_ c: CallAttempt) {
        (id, campaignID, outcome, answered, sipCode, secondsPlayed, reason) = (
            c.id, c.campaignID, c.outcome.rawValue, c.outcome == .answered, c.sipCode, c.secondsPlayed, c.reason
        )
        placedAt = RFC3339.string(from: c.placedAt)
        endedAt = c.endedAt.map { RFC3339.string(from: $0) }
    }

    enum CodingKeys: String, CodingKey {
        case id, campaignID = "campaign_id", placedAt = "placed_at", endedAt = "ended_at", outcome, answered, sipCode = "sip_code"
        case secondsPlayed = "seconds_played", reason
    }
}

/// What a campaign did, for `/v1/stats/autodial`.
struct EffectView: Encodable {
    var campaign: CampaignView
    var calls: Int
    var answered: Int
    var periodDays: Double
    var reportsBefore: Int
    var reportsAfter: Int

    init(_ e: CampaignEffect) {
        campaign = CampaignView(e.campaign)
        (calls, answered, reportsBefore, reportsAfter) = (e.calls, e.answered, e.reportsBefore, e.reportsAfter)
        periodDays = (e.period / 86_400 * 1_000).rounded() / 1_000
    }

    enum CodingKeys: String, CodingKey {
        case campaign, calls, answered, periodDays = "period_days", reportsBefore = "reports_before", reportsAfter = "reports_after"
    }
}
