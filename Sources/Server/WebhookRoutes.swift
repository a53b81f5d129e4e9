import Accounts
import Foundation
import Geometry
import Hummingbird
import Interchange
import Offloading
import ReportModel
import Webhooks

/// `/v1/webhooks`: administrators register, change and delete the endpoints that receive
/// changes, and read their deliveries. The dispatcher (``WebhookDispatcher``) sends them.
struct WebhookRoutes {
    let webhooks: WebhookService

    static let maxPage = 200

    func register(on router: Router<AppRequestContext>) {
        router.handle(.webhooks) { _, _, _, _ in
            try Responses.private(WebhookList(webhooks: try await webhooks.webhooks().map(WebhookView.init)))
        }
        router.handle(.createWebhook) { request, _, _, _ in
            let registered = try await webhooks.register(try await WebhookRegistration.read(request).draft)
            var response = try Responses.private(NewWebhook(registered), status: .created)
            response.headers[.location] = "/v1/webhooks/\(registered.webhook.id)"
            return response
        }
        router.handle(.webhook) { _, _, context, _ in
            let id = try Self.id(context)
            guard let webhook = try await webhooks.webhook(id: id) else { throw WebhookNotFound(id: id) }
            return try Responses.private(WebhookView(webhook))
        }
        router.handle(.updateWebhook) { request, _, context, _ in
            let id = try Self.id(context)
            return try Responses.private(WebhookView(try await webhooks.update(id, try await WebhookChange.read(request).patch)))
        }
        router.handle(.deleteWebhook) { _, _, context, _ in
            let id = try Self.id(context)
            try await webhooks.delete(id)
            return Response(status: .noContent)
        }
        router.handle(.webhookDeliveries) { _, query, context, _ in
            let id = try Self.id(context)
            let limit = try query.integer("limit", in: 1...Self.maxPage, default: 50)!
            let before = try query.integer("before", in: 1...Int(Int64.max)).map(Int64.init)
            let state = try query["state"].map { text throws(ValidationError) in
                guard let state = DeliveryState(rawValue: text) else {
                    throw ValidationError(field: "state", "must be one of \(DeliveryState.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text.prefix(40))\"")
                }
                return state
            }
            let found = try await webhooks.deliveries(of: id, state: state, before: before, limit: limit)
            return try Responses.private(DeliveryList(deliveries: found.map(DeliveryList.Item.init), next: found.count == limit ? found.last?.id : nil))
        }
    }

    static func id(_ context: AppRequestContext) throws(ValidationError) -> Int64 {
        let text = context.parameters.get("id") ?? ""
        guard let id = Int64(text), id >= 1 else { throw ValidationError(field: "id", "must be a webhook id, got \"\(text.prefix(40))\"") }
        return id
    }
}

/// A webhook as administrators see it (never its secret).
struct WebhookView: Encodable {
    var id: Int64
    var url: String
    var events: [String]
    var description: String
    var enabled: Bool
    var disabledReason: String?
    var createdAt: String
    var updatedAt: String

    init(_ webhook: Webhook) {
        (id, url, events, description, enabled, disabledReason) = (
            webhook.id, webhook.url, webhook.events.map(\.rawValue), webhook.description, webhook.enabled, webhook.disabledReason
        )
        createdAt = RFC3339.string(from: webhook.createdAt)
        updatedAt = RFC3339.string(from: webhook.updatedAt)
    }

    enum CodingKeys: String, CodingKey {
        case id, url, events, description, enabled, disabledReason = "disabled_reason", createdAt = "created_at", updatedAt = "updated_at"
    }
}

/// `POST /v1/webhooks`: the webhook and, this once, its secret.
struct NewWebhook: Encodable {
    var webhook: WebhookView
    var secret: String

    init(_ registered: RegisteredWebhook) {
        webhook = WebhookView(registered.webhook)
        secret = registered.secret
    }

    func encode(to encoder: any Encoder) throws {
        try webhook.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(secret, forKey: .secret)
    }

    enum CodingKeys: String, CodingKey { case secret }
}

struct WebhookList: Encodable {
    var webhooks: [WebhookView]
}

/// `GET /v1/webhooks/{id}/deliveries`.
struct DeliveryList: Encodable {
    struct Item: Encodable {
        struct Attempt: Encodable {
            var number: Int
            var at: String
            var status: Int?
            var error: String?
            var durationMs: Int64

            enum CodingKeys: String, CodingKey { case number, at, status, error, durationMs = "duration_ms" }
        }

        var id: Int64
        var seq: Int64
        var type: String?
        var state: String
        var attemptCount: Int
        var nextAt: String?
        var lastStatus: Int?
        var lastError: String?
        var createdAt: String
        var finishedAt: String?
        var attempts: [Attempt]

        init(_ d: Delivery) {
            (id, seq, type, state, attemptCount, lastStatus, lastError) = (d.id, d.changeSeq, d.type?.rawValue, d.state.rawValue, d.attemptCount, d.lastStatus, d.lastError)
            nextAt = d.nextAt.map { RFC3339.string(from: $0) }
            createdAt = RFC3339.string(from: d.createdAt)
            finishedAt = d.finishedAt.map { RFC3339.string(from: $0) }
            attempts = d.attempts.map { Attempt(number: $0.number, at: RFC3339.string(from: $0.at), status: $0.status, error: $0.error, durationMs: $0.milliseconds) }
        }

        enum CodingKeys: String, CodingKey {
            case id, seq, type, state, attemptCount = "attempt_count", nextAt = "next_at", lastStatus = "last_status", lastError = "last_error"
            case createdAt = "created_at", finishedAt = "finished_at", attempts
        }
    }

    var deliveries: [Item]
    var next: Int64?
}
