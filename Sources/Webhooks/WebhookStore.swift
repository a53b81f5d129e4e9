import ChangeFeed
import Foundation
import Geometry
import GRDB
import ReportModel
import ReportStore

/// The webhooks and their outbox in the database (tables `webhook`, `webhook_event`,
/// `webhook_delivery`, `webhook_attempt`): every read and write of them, SQL with bound
/// parameters only. The outbox rows themselves are written by a trigger on the changes
/// table, in the transaction of each change.
public struct WebhookStore: Sendable {
    let pool: DatabasePool

    /// The most endpoints: every change is written once for each endpoint that takes it.
    public static let maxWebhooks = 100

    public init(_ store: ReportStore) { pool = store.pool }

    // MARK: Endpoints

    /// Registers an endpoint with a new random key, returned this once.
    public func register(_ draft: WebhookDraft, now: Date) throws -> RegisteredWebhook {
        let key = WebhookSignature.newKey()
        return RegisteredWebhook(webhook: try create(draft, key: key, now: now), secret: WebhookSignature.secretText(key))
    }

    private func create(_ draft: WebhookDraft, key: Data, now: Date) throws -> Webhook {
        try pool.write { db in
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM webhook") ?? 0
            guard count < Self.maxWebhooks else {
                throw ValidationErrors([ValidationError(field: "url", "no more than \(Self.maxWebhooks) webhooks may be registered; delete one first")])
            }
            try db.execute(
                sql: "INSERT INTO webhook (url, description, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [draft.url, draft.description, key, now.milliseconds, now.milliseconds])
            let id = db.lastInsertedRowID
            try Self.subscribe(db, id, to: draft.events)
            return try Self.fetch(db, id: id)!
        }
    }

    public func webhook(id: Int64) throws -> Webhook? {
        try pool.read { db in try Self.fetch(db, id: id) }
    }

    /// Every endpoint, in id order (there are at most ``maxWebhooks``).
    public func list() throws -> [Webhook] {
        try pool.read { db in
            try Self.events(db, of: Row.fetchAll(db, sql: "SELECT \(Self.columns) FROM webhook ORDER BY id"))
        }
    }

    public func update(_ id: Int64, _ patch: WebhookPatch, now: Date) throws -> Webhook {
        try pool.write { db in
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

    /// Deletes an endpoint with its deliveries.
    public func delete(_ id: Int64) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM webhook WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw WebhookNotFound(id: id) }
        }
    }

    private static func subscribe(_ db: Database, _ id: Int64, to events: [ChangeType]) throws {
        for event in events {
            try db.execute(sql: "INSERT INTO webhook_event (action, webhook_id) VALUES (?, ?)", arguments: [event.action.rawValue, id])
        }
    }

    /// A disabled endpoint's pending deliveries wait without a time (those in flight get
    /// none when their attempt is recorded); enabling makes the waiting ones due, and
    /// leaves those in flight to their lease.
    static func setEnabled(_ db: Database, _ id: Int64, _ enabled: Bool, reason: String?, now: Date) throws {
        try db.execute(
            sql: "UPDATE webhook SET enabled = ?, disabled_reason = ?, updated_at = ? WHERE id = ?",
            arguments: [enabled, reason, now.milliseconds, id])
        if enabled {
            try db.execute(
                sql: "UPDATE webhook_delivery SET next_at = ? WHERE webhook_id = ? AND state = 'pending' AND next_at IS NULL",
                arguments: [now.milliseconds, id])
        } else {
            try db.execute(sql: "UPDATE webhook_delivery SET next_at = NULL WHERE webhook_id = ? AND state = 'pending'", arguments: [id])
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

    /// Pending deliveries due by `now`, soonest first, with what sending them takes.
    func due(now: Date, limit: Int) throws -> [DueDelivery] {
        try pool.read { db in
            try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT d.id, d.webhook_id, d.change_seq, d.attempts, d.next_at, d.payload, w.url, w.secret
                    FROM webhook_delivery d JOIN webhook w ON w.id = d.webhook_id
                    WHERE d.state = 'pending' AND d.next_at <= ? AND w.enabled ORDER BY d.next_at LIMIT ?
                    """),
                arguments: [now.milliseconds, limit]
            ).map { row in
                DueDelivery(
                    id: row[0], webhookID: row[1], changeSeq: row[2], attempts: row[3], nextAt: row[4], payload: row[5], url: row[6], key: row[7])
            }
        }
    }

    /// How many deliveries are still to be made (due, waiting for a retry, or held while
    /// their endpoint is disabled).
    public func backlog() throws -> Int {
        try pool.read { db in try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM webhook_delivery WHERE state = 'pending'")) ?? 0 }
    }

    /// Whether any endpoint is enabled.
    func anyEnabled() throws -> Bool {
        try pool.read { db in try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM webhook WHERE enabled)")) ?? false }
    }

    /// When the next pending delivery is due, if any is.
    func nextDue() throws -> Date? {
        try pool.read { db in
            try Int64.fetchOne(db.cachedStatement(sql: "SELECT min(next_at) FROM webhook_delivery WHERE state = 'pending'")).map(Date.init(milliseconds:))
        }
    }

    /// Takes deliveries for sending until `leaseEnd` (so that no other dispatcher sends them
    /// meanwhile, and one that dies with them in flight leaves them due again then),
    /// writing each payload not yet written. A delivery another dispatcher took first is
    /// left out; each one taken comes back with its payload as stored.
    func claim(_ deliveries: [DueDelivery], payloads: [Int64: Data], until leaseEnd: Date) throws -> [DueDelivery] {
        try pool.write { db in
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

    /// Writes the outcome of attempts: each attempt's row, and its delivery done, given up
    /// or due again; an endpoint that answered 410 Gone is disabled.
    func record(_ outcomes: [AttemptOutcome], now: Date) throws {
        guard !outcomes.isEmpty else { return }
        try pool.write { db in
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

    /// Forgets delivered and given-up deliveries finished before `cutoff`; returns how many.
    @discardableResult
    public func forgetDeliveries(finishedBefore cutoff: Date) throws -> Int {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM webhook_delivery WHERE state != 'pending' AND finished_at < ?", arguments: [cutoff.milliseconds])
            return db.changesCount
        }
    }

    // MARK: What administrators see of deliveries

    /// An endpoint's deliveries, newest first, before the cursor (a delivery id), of one
    /// state when given, each with its attempts.
    public func deliveries(of webhook: Int64, state: DeliveryState?, before: Int64?, limit: Int) throws -> [Delivery] {
        try pool.read { db in
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

/// Where a delivery stands.
public enum DeliveryState: String, Sendable, Hashable, CaseIterable {
    /// Not delivered yet: due at `next_at` (none while its endpoint is disabled).
    case pending
    /// A 2xx answered it.
    case delivered
    /// Given up: every attempt failed, or the endpoint answered 410 Gone.
    case failed
}

/// A delivery as administrators see it.
public struct Delivery: Sendable, Hashable {
    public struct Attempt: Sendable, Hashable {
        public var number: Int
        public var at: Date
        /// The HTTP status, when an answer came.
        public var status: Int?
        /// Why no answer came (refused, timed out), when none did.
        public var error: String?
        public var milliseconds: Int64
    }

    public var id: Int64
    public var changeSeq: Int64
    public var type: ChangeType?
    public var state: DeliveryState
    public var attemptCount: Int
    public var nextAt: Date?
    public var lastStatus: Int?
    public var lastError: String?
    public var createdAt: Date
    public var finishedAt: Date?
    public var attempts: [Attempt]
}

/// A pending delivery due now, with its endpoint's address and key.
struct DueDelivery: Sendable {
    var id: Int64
    var webhookID: Int64
    var changeSeq: Int64
    var attempts: Int
    var nextAt: Int64
    var payload: Data?
    var url: String
    var key: Data
}

/// How one attempt went, and what follows from it.
struct AttemptOutcome: Sendable {
    var deliveryID: Int64
    var webhookID: Int64
    /// Its number (1 for the first).
    var attempt: Int
    var at: Date
    var status: Int?
    var error: String?
    var milliseconds: Int64
    /// Where the delivery goes from here.
    var state: DeliveryState
    /// When it is tried again, while pending.
    var retryAt: Date?
}
