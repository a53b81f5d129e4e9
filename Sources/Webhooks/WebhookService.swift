import Foundation
import Geometry
import ReportModel
import StorePorts

/// The one door to webhook endpoints: registration (with a new signing key, shown this
/// once), changes, deletion, and what administrators see of the outbox. The dispatcher
/// (``WebhookDispatcher``) sends the outbox.
public struct WebhookService: Sendable {
    public let storage: any WebhookStorage

    /// The most endpoints: every change is written once for each endpoint that takes it.
    public static let maxWebhooks = 100

    public init(storage: any WebhookStorage) { self.storage = storage }

    /// Registers an endpoint with a new random key, returned this once.
    public func register(_ draft: WebhookDraft, now: Date = Date()) async throws -> RegisteredWebhook {
        let key = WebhookSignature.newKey()
        do {
            let webhook = try await storage.registerWebhook(draft, key: key, limit: Self.maxWebhooks, now: now)
            return RegisteredWebhook(webhook: webhook, secret: WebhookSignature.secretText(key))
        } catch let full as TooManyWebhooks {
            throw ValidationErrors([ValidationError(field: "url", full.description)])
        }
    }

    /// Every endpoint, in id order (there are at most ``maxWebhooks``).
    public func webhooks() async throws -> [Webhook] { try await storage.webhooks() }

    public func webhook(id: Int64) async throws -> Webhook? { try await storage.webhook(id: id) }

    public func update(_ id: Int64, _ patch: WebhookPatch, now: Date = Date()) async throws -> Webhook {
        try await storage.updateWebhook(id, patch, now: now)
    }

    /// Deletes an endpoint with its deliveries.
    public func delete(_ id: Int64) async throws { try await storage.deleteWebhook(id) }

    /// An endpoint's deliveries, newest first, before the cursor, of one state when given.
    public func deliveries(of webhook: Int64, state: DeliveryState?, before: Int64?, limit: Int) async throws -> [Delivery] {
        try await storage.deliveries(of: webhook, state: state, before: before, limit: limit)
    }

    /// How many deliveries are still to be made (due, waiting for a retry, or held while
    /// their endpoint is disabled).
    public func backlog() async throws -> Int { try await storage.backlog() }
}
