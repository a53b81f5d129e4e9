import SQLiteStore
import StorePorts
import Testing
import TestSupport

/// A store to hand the suite: its name, and a fresh, empty database's stores on each call
/// (with what keeps the database alive while a test runs).
struct StoreUnderTest: Sendable, CustomTestStringConvertible {
    let name: String
    let open: @Sendable () throws -> (stores: Stores, keep: AnyObject)
    var testDescription: String { name }

    /// Every store: SQLite now. The PostgreSQL store joins this list, unchanged suite and all.
    static let all = [
        StoreUnderTest(name: "SQLite") {
            let directory = try TemporaryDirectory()
            return (try Stores.sqlite(path: directory.path("test.sqlite")), directory)
        }
    ]
}
