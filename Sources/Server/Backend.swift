import Accounts
import ChangeFeed
import ReportService
import StorePorts
import Webhooks

/// The services the server answers from, over one database's stores: the server reaches
/// the stores only through them.
public struct Backend: Sendable {
    public let service: ReportService
    public let accounts: AccountService
    public let webhooks: WebhookService
    public let feed: ChangeFeed

    public init(service: ReportService, accounts: AccountService, webhooks: WebhookService, feed: ChangeFeed) {
        (self.service, self.accounts, self.webhooks, self.feed) = (service, accounts, webhooks, feed)
    }

    /// Opens the services over `stores`; the report service builds its index from them.
    public static func open(
        _ stores: Stores, intake: IntakeSettings? = nil, photoWorkers: Int? = nil, rowCacheSize: Int = 0, start: ReportService.IndexStart = .build
    ) async throws -> Backend {
        Backend(
            service: try await ReportService(storage: stores.reports, intake: intake, photoWorkers: photoWorkers, rowCacheSize: rowCacheSize, start: start),
            accounts: try await AccountService(storage: stores.accounts), webhooks: WebhookService(storage: stores.webhooks),
            feed: ChangeFeed(storage: stores.reports))
    }
}
