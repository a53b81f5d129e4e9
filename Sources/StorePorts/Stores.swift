/// One database's stores, as `serve` and the commands open them from `--database`: the
/// report service, the account service and the webhooks each take theirs.
public struct Stores: Sendable {
    public var reports: any ReportStorage
    public var accounts: any AccountStorage
    public var webhooks: any WebhookStorage

    public init(reports: any ReportStorage, accounts: any AccountStorage, webhooks: any WebhookStorage) {
        (self.reports, self.accounts, self.webhooks) = (reports, accounts, webhooks)
    }
}
