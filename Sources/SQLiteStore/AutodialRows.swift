import Foundation
import GRDB
import ReportModel
import StorePorts

/// Autodial's campaigns and calls. A call's row is written before it is dialled (its
/// claim) and finished after: the row, not a queue, is the durable job, so a restart
/// neither loses a due call (due-ness is computed from the rows) nor places one twice (the
/// claim counts, finished or not). SQLite has one writer, so the claim's checks and its
/// insert cannot interleave with another claim's.
extension Schema {
    static func v9Autodial(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE phone_history_rebuilt (
                seq INTEGER PRIMARY KEY,
                number TEXT NOT NULL,
                at INTEGER NOT NULL,
                account_id INTEGER,
                api_key_id INTEGER,
                action TEXT NOT NULL CHECK (action IN ('verified', 'blocked', 'unblocked', 'autodial_started', 'autodial_stopped')),
                from_status TEXT NOT NULL,
                to_status TEXT NOT NULL,
                note TEXT,
                moved INTEGER NOT NULL DEFAULT 0
            );
            INSERT INTO phone_history_rebuilt SELECT seq, number, at, account_id, api_key_id, action, from_status, to_status, note, moved FROM phone_history;
            DROP TABLE phone_history;
            ALTER TABLE phone_history_rebuilt RENAME TO phone_history;
            CREATE INDEX phone_history_number ON phone_history(number, seq);
            CREATE TABLE autodial_campaign (
                id INTEGER PRIMARY KEY,
                number TEXT NOT NULL,
                started_at INTEGER NOT NULL,
                started_account_id INTEGER,
                started_api_key_id INTEGER,
                note TEXT,
                ended_at INTEGER,
                ended_account_id INTEGER,
                ended_api_key_id INTEGER,
                end_reason TEXT CHECK (end_reason IN ('stopped', 'not_violator', 'poster_gone', 'max_days')),
                end_note TEXT
            );
            -- One campaign at a time per number.
            CREATE UNIQUE INDEX autodial_campaign_active ON autodial_campaign(number) WHERE ended_at IS NULL;
            CREATE INDEX autodial_campaign_number ON autodial_campaign(number, id);
            CREATE TABLE autodial_call (
                id INTEGER PRIMARY KEY,
                campaign_id INTEGER NOT NULL REFERENCES autodial_campaign(id),
                number TEXT NOT NULL,
                placed_at INTEGER NOT NULL,
                lease_until INTEGER NOT NULL,
                ended_at INTEGER,
                outcome TEXT NOT NULL CHECK (outcome IN ('placing', 'answered', 'busy', 'unanswered', 'failed', 'interrupted')),
                sip_code INTEGER,
                seconds_played REAL NOT NULL DEFAULT 0,
                reason TEXT
            );
            CREATE INDEX autodial_call_campaign ON autodial_call(campaign_id, placed_at);
            CREATE INDEX autodial_call_number ON autodial_call(number, id);
            CREATE INDEX autodial_call_placing ON autodial_call(lease_until) WHERE outcome = 'placing';
            """)
    }
}

enum AutodialRows {
    static let campaignColumns = """
        id, number, started_at, started_account_id, started_api_key_id, note, ended_at, ended_account_id, ended_api_key_id, end_reason, end_note
        """
    static let callColumns = "id, campaign_id, number, placed_at, ended_at, outcome, sip_code, seconds_played, reason"

    static func campaign(_ row: Row) -> Campaign {
        let ended: Int64? = row["ended_at"]
        return Campaign(
            id: row["id"], number: row["number"], startedAt: ReportRow.date(milliseconds: row["started_at"]),
            startedBy: Author(accountID: row["started_account_id"], apiKeyID: row["started_api_key_id"]), note: row["note"],
            endedAt: ended.map(ReportRow.date(milliseconds:)),
            endedBy: ended == nil ? nil : Author(accountID: row["ended_account_id"], apiKeyID: row["ended_api_key_id"]),
            endReason: (row["end_reason"] as String?).flatMap(CampaignEnd.init(rawValue:)), endNote: row["end_note"])
    }

    static func call(_ row: Row) -> CallAttempt {
        CallAttempt(
            id: row["id"], campaignID: row["campaign_id"], number: row["number"], placedAt: ReportRow.date(milliseconds: row["placed_at"]),
            endedAt: (row["ended_at"] as Int64?).map(ReportRow.date(milliseconds:)), outcome: CallOutcome(rawValue: row["outcome"]) ?? .failed,
            sipCode: row["sip_code"], secondsPlayed: row["seconds_played"], reason: row["reason"])
    }
}

// MARK: Steps of a write transaction

extension WriteTransaction {
    public func activeCampaign(_ number: String) throws -> Campaign? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(AutodialRows.campaignColumns) FROM autodial_campaign WHERE number = ? AND ended_at IS NULL"),
            arguments: [number]
        ).map(AutodialRows.campaign)
    }

    public func startCampaign(_ number: String, note: String?, author: Author, now: Date) throws -> (campaign: Campaign, entry: PhoneHistoryEntry) {
        try db.execute(
            sql: "INSERT INTO autodial_campaign (number, started_at, started_account_id, started_api_key_id, note) VALUES (?, ?, ?, ?, ?)",
            arguments: [number, now.milliseconds, author.accountID, author.apiKeyID, note])
        let campaign = Campaign(
            id: db.lastInsertedRowID, number: number, startedAt: ReportRow.date(milliseconds: now.milliseconds), startedBy: author, note: note)
        let status = try phoneStatus(number)
        return (campaign, try setPhoneStatus(number, to: status, action: .autodialStarted, note: note, author: author, now: now))
    }

    public func endCampaign(_ campaign: Campaign, reason: CampaignEnd, note: String?, author: Author, now: Date) throws -> (campaign: Campaign, entry: PhoneHistoryEntry) {
        try db.execute(
            sql: """
                UPDATE autodial_campaign SET ended_at = ?, ended_account_id = ?, ended_api_key_id = ?, end_reason = ?, end_note = ?
                WHERE id = ? AND ended_at IS NULL
                """,
            arguments: [now.milliseconds, author.accountID, author.apiKeyID, reason.rawValue, note, campaign.id])
        var ended = campaign
        (ended.endedAt, ended.endedBy, ended.endReason, ended.endNote) = (ReportRow.date(milliseconds: now.milliseconds), author, reason, note)
        let status = try phoneStatus(campaign.number)
        return (ended, try setPhoneStatus(campaign.number, to: status, action: .autodialStopped, note: note ?? reason.explanation, author: author, now: now))
    }

    public func openReportCount(carrying number: String, excluding statuses: [String]) throws -> Int {
        try Int.fetchOne(
            db.cachedStatement(sql: "SELECT count(*) FROM report_phone WHERE phone = ? AND status NOT IN (SELECT value FROM json_each(?))"),
            arguments: [number, try SQLiteReports.jsonList(strings: statuses)]) ?? 0
    }

    public func claimCall(_ claim: CallClaim) throws -> Result<CallAttempt, ClaimRefusal> {
        guard let campaign = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT number FROM autodial_campaign WHERE id = ? AND ended_at IS NULL"), arguments: [claim.campaignID])
        else { return .failure(.campaignEnded) }
        let number: String = campaign[0]
        let now = claim.now.milliseconds
        let counts = try Row.fetchOne(
            db.cachedStatement(sql: """
                SELECT (SELECT count(*) FROM autodial_call WHERE number = ?1 AND (placed_at > ?2 OR (outcome = 'placing' AND lease_until > ?4))),
                       (SELECT count(*) FROM autodial_call WHERE number = ?1 AND placed_at >= ?3),
                       (SELECT count(*) FROM autodial_call WHERE outcome = 'placing' AND lease_until > ?4)
                """),
            arguments: [number, claim.lastCallBy.milliseconds, claim.dayStart.milliseconds, now])!
        if (counts[0] as Int) > 0 { return .failure(.tooSoon) }
        if (counts[1] as Int) >= claim.maxPerDay { return .failure(.dayFull) }
        if (counts[2] as Int) >= claim.channels { return .failure(.channelsBusy) }
        try db.execute(
            sql: "INSERT INTO autodial_call (campaign_id, number, placed_at, lease_until, outcome) VALUES (?, ?, ?, ?, 'placing')",
            arguments: [claim.campaignID, number, now, claim.leaseUntil.milliseconds])
        return .success(CallAttempt(id: db.lastInsertedRowID, campaignID: claim.campaignID, number: number, placedAt: ReportRow.date(milliseconds: now)))
    }

    public func finishCall(_ id: Int64, _ result: CallResult) throws -> CallAttempt? {
        try db.execute(
            sql: "UPDATE autodial_call SET ended_at = ?, outcome = ?, sip_code = ?, seconds_played = ?, reason = ? WHERE id = ?",
            arguments: [result.endedAt.milliseconds, result.outcome.rawValue, result.sipCode, result.secondsPlayed, result.reason, id])
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT \(AutodialRows.callColumns) FROM autodial_call WHERE id = ?"), arguments: [id])
            .map(AutodialRows.call)
    }

    public func expireCalls(now: Date) throws -> Int {
        try db.execute(
            sql: "UPDATE autodial_call SET outcome = 'interrupted', reason = 'the dialer stopped before the call ended' WHERE outcome = 'placing' AND lease_until <= ?",
            arguments: [now.milliseconds])
        return db.changesCount
    }
}

// MARK: Reads

extension SQLiteReports {
    public func campaigns(of number: String) throws -> [Campaign] {
        try pool.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(AutodialRows.campaignColumns) FROM autodial_campaign WHERE number = ? ORDER BY id DESC"),
                arguments: [number]
            ).map(AutodialRows.campaign)
        }
    }

    public func activeCampaigns(callsSince: Date) throws -> [DialerCampaign] {
        try pool.read { db in
            let campaigns = try Row.fetchAll(
                db, sql: "SELECT \(AutodialRows.campaignColumns) FROM autodial_campaign WHERE ended_at IS NULL ORDER BY id"
            ).map(AutodialRows.campaign)
            var calls: [Int64: [Date]] = [:]
            for row in try Row.fetchAll(
                db, sql: """
                    SELECT c.id, a.placed_at FROM autodial_campaign c JOIN autodial_call a ON a.number = c.number
                    WHERE c.ended_at IS NULL AND a.placed_at >= ? ORDER BY a.placed_at
                    """, arguments: [callsSince.milliseconds])
            {
                calls[row[0], default: []].append(ReportRow.date(milliseconds: row[1]))
            }
            return campaigns.map { DialerCampaign(campaign: $0, recentCalls: calls[$0.id] ?? []) }
        }
    }

    public func calls(of number: String, before: Int64?, limit: Int) throws -> [CallAttempt] {
        try pool.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(AutodialRows.callColumns) FROM autodial_call WHERE number = ? AND id < ? ORDER BY id DESC LIMIT ?"),
                arguments: [number, before ?? Int64.max, limit]
            ).map(AutodialRows.call)
        }
    }

    public func campaignEffects(now: Date, before: Int64?, limit: Int) throws -> [CampaignEffect] {
        try pool.read { db in
            let campaigns = try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(AutodialRows.campaignColumns) FROM autodial_campaign WHERE id < ? ORDER BY id DESC LIMIT ?"),
                arguments: [before ?? Int64.max, limit]
            ).map(AutodialRows.campaign)
            return try campaigns.map { c in
                let (start, end) = (c.startedAt.milliseconds, (c.endedAt ?? now).milliseconds)
                let period = max(end - start, 0)
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: """
                        SELECT (SELECT count(*) FROM autodial_call WHERE campaign_id = ?1),
                               (SELECT count(*) FROM autodial_call WHERE campaign_id = ?1 AND outcome = 'answered'),
                               (SELECT count(*) FROM report_phone p JOIN report r ON r.id = p.report_id
                                WHERE p.phone = ?2 AND r.created_at >= ?3 - ?4 AND r.created_at < ?3),
                               (SELECT count(*) FROM report_phone p JOIN report r ON r.id = p.report_id
                                WHERE p.phone = ?2 AND r.created_at >= ?3 AND r.created_at < ?3 + ?4)
                        """),
                    arguments: [c.id, c.number, start, period])!
                return CampaignEffect(
                    campaign: c, calls: row[0], answered: row[1], period: Double(period) / 1_000, reportsBefore: row[2], reportsAfter: row[3])
            }
        }
    }
}
