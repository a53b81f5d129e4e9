import Foundation
import ReportModel

/// Where webhook endpoints, what they subscribe to, and their outbox of deliveries are
/// kept. The webhook service (`Webhooks`) registers endpoints and sends the outbox.
///
/// Requirements every store meets (the conformance suite checks them):
/// - **The outbox is written with the change**: every change of a type an enabled or
///   disabled endpoint subscribes to gets a pending delivery for that endpoint in the
///   transaction of the change itself, whichever process makes it.
/// - **A delivery is taken by one dispatcher at a time**: ``claim(_:payloads:until:)``
///   takes a delivery only while it is pending and still due as read, so of two
///   dispatchers claiming it one gets it; the other leaves it out. A taken delivery is due
///   again when its lease ends, so one whose dispatcher died is sent again.
/// - **A payload is written once**, before the first attempt, and every retry sends it.
/// - **An outcome is recorded once**: an attempt settles its delivery only if nobody
///   settled that attempt before; a 410 Gone disables the endpoint, whose pending
///   deliveries then wait, without a time, until it is enabled again.
public protocol WebhookStorage: Sendable {
    // MARK: Endpoints

    /// Adds an endpoint with its signing key; ``TooManyWebhooks`` past `limit`.
    func registerWebhook(_ draft: WebhookDraft, key: Data, limit: Int, now: Date) async throws -> Webhook
    func webhook(id: Int64) async throws -> Webhook?
    /// Every endpoint, in id order.
    func webhooks() async throws -> [Webhook]
    /// ``WebhookNotFound`` for an unknown id.
    func updateWebhook(_ id: Int64, _ patch: WebhookPatch, now: Date) async throws -> Webhook
    /// Deletes an endpoint with its deliveries; ``WebhookNotFound`` for an unknown id.
    func deleteWebhook(_ id: Int64) async throws

    // MARK: The outbox

    /// Pending deliveries due by `now` to enabled endpoints, soonest first: at most
    /// `perEndpoint` of any one endpoint, and none of the endpoints in `excluding` (those
    /// whose attempts already fill their share of a dispatcher).
    func due(now: Date, limit: Int, perEndpoint: Int, excluding: Set<Int64>) async throws -> [DueDelivery]
    /// Takes deliveries until `leaseEnd`, writing each payload not yet written; those
    /// another dispatcher took first are left out. Each one taken comes back with its
    /// payload as stored.
    func claim(_ deliveries: [DueDelivery], payloads: [Int64: Data], until leaseEnd: Date) async throws -> [DueDelivery]
    /// Writes the outcome of attempts: each attempt's row, and its delivery done, given up
    /// or due again; an endpoint that answered 410 Gone is disabled.
    func record(_ outcomes: [AttemptOutcome], now: Date) async throws
    /// How many deliveries are still to be made.
    func backlog() async throws -> Int
    /// Whether any endpoint is enabled.
    func anyEnabled() async throws -> Bool
    /// When the next pending delivery of an enabled endpoint not in `excluding` is due, if
    /// any is (a dispatcher leaves out the endpoints whose host has all the attempts in
    /// flight it may: their due deliveries must wait for an answer, not wake it).
    func nextDue(excluding: Set<Int64>) async throws -> Date?
    /// Forgets delivered and given-up deliveries finished before `cutoff`; how many.
    func forgetDeliveries(finishedBefore cutoff: Date) async throws -> Int
    /// An endpoint's deliveries, newest first, before the cursor (a delivery id), of one
    /// state when given, each with its attempts; ``WebhookNotFound`` for an unknown one.
    func deliveries(of webhook: Int64, state: DeliveryState?, before: Int64?, limit: Int) async throws -> [Delivery]
}

/// No more endpoints may be registered.
public struct TooManyWebhooks: Error, Sendable, Hashable, CustomStringConvertible {
    public var limit: Int
    public init(limit: Int) { self.limit = limit }
    public var description: String { "no more than \(limit) webhooks may be registered; delete one first" }
}

/// A pending delivery due now, with its endpoint's address and key.
public struct DueDelivery: Sendable {
    public var id: Int64
    public var webhookID: Int64
    public var changeSeq: Int64
    public var attempts: Int
    public var nextAt: Int64
    public var payload: Data?
    public var url: String
    public var key: Data

    public init(id: Int64, webhookID: Int64, changeSeq: Int64, attempts: Int, nextAt: Int64, payload: Data? = nil, url: String, key: Data) {
        self.id = id
        self.webhookID = webhookID
        self.changeSeq = changeSeq
        self.attempts = attempts
        self.nextAt = nextAt
        self.payload = payload
        self.url = url
        self.key = key
    }
}

/// How one attempt went, and what follows from it.
public struct AttemptOutcome: Sendable {
    public var deliveryID: Int64
    public var webhookID: Int64
    /// Its number (1 for the first).
    public var attempt: Int
    public var at: Date
    public var status: Int?
    public var error: String?
    public var milliseconds: Int64
    /// Where the delivery goes from here.
    public var state: DeliveryState
    /// When it is tried again, while pending.
    public var retryAt: Date?

    public init(deliveryID: Int64, webhookID: Int64, attempt: Int, at: Date, status: Int? = nil, error: String? = nil, milliseconds: Int64, state: DeliveryState, retryAt: Date? = nil) {
        self.deliveryID = deliveryID
        self.webhookID = webhookID
        self.attempt = attempt
        self.at = at
        self.status = status
        self.error = error
        self.milliseconds = milliseconds
        self.state = state
        self.retryAt = retryAt
    }
}

extension WebhookStorage {
    /// Pending deliveries due by `now` to enabled endpoints, soonest first.
    public func due(now: Date, limit: Int) async throws -> [DueDelivery] {
        try await due(now: now, limit: limit, perEndpoint: limit, excluding: [])
    }
}
