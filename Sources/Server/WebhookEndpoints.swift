import Accounts
import ReportModel
import Webhooks

/// The endpoints of webhooks (`WebhookRoutes.swift`), in the table of `Endpoints.swift`.
/// Administrators only: an endpoint may point at any address the server reaches,
/// internal ones included.
extension Endpoint {
    static let webhookID = Parameter(
        name: "id", location: .path, required: true, description: "The webhook's id.",
        schema: ["type": "integer", "minimum": 1, "maximum": 9_007_199_254_740_991])

    static let webhooks = Endpoint(
        path: "/v1/webhooks", summary: "The registered webhooks, in id order (administrators).", parameters: [], answers: ["application/json"],
        answerDescription: "`{webhooks: [{id, url, events, description, enabled, disabled_reason, created_at, updated_at}]}`; never their secrets.",
        answerSchema: "Webhooks", access: .role(.admin))
    static let createWebhook = Endpoint(
        path: "/v1/webhooks",
        summary: "Register an endpoint that receives changes as Standard Webhooks (administrators). The server posts `{type, timestamp, data}` (data: the change as staff see it in /v1/changes) signed with `webhook-id`, `webhook-timestamp` and `webhook-signature`; retries back off from 5 s to 24 h; a 410 Gone disables the endpoint. The URL may be any http or https address the server reaches, internal ones included: that is why only administrators may register one.",
        parameters: [], answers: ["application/json"],
        answerDescription: "The webhook with its `secret` (`whsec_` and base64), shown this once.", answerSchema: "NewWebhook",
        method: .post, access: .role(.admin), requestBody: "WebhookRegistration", success: .created)
    static let webhook = Endpoint(
        path: "/v1/webhooks/{id}", summary: "One webhook (administrators).", parameters: [webhookID], answers: ["application/json"],
        answerDescription: "The webhook, without its secret.", answerSchema: "Webhook", access: .role(.admin))
    static let updateWebhook = Endpoint(
        path: "/v1/webhooks/{id}",
        summary: "Change a webhook's URL, events or description, or disable or enable it (administrators). Enabling sends the deliveries that were pending when it was disabled; changes made while it was disabled are not sent to it.",
        parameters: [webhookID], answers: ["application/json"], answerDescription: "The webhook as it is now.", answerSchema: "Webhook",
        method: .patch, access: .role(.admin), requestBody: "WebhookPatch")
    static let deleteWebhook = Endpoint(
        path: "/v1/webhooks/{id}", summary: "Delete a webhook and its deliveries (administrators).", parameters: [webhookID], answers: [],
        answerDescription: "The webhook is deleted.", method: .delete, access: .role(.admin), success: .noContent)
    static let webhookDeliveries = Endpoint(
        path: "/v1/webhooks/{id}/deliveries",
        summary: "A webhook's deliveries, newest first, with every attempt's time and status code and the next try (administrators). Finished deliveries are kept 30 days.",
        parameters: [
            webhookID, limit(default: 50, max: WebhookRoutes.maxPage),
            Parameter(name: "before", description: "The cursor: only deliveries with ids below this one (`next` of the previous page).",
                      schema: ["type": "integer", "minimum": 1, "maximum": .int(Int(Int64.max))]),
            Parameter(name: "state", description: "Only deliveries in this state.", schema: ["type": "string", "enum": .array(DeliveryState.allCases.map { .string($0.rawValue) })]),
        ],
        answers: ["application/json"],
        answerDescription: "`{deliveries: [{id, seq, type, state, attempt_count, next_at, last_status, last_error, created_at, finished_at, attempts: [{number, at, status, error, duration_ms}]}], next}`.",
        answerSchema: "Deliveries", access: .role(.admin))
}
