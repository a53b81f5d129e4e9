import Foundation
import PostgresNIO
import ReportModel
import StorePorts

/// Autodial's campaigns and calls on PostgreSQL. Several replicas claim calls at once, so a
/// claim first locks the one row of `autodial_lock`: the claims of every replica take turns,
/// and each one's checks (interval, the day's most, the channels) see every claim committed
/// before it (read committed takes a new snapshot for each statement after the lock).
enum AutodialSchema {
    static let migration: (identifier: String, statements: [String]) = (
        "v8: autodial campaigns and their calls",
        [
            "ALTER TABLE phone_history DROP CONSTRAINT phone_history_action_check",
            """
            ALTER TABLE phone_history ADD CONSTRAINT phone_history_action_check
            CHECK (action IN ('verified', 'blocked', 'unblocked', 'autodial_started', 'autodial_stopped'))
            """,
            """
            CREATE TABLE autodial_campaign (
                id bigserial PRIMARY KEY,
                number text NOT NULL,
                started_at bigint NOT NULL,
                started_account_id bigint,
                started_api_key_id bigint,
                note text,
                ended_at bigint,
                ended_account_id bigint,
                ended_api_key_id bigint,
                end_reason text CHECK (end_reason IN ('stopped', 'not_violator', 'poster_gone', 'max_days')),
                end_note text
            )
            """,
            "CREATE UNIQUE INDEX autodial_campaign_active ON autodial_campaign (number) WHERE ended_at IS NULL",
            "CREATE INDEX autodial_campaign_number ON autodial_campaign (number, id)",
            """
            CREATE TABLE autodial_call (
                id bigserial PRIMARY KEY,
                campaign_id bigint NOT NULL REFERENCES autodial_campaign (id),
                number text NOT NULL,
                placed_at bigint NOT NULL,
                lease_until bigint NOT NULL,
                ended_at bigint,
                outcome text NOT NULL CHECK (outcome IN ('placing', 'answered', 'busy', 'unanswered', 'failed', 'interrupted')),
                sip_code integer,
                seconds_played double precision NOT NULL DEFAULT 0,
                reason text
            )
            """,
            "CREATE INDEX autodial_call_campaign ON autodial_call (campaign_id, placed_at)",
            "CREATE INDEX autodial_call_number ON autodial_call (number, id)",
            "CREATE INDEX autodial_call_placing ON autodial_call (lease_until) WHERE outcome = 'placing'",
            "CREATE TABLE autodial_lock (id integer PRIMARY KEY CHECK (id = 1))",
            "INSERT INTO autodial_lock VALUES (1)",
        ])

    static let campaignColumns = """
        id, number, started_at, started_account_id, started_api_key_id, note, ended_at, ended_account_id, ended_api_key_id, end_reason, end_note
        """
    static let callColumns = "id, campaign_id, number, placed_at, ended_at, outcome, sip_code, seconds_played, reason"

    static func campaign(_ row: PostgresRow) throws -> Campaign {
        let (id, number, started, startedAccount, startedKey, note, ended, endedAccount, endedKey, reason, endNote) = try row.decode(
            (Int64, String, Int64, Int64?, Int64?, String?, Int64?, Int64?, Int64?, String?, String?).self)
        return Campaign(
            id: id, number: number, startedAt: Date(milliseconds: started), startedBy: Author(accountID: startedAccount, apiKeyID: startedKey),
            note: note, endedAt: ended.map(Date.init(milliseconds:)), endedBy: ended == nil ? nil : Author(accountID: endedAccount, apiKeyID: endedKey),
            endReason: reason.flatMap(CampaignEnd.init(rawValue:)), endNote: endNote)
    }

    static func call(_ row: PostgresRow) throws -> CallAttempt {
        let (id, campaign, number, placed, ended, outcome, code, played, reason) = try row.decode(
            (Int64, Int64, String, Int64, Int64?, String, Int?, Double, String?).self)
        return CallAttempt(
            id: id, campaignID: campaign, number: number, placedAt: Date(milliseconds: placed), endedAt: ended.map(Date.init(milliseconds:)),
            outcome: CallOutcome(rawValue: outcome) ?? .failed, sipCode: code, secondsPlayed: played, reason: reason)
    }
}

// MARK: Steps of a write transaction

extension PostgresTransaction {
    func activeCampaign(_ number: String) throws -> Campaign? {
        try rows("SELECT \(unescaped: AutodialSchema.campaignColumns) FROM autodial_campaign WHERE number = \(number) AND ended_at IS NULL")
            .first.map(AutodialSchema.campaign)
    }

    func startCampaign(_ number: String, note: String?, author: Author, now: Date) throws -> (campaign: Campaign, entry: PhoneHistoryEntry) {
        let at = now.milliseconds
        let id = try rows(
            """
            INSERT INTO autodial_campaign (number, started_at, started_account_id, started_api_key_id, note)
            VALUES (\(number), \(at), \(author.accountID), \(author.apiKeyID), \(note)) RETURNING id
            """)[0].decode(Int64.self)
        let campaign = Campaign(id: id, number: number, startedAt: Date(milliseconds: at), startedBy: author, note: note)
        return (campaign, try setPhoneStatus(number, to: try phoneStatus(number), action: .autodialStarted, note: note, moved: 0, author: author, now: now))
    }

    func endCampaign(_ campaign: Campaign, reason: CampaignEnd, note: String?, author: Author, now: Date) throws -> (campaign: Campaign, entry: PhoneHistoryEntry) {
        let at = now.milliseconds
        try execute(
            """
            UPDATE autodial_campaign SET ended_at = \(at), ended_account_id = \(author.accountID), ended_api_key_id = \(author.apiKeyID),
                end_reason = \(reason.rawValue), end_note = \(note)
            WHERE id = \(campaign.id) AND ended_at IS NULL
            """)
        var ended = campaign
        (ended.endedAt, ended.endedBy, ended.endReason, ended.endNote) = (Date(milliseconds: at), author, reason, note)
        let status = try phoneStatus(campaign.number)
        return (ended, try setPhoneStatus(campaign.number, to: status, action: .autodialStopped, note: note ?? reason.explanation, moved: 0, author: author, now: now))
    }

    func openReportCount(carrying number: String, excluding statuses: [String]) throws -> Int {
        try rows("SELECT count(*) FROM report_phone WHERE phone = \(number) AND NOT (status = ANY(\(statuses)))")[0].decode(Int.self)
    }

    func claimCall(_ claim: CallClaim) throws -> Result<CallAttempt, ClaimRefusal> {
        _ = try rows("SELECT id FROM autodial_lock FOR UPDATE")
        guard let number = try rows("SELECT number FROM autodial_campaign WHERE id = \(claim.campaignID) AND ended_at IS NULL").first?.decode(String.self)
        else { return .failure(.campaignEnded) }
        let now = claim.now.milliseconds
        let (recent, today, busy) = try rows(
            """
            SELECT (SELECT count(*) FROM autodial_call WHERE number = \(number)
                    AND (placed_at > \(claim.lastCallBy.milliseconds) OR (outcome = 'placing' AND lease_until > \(now)))),
                   (SELECT count(*) FROM autodial_call WHERE number = \(number) AND placed_at >= \(claim.dayStart.milliseconds)),
                   (SELECT count(*) FROM autodial_call WHERE outcome = 'placing' AND lease_until > \(now))
            """)[0].decode((Int, Int, Int).self)
        if recent > 0 { return .failure(.tooSoon) }
        if today >= claim.maxPerDay { return .failure(.dayFull) }
        if busy >= claim.channels { return .failure(.channelsBusy) }
        let id = try rows(
            """
            INSERT INTO autodial_call (campaign_id, number, placed_at, lease_until, outcome)
            VALUES (\(claim.campaignID), \(number), \(now), \(claim.leaseUntil.milliseconds), 'placing') RETURNING id
            """)[0].decode(Int64.self)
        return .success(CallAttempt(id: id, campaignID: claim.campaignID, number: number, placedAt: Date(milliseconds: now)))
    }

    func finishCall(_ id: Int64, _ result: CallResult) throws -> CallAttempt? {
        try rows(
            """
            UPDATE autodial_call SET ended_at = \(result.endedAt.milliseconds), outcome = \(result.outcome.rawValue), sip_code = \(result.sipCode),
                seconds_played = \(result.secondsPlayed), reason = \(result.reason)
            WHERE id = \(id) RETURNING \(unescaped: AutodialSchema.callColumns)
            """
        ).first.map(AutodialSchema.call)
    }

    func expireCalls(now: Date) throws -> Int {
        try rows(
            """
            WITH expired AS (
                UPDATE autodial_call SET outcome = 'interrupted', reason = 'the dialer stopped before the call ended'
                WHERE outcome = 'placing' AND lease_until <= \(now.milliseconds) RETURNING 1)
            SELECT count(*) FROM expired
            """)[0].decode(Int.self)
    }
}

// MARK: Reads

extension PostgresReports {
    public func campaigns(of number: String) async throws -> [Campaign] {
        try await rows("SELECT \(unescaped: AutodialSchema.campaignColumns) FROM autodial_campaign WHERE number = \(number) ORDER BY id DESC")
            .map(AutodialSchema.campaign)
    }

    public func activeCampaigns(callsSince: Date) async throws -> [DialerCampaign] {
        try await snapshotRead { c in
            let campaigns = try await c.query(
                "SELECT \(unescaped: AutodialSchema.campaignColumns) FROM autodial_campaign WHERE ended_at IS NULL ORDER BY id", logger: logger
            ).collect().map(AutodialSchema.campaign)
            var calls: [Int64: [Date]] = [:]
            for row in try await c.query(
                """
                SELECT c.id, a.placed_at FROM autodial_campaign c JOIN autodial_call a ON a.number = c.number
                WHERE c.ended_at IS NULL AND a.placed_at >= \(callsSince.milliseconds) ORDER BY a.placed_at
                """, logger: logger
            ).collect() {
                let (id, placed) = try row.decode((Int64, Int64).self)
                calls[id, default: []].append(Date(milliseconds: placed))
            }
            return campaigns.map { DialerCampaign(campaign: $0, recentCalls: calls[$0.id] ?? []) }
        }
    }

    public func calls(of number: String, before: Int64?, limit: Int) async throws -> [CallAttempt] {
        try await rows(
            """
            SELECT \(unescaped: AutodialSchema.callColumns) FROM autodial_call WHERE number = \(number) AND id < \(before ?? Int64.max)
            ORDER BY id DESC LIMIT \(limit)
            """
        ).map(AutodialSchema.call)
    }

    public func campaignEffects(now: Date, before: Int64?, limit: Int) async throws -> [CampaignEffect] {
        try await snapshotRead { c in
            let campaigns = try await c.query(
                """
                SELECT \(unescaped: AutodialSchema.campaignColumns) FROM autodial_campaign WHERE id < \(before ?? Int64.max) ORDER BY id DESC LIMIT \(limit)
                """, logger: logger
            ).collect().map(AutodialSchema.campaign)
            var effects: [CampaignEffect] = []
            for campaign in campaigns {
                let (start, end) = (campaign.startedAt.milliseconds, (campaign.endedAt ?? now).milliseconds)
                let period = max(end - start, 0)
                let (calls, answered, before, after) = try await c.query(
                    """
                    SELECT (SELECT count(*) FROM autodial_call WHERE campaign_id = \(campaign.id)),
                           (SELECT count(*) FROM autodial_call WHERE campaign_id = \(campaign.id) AND outcome = 'answered'),
                           (SELECT count(*) FROM report_phone p JOIN report r ON r.id = p.report_id
                            WHERE p.phone = \(campaign.number) AND r.created_at >= \(start - period) AND r.created_at < \(start)),
                           (SELECT count(*) FROM report_phone p JOIN report r ON r.id = p.report_id
                            WHERE p.phone = \(campaign.number) AND r.created_at >= \(start) AND r.created_at < \(start + period))
                    """, logger: logger
                ).collect()[0].decode((Int, Int, Int, Int).self)
                effects.append(
                    CampaignEffect(
                        campaign: campaign, calls: calls, answered: answered, period: Double(period) / 1_000, reportsBefore: before, reportsAfter: after))
            }
            return effects
        }
    }
}
