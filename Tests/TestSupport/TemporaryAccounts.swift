import Accounts
import SQLiteStore

/// The account tables of a fresh store in a temporary directory, removed when the value
/// goes away.
public final class TemporaryAccounts {
    public let database: TemporaryStore
    /// The store's accounts, as the account service sees them.
    public let accounts: SQLiteAccounts

    public var store: SQLiteReports { database.store }

    public init() throws {
        database = try TemporaryStore()
        accounts = SQLiteAccounts(database.store)
    }
}
