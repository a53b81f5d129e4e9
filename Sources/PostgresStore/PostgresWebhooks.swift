import Foundation
import PostgresNIO
import ReportModel
import StorePorts

/// The webhooks and their outbox in PostgreSQL: ``WebhookStorage`` with bound parameters
/// only. The outbox rows are written by a trigger on `report_change`, in the transaction
/// of each change, whichever process makes it.
///
/// A delivery is claimed by a conditional update (`… WHERE state = 'pending' AND next_at =
/// <as read>`): of two replicas claiming it, the second waits on the row's lock, finds
/// `next_at` moved when the first commits, and takes nothing, so each delivery is sent by
/// one replica; one whose replica died is due again when its lease ends.
public struct PostgresWebhooks: WebhookStorage {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    // MARK: Endpoints

    public func registerWebhook(_ draft: WebhookDraft, key: Data, limit: Int, now: Date) async throws -> Webhook {
        try await database.transaction { c in
            // One registration at a time, so that the limit holds.
            try await c.query("LOCK TABLE webhook IN SHARE ROW EXCLUSIVE MODE", logger: logger)
            let count = try await c.query("SELECT count(*) FROM webhook", logger: logger).collect()[0].decode(Int.self)
            guard count < limit else { throw TooManyWebhooks(limit: limit) }
            let id = try await c.query(
                """
                INSERT INTO webhook (url, description, secret, created_at, updated_at)
                VALUES (\(draft.url), \(draft.description), \(key), \(now.milliseconds), \(now.milliseconds)) RETURNING id
                """, logger: logger
            ).collect()[0].decode(Int64.self)
            try await Self.subscribe(c, id, to: draft.events, logger: logger)
            return try await Self.fetch(c, id: id, logger: logger)!
        }
    }

    public func webhook(id: Int64) async throws -> Webhook? {
        try await database.client.withConnection { c in try await Self.fetch(c, id: id, logger: logger) }
    }

    public func webhooks() async throws -> [Webhook] {
        try await database.client.withConnection { c in
            try await Self.webhooks(c, c.query("SELECT \(unescaped: Self.columns) FROM webhook ORDER BY id", logger: logger).collect(), logger: logger)
        }
    }

    public func updateWebhook(_ id: Int64, _ patch: WebhookPatch, now: Date) async throws -> Webhook {
        try await database.transaction { c in
            guard let before = try await Self.fetch(c, id: id, forUpdate: true, logger: logger) else { throw WebhookNotFound(id: id) }
            try await c.query(
                """
                UPDATE webhook SET url = coalesce(\(patch.url), url), description = coalesce(\(patch.description), description), updated_at = \(now.milliseconds)
                WHERE id = \(id)
                """, logger: logger)
            if let events = patch.events {
                try await c.query("DELETE FROM webhook_event WHERE webhook_id = \(id)", logger: logger)
                try await Self.subscribe(c, id, to: events, logger: logger)
            }
            if let enabled = patch.enabled, enabled != before.enabled {
                try await Self.setEnabled(c, id, enabled, reason: enabled ? nil : "disabled by an administrator", now: now, logger: logger)
            }
            return try await Self.fetch(c, id: id, logger: logger)!
        }
    }

    public func deleteWebhook(_ id: Int64) async throws {
        let deleted = try await database.client.query("DELETE FROM webhook WHERE id = \(id) RETURNING id", logger: logger).collect()
        if deleted.isEmpty { throw WebhookNotFound(id: id) }
    }

    private static func subscribe(_ c: PostgresConnection, _ id: Int64, to events: [ChangeType], logger: Logger) async throws {
        guard !events.isEmpty else { return }
        try await c.query(
            "INSERT INTO webhook_event (action, webhook_id) SELECT unnest(\(events.map(\.action.rawValue))::text[]), \(id)", logger: logger)
    }

    /// A disabled endpoint's due deliveries wait without a time, and enabling makes them
    /// due. Those with a time to come keep it: a retry's (claims pass over a disabled
    /// endpoint's), or a lease, whose attempt is in flight and gets none when recorded.
    /// Clearing a lease let an endpoint disabled and enabled again be sent the same
    /// delivery while the first attempt ran.
    static func setEnabled(_ c: PostgresConnection, _ id: Int64, _ enabled: Bool, reason: String?, now: Date, logger: Logger) async throws {
        try await c.query(
            "UPDATE webhook SET enabled = \(enabled), disabled_reason = \(reason), updated_at = \(now.milliseconds) WHERE id = \(id)", logger: logger)
        if enabled {
            try await c.query(
                "UPDATE webhook_delivery SET next_at = \(now.milliseconds) WHERE webhook_id = \(id) AND state = 'pending' AND next_at IS NULL", logger: logger)
        } else {
            try await c.query(
                "UPDATE webhook_delivery SET next_at = NULL WHERE webhook_id = \(id) AND state = 'pending' AND next_at <= \(now.milliseconds)", logger: logger)
        }
    }

    private static let columns = "id, url, description, enabled, disabled_reason, created_at, updated_at"

    private static func fetch(_ c: PostgresConnection, id: Int64, forUpdate: Bool = false, logger: Logger) async throws -> Webhook? {
        let rows = try await c.query(
            "SELECT \(unescaped: columns) FROM webhook WHERE id = \(id) \(unescaped: forUpdate ? "FOR UPDATE" : "")", logger: logger).collect()
        return try await webhooks(c, rows, logger: logger).first
    }

    private static func webhooks(_ c: PostgresConnection, _ rows: [PostgresRow], logger: Logger) async throws -> [Webhook] {
        var webhooks: [Webhook] = []
        for row in rows {
            let (id, url, description, enabled, reason, created, updated) = try row.decode((Int64, String, String, Bool, String?, Int64, Int64).self)
            let actions = Set(try await c.query("SELECT action FROM webhook_event WHERE webhook_id = \(id)", logger: logger).collect().map { try $0.decode(String.self) })
            webhooks.append(Webhook(
                id: id, url: url, events: ChangeType.allCases.filter { actions.contains($0.action.rawValue) }, description: description,
                enabled: enabled, disabledReason: reason, createdAt: Date(milliseconds: created), updatedAt: Date(milliseconds: updated)))
        }
        return webhooks
    }

    // MARK: The outbox

    public func due(now: Date, limit: Int, perEndpoint: Int, excluding: Set<Int64>) async throws -> [DueDelivery] {
        // Each enabled endpoint's soonest along its index, then the soonest of them all.
        try await database.client.query(
            """
            SELECT d.id, d.webhook_id, d.change_seq, d.attempts, d.next_at, d.payload, w.url, w.secret
            FROM webhook w CROSS JOIN LATERAL (
                SELECT * FROM webhook_delivery d WHERE d.webhook_id = w.id AND d.state = 'pending' AND d.next_at <= \(now.milliseconds)
                ORDER BY d.next_at, d.id LIMIT \(min(perEndpoint, limit))
            ) d
            WHERE w.enabled AND NOT (w.id = ANY(\(Array(excluding)))) ORDER BY d.next_at, d.id LIMIT \(limit)
            """, logger: logger
        ).collect().map { row in
            let (id, webhook, seq, attempts, next, payload, url, key) = try row.decode((Int64, Int64, Int64, Int, Int64, Data?, String, Data).self)
            return DueDelivery(id: id, webhookID: webhook, changeSeq: seq, attempts: attempts, nextAt: next, payload: payload, url: url, key: key)
        }
    }

    public func backlog() async throws -> Int {
        try await database.client.query("SELECT count(*) FROM webhook_delivery WHERE state = 'pending'", logger: logger).collect()[0].decode(Int.self)
    }

    public func anyEnabled() async throws -> Bool {
        try await database.client.query("SELECT EXISTS (SELECT 1 FROM webhook WHERE enabled)", logger: logger).collect()[0].decode(Bool.self)
    }

    public func nextDue(excluding: Set<Int64>) async throws -> Date? {
        // Of enabled endpoints only, as a claim takes them (a disabled one's retries keep
        // their times); each endpoint's first along its due index.
        try await database.client.query(
            """
            SELECT min(d.next_at) FROM webhook w CROSS JOIN LATERAL (
                SELECT d.next_at FROM webhook_delivery d WHERE d.webhook_id = w.id AND d.state = 'pending' AND d.next_at IS NOT NULL
                ORDER BY d.next_at LIMIT 1
            ) d
            WHERE w.enabled AND NOT (w.id = ANY(\(Array(excluding))))
            """, logger: logger)
            .collect().first.flatMap { try $0.decode(Int64?.self) }.map(Date.init(milliseconds:))
    }

    public func claim(_ deliveries: [DueDelivery], payloads: [Int64: Data], until leaseEnd: Date) async throws -> [DueDelivery] {
        try await database.transaction { c in
            var claimed: [DueDelivery] = []
            for delivery in deliveries {
                let rows = try await c.query(
                    """
                    UPDATE webhook_delivery SET next_at = \(leaseEnd.milliseconds), payload = coalesce(payload, \(delivery.payload ?? payloads[delivery.changeSeq]))
                    WHERE id = \(delivery.id) AND state = 'pending' AND next_at = \(delivery.nextAt) RETURNING payload
                    """, logger: logger
                ).collect()
                guard let row = rows.first, let payload = try row.decode(Data?.self) else { continue }
                var taken = delivery
                taken.payload = payload
                claimed.append(taken)
            }
            return claimed
        }
    }

    public func record(_ outcomes: [AttemptOutcome], now: Date) async throws {
        guard !outcomes.isEmpty else { return }
        try await database.transaction { c in
            for outcome in outcomes {
                let finished = outcome.state == .pending ? nil : outcome.at.milliseconds
                let settled = try await c.query(
                    """
                    UPDATE webhook_delivery SET attempts = \(outcome.attempt), state = \(outcome.state.rawValue),
                        next_at = CASE WHEN (SELECT enabled FROM webhook WHERE webhook.id = webhook_delivery.webhook_id) THEN \(outcome.retryAt?.milliseconds)::bigint END,
                        last_status = \(outcome.status), last_error = \(outcome.error), finished_at = \(finished)
                    WHERE id = \(outcome.deliveryID) AND state = 'pending' AND attempts = \(outcome.attempt - 1) RETURNING id
                    """, logger: logger
                ).collect()
                guard !settled.isEmpty else { continue }  // another dispatcher settled it
                try await c.query(
                    """
                    INSERT INTO webhook_attempt (delivery_id, number, at, status, error, duration_ms)
                    VALUES (\(outcome.deliveryID), \(outcome.attempt), \(outcome.at.milliseconds), \(outcome.status), \(outcome.error), \(outcome.milliseconds))
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
                if outcome.status == 410 {
                    try await Self.setEnabled(
                        c, outcome.webhookID, false, reason: "the endpoint answered 410 Gone at \(outcome.at.ISO8601Format())", now: now, logger: logger)
                }
            }
        }
    }

    public func forgetDeliveries(finishedBefore cutoff: Date) async throws -> Int {
        try await database.client.query(
            "DELETE FROM webhook_delivery WHERE state <> 'pending' AND finished_at < \(cutoff.milliseconds) RETURNING id", logger: logger
        ).collect().count
    }

    // MARK: What administrators see of deliveries

    public func deliveries(of webhook: Int64, state: DeliveryState?, before: Int64?, limit: Int) async throws -> [Delivery] {
        try await database.client.withConnection { c in
            guard try await Self.fetch(c, id: webhook, logger: logger) != nil else { throw WebhookNotFound(id: webhook) }
            let rows = try await c.query(
                """
                SELECT id, change_seq, action, state, attempts, next_at, last_status, last_error, created_at, finished_at
                FROM webhook_delivery WHERE webhook_id = \(webhook) AND id < \(before ?? Int64.max)
                  AND (\(state?.rawValue)::text IS NULL OR state = \(state?.rawValue)) ORDER BY id DESC LIMIT \(limit)
                """, logger: logger
            ).collect()
            var deliveries: [Delivery] = []
            for row in rows {
                let (id, seq, action, state, attempts, next, status, error, created, finished) = try row.decode(
                    (Int64, Int64, String, String, Int, Int64?, Int?, String?, Int64, Int64?).self)
                let tries = try await c.query(
                    "SELECT number, at, status, error, duration_ms FROM webhook_attempt WHERE delivery_id = \(id) ORDER BY number", logger: logger
                ).collect().map { a in
                    let (number, at, status, error, ms) = try a.decode((Int, Int64, Int?, String?, Int64).self)
                    return Delivery.Attempt(number: number, at: Date(milliseconds: at), status: status, error: error, milliseconds: ms)
                }
                deliveries.append(Delivery(
                    id: id, changeSeq: seq, type: ReportAction(rawValue: action).map(ChangeType.init), state: DeliveryState(rawValue: state) ?? .pending,
                    attemptCount: attempts, nextAt: next.map(Date.init(milliseconds:)), lastStatus: status, lastError: error,
                    createdAt: Date(milliseconds: created), finishedAt: finished.map(Date.init(milliseconds:)), attempts: tries))
            }
            return deliveries
        }
    }
}
