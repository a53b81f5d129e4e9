import Foundation
import Geometry
import GRDB
import ReportModel
import StorePorts

/// The webhooks and their outbox in an SQLite database (tables `webhook`,
/// `webhook_event`, `webhook_delivery`, `webhook_attempt`): ``WebhookStorage`` in SQL with
/// bound parameters only. The outbox rows themselves are written by a trigger on the
/// changes table, in the transaction of each change.
public struct SQLiteWebhooks: WebhookStorage {
    let pool: DatabasePool

    public init(_ store: SQLiteReports) { pool = store.pool }

    // MARK: Endpoints

    public func registerWebhook(_ draft: WebhookDraft, key: Data, limit: Int, now: Date) async throws -> Webhook {
        try await pool.writeOrBusy { db in
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM webhook") ?? 0
            guard count < limit else { throw TooManyWebhooks(limit: limit) }
            try db.execute(
                sql: "INSERT INTO webhook (url, description, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [draft.url, draft.description, key, now.milliseconds, now.milliseconds])
            let id = db.lastInsertedRowID
            try Self.subscribe(db, id, to: draft.events)
            return try Self.fetch(db, id: id)!
        }
    }

    public func webhook(id: Int64) async throws -> Webhook? {
        try await pool.read { db in try Self.fetch(db, id: id) }
    }

    public func webhooks() async throws -> [Webhook] {
        try await pool.read { db in
            try Self.events(db, of: Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM webhook ORDER BY id"))
        }
    }

    public func updateWebhook(_ id: Int64, _ patch: WebhookPatch, now: Date) async throws -> Webhook {
        try await pool.writeOrBusy { db in
            guard let before = try Self.fetch(db, id: id) else { throw WebhookNotFound(id: id) }
            try db.execute(
                sql: "UPDATE webhook SET url = coalesce(?, url), description = coalesce(?, description), updated_at = ? WHERE id = ?",
                arguments: [patch.url, patch.description, now.milliseconds, id])
            if let events = patch.events {
                try db.execute(sql: "DELETE FROM webhook_event WHERE webhook_id = ?", arguments: [id])
                try Self.subscribe(db, id, to: events)
            }
            if let enabled = patch.enabled, enabled != before.enabled {
                try Self.setEnabled(db, id, enabled, reason: enabled ? nil : "disabled by an administrator", now: now)
            }
            return try Self.fetch(db, id: id)!
        }
    }

    public func deleteWebhook(_ id: Int64) async throws {
        try await pool.writeOrBusy { db in
            try db.execute(sql: "DELETE FROM webhook WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw WebhookNotFound(id: id) }
        }
    }

    private static func subscribe(_ db: Database, _ id: Int64, to events: [ChangeType]) throws {
        for event in events {
            try db.execute(sql: "INSERT INTO webhook_event (action, webhook_id) VALUES (?, ?)", arguments: [event.action.rawValue, id])
        }
    }

    /// A disabled endpoint's due deliveries wait without a time, and enabling makes them
    /// due. Those with a time to come keep it: a retry's (claims pass over a disabled
    /// endpoint's), or a lease, whose attempt is in flight and gets none when recorded.
    /// Clearing a lease let an endpoint disabled and enabled again be sent the same
    /// delivery while the first attempt ran.
    static func setEnabled(_ db: Database, _ id: Int64, _ enabled: Bool, reason: String?, now: Date) throws {
        try db.execute(
            sql: "UPDATE webhook SET enabled = ?, disabled_reason = ?, updated_at = ? WHERE id = ?",
            arguments: [enabled, reason, now.milliseconds, id])
        if enabled {
            try db.execute(
                sql: "UPDATE webhook_delivery SET next_at = ? WHERE webhook_id = ? AND state = 'pending' AND next_at IS NULL",
                arguments: [now.milliseconds, id])
        } else {
            try db.execute(
                sql: "UPDATE webhook_delivery SET next_at = NULL WHERE webhook_id = ? AND state = 'pending' AND next_at <= ?", arguments: [id, now.milliseconds])
        }
    }

    private static let columns = "id, url, description, enabled, disabled_reason, created_at, updated_at"

    private static func fetch(_ db: Database, id: Int64) throws -> Webhook? {
        try events(db, of: Row.fetchAll(db, sql: "SELECT \(columns) FROM webhook WHERE id = ?", arguments: [id])).first
    }

    private static func events(_ db: Database, of rows: [Row]) throws -> [Webhook] {
        try rows.map { row in
            let actions = Set(try String.fetchAll(db, sql: "SELECT action FROM webhook_event WHERE webhook_id = ?", arguments: [row[0]]))
            return Webhook(
                id: row[0], url: row[1], events: ChangeType.allCases.filter { actions.contains($0.action.rawValue) }, description: row[2],
                enabled: row[3], disabledReason: row[4], createdAt: Date(milliseconds: row[5]), updatedAt: Date(milliseconds: row[6]))
        }
    }

    // MARK: The outbox

    public func due(now: Date, limit: Int, perEndpoint: Int, excluding: Set<Int64>) async throws -> [DueDelivery] {
        try await pool.read { db in
            // Each enabled endpoint's soonest along its index, then the soonest of them all
            // (endpoints are few; SQLite has no LATERAL join).
            let endpoints = try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM webhook WHERE enabled ORDER BY id")).filter { !excluding.contains($0) }
            let statement = try db.cachedStatement(sql: """
                SELECT d.id, d.webhook_id, d.change_seq, d.attempts, d.next_at, d.payload, w.url, w.secret
                FROM webhook_delivery d JOIN webhook w ON w.id = d.webhook_id
                WHERE d.webhook_id = ? AND d.state = 'pending' AND d.next_at <= ? ORDER BY d.next_at, d.id LIMIT ?
                """)
            let due = try endpoints.flatMap { endpoint in
                try Row.fetchAll(statement, arguments: [endpoint, now.milliseconds, min(perEndpoint, limit)]).map { row in
                    DueDelivery(
                        id: row[0], webhookID: row[1], changeSeq: row[2], attempts: row[3], nextAt: row[4], payload: row[5], url: row[6], key: row[7])
                }
            }
            return Array(due.sorted { ($0.nextAt, $0.id) < ($1.nextAt, $1.id) }.prefix(limit))
        }
    }

    /// Due, waiting for a retry, or held while their endpoint is disabled.
    public func backlog() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM webhook_delivery WHERE state = 'pending'")) ?? 0 }
    }

    public func anyEnabled() async throws -> Bool {
        try await pool.read { db in try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM webhook WHERE enabled)")) ?? false }
    }

    /// The next time a delivery is due: of enabled endpoints only, as a claim takes them (a
    /// disabled one's retries keep their times, and the dispatcher would wake for nothing),
    /// each endpoint's first along its due index (endpoints are few; a `min` over the join
    /// read every pending delivery).
    public func nextDue(excluding: Set<Int64>) async throws -> Date? {
        try await pool.read { db in
            let endpoints = try Int64.fetchAll(db.cachedStatement(sql: "SELECT id FROM webhook WHERE enabled")).filter { !excluding.contains($0) }
            let first = try db.cachedStatement(
                sql: "SELECT next_at FROM webhook_delivery WHERE webhook_id = ? AND state = 'pending' AND next_at IS NOT NULL ORDER BY next_at LIMIT 1")
            return try endpoints.compactMap { try Int64.fetchOne(first, arguments: [$0]) }.min().map(Date.init(milliseconds:))
        }
    }

    /// A delivery is taken only while pending and due as read (`next_at` unchanged), so
    /// of two dispatchers one gets it.
    public func claim(_ deliveries: [DueDelivery], payloads: [Int64: Data], until leaseEnd: Date) async throws -> [DueDelivery] {
        try await pool.writeOrBusy { db in
            let statement = try db.cachedStatement(sql: """
                UPDATE webhook_delivery SET next_at = ?, payload = coalesce(payload, ?)
                WHERE id = ? AND state = 'pending' AND next_at = ? RETURNING payload
                """)
            return try deliveries.compactMap { delivery in
                let stored = try Data.fetchOne(
                    statement, arguments: [leaseEnd.milliseconds, delivery.payload ?? payloads[delivery.changeSeq], delivery.id, delivery.nextAt])
                guard let stored else { return nil }
                var claimed = delivery
                claimed.payload = stored
                return claimed
            }
        }
    }

    public func record(_ outcomes: [AttemptOutcome], now: Date) async throws {
        guard !outcomes.isEmpty else { return }
        try await pool.writeOrBusy { db in
            let attempt = try db.cachedStatement(sql: """
                INSERT OR IGNORE INTO webhook_attempt (delivery_id, number, at, status, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)
                """)
            let settle = try db.cachedStatement(sql: """
                UPDATE webhook_delivery SET attempts = ?, state = ?,
                    next_at = CASE WHEN (SELECT enabled FROM webhook WHERE webhook.id = webhook_delivery.webhook_id) THEN ? END,
                    last_status = ?, last_error = ?, finished_at = ?
                WHERE id = ? AND state = 'pending' AND attempts = ?
                """)
            for outcome in outcomes {
                let finished = outcome.state == .pending ? nil : outcome.at.milliseconds
                try settle.execute(arguments: [
                    outcome.attempt, outcome.state.rawValue, outcome.retryAt?.milliseconds, outcome.status, outcome.error, finished,
                    outcome.deliveryID, outcome.attempt - 1,
                ])
                guard db.changesCount == 1 else { continue }  // another dispatcher settled it
                try attempt.execute(arguments: [
                    outcome.deliveryID, outcome.attempt, outcome.at.milliseconds, outcome.status, outcome.error, outcome.milliseconds,
                ])
                if outcome.status == 410 {
                    try Self.setEnabled(
                        db, outcome.webhookID, false, reason: "the endpoint answered 410 Gone at \(outcome.at.ISO8601Format())", now: now)
                }
            }
        }
    }

    @discardableResult
    public func forgetDeliveries(finishedBefore cutoff: Date) async throws -> Int {
        try await pool.writeOrBusy { db in
            try db.execute(sql: "DELETE FROM webhook_delivery WHERE state != 'pending' AND finished_at < ?", arguments: [cutoff.milliseconds])
            return db.changesCount
        }
    }

    // MARK: What administrators see of deliveries

    public func deliveries(of webhook: Int64, state: DeliveryState?, before: Int64?, limit: Int) async throws -> [Delivery] {
        try await pool.read { db in
            guard try Self.fetch(db, id: webhook) != nil else { throw WebhookNotFound(id: webhook) }
            let rows = try Row.fetchAll(
                db, sql: """
                    SELECT id, change_seq, action, state, attempts, next_at, last_status, last_error, created_at, finished_at
                    FROM webhook_delivery WHERE webhook_id = ? AND id < ? AND (? IS NULL OR state = ?) ORDER BY id DESC LIMIT ?
                    """,
                arguments: [webhook, before ?? Int64.max, state?.rawValue, state?.rawValue, limit])
            return try rows.map { row in
                let attempts = try Row.fetchAll(
                    db, sql: "SELECT number, at, status, error, duration_ms FROM webhook_attempt WHERE delivery_id = ? ORDER BY number",
                    arguments: [row[0]]
                ).map { a in
                    Delivery.Attempt(number: a[0], at: Date(milliseconds: a[1]), status: a[2], error: a[3], milliseconds: a[4])
                }
                return Delivery(
                    id: row[0], changeSeq: row[1], type: ReportAction(rawValue: row[2]).map(ChangeType.init), state: DeliveryState(rawValue: row[3]) ?? .pending,
                    attemptCount: row[4], nextAt: (row[5] as Int64?).map(Date.init(milliseconds:)), lastStatus: row[6], lastError: row[7],
                    createdAt: Date(milliseconds: row[8]), finishedAt: (row[9] as Int64?).map(Date.init(milliseconds:)), attempts: attempts)
            }
        }
    }
}

