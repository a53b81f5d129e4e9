import Accounts
import ReportService
import ServiceLifecycle

/// Applies the account events that other processes write (``AccountService/followAccountEvents()``)
/// until the server shuts down.
struct AccountFollowing: Service {
    let accounts: AccountService
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown { await accounts.followAccountEvents(every: interval) }
    }
}

/// Keeps the cluster index and the tile cache in step with the writes other processes
/// make to the database (``ReportService/catchUp()``), until the server shuts down.
struct ChangeFollowing: Service {
    let service: ReportService
    let interval: Duration

    func run() async throws {
        await cancelWhenGracefulShutdown { await service.followChanges(every: interval) }
    }
}
