import Foundation
import GRDB

/// The schema's migrations in order, and how a database is brought to the last one.
///
/// Every pending migration runs in one transaction, so a migration that fails leaves the
/// file exactly as it was, however many were pending (GRDB's own migrator commits each
/// one on its own). The applied ones are listed in GRDB's `grdb_migrations` table, which
/// databases of earlier releases already have. A database that lists a migration this
/// release does not know was written by a newer release: it is refused before anything
/// is written to it.
struct Migrations {
    typealias Body = @Sendable (Database) throws -> Void
    private(set) var list: [(identifier: String, body: Body)] = []

    /// Appends a migration; the name is the key under which it is recorded once applied.
    mutating func registerMigration(_ identifier: String, migrate body: @escaping Body) {
        precondition(!list.contains { $0.identifier == identifier }, "a migration is registered twice: \(identifier)")
        list.append((identifier, body))
    }

    /// Throws ``SchemaFromNewerRelease`` when the database file at `path` (if there is one)
    /// lists a migration this release does not know. It reads the file read-only, before
    /// anything opens it for writing (which would switch its journal to WAL, a write).
    func refuseNewer(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        let applied = try queue.read { db in try db.tableExists("grdb_migrations") ? String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") : [] }
        let unknown = Set(applied).subtracting(list.map(\.identifier))
        guard unknown.isEmpty else { throw SchemaFromNewerRelease(unknown: unknown.sorted()) }
    }

    /// Applies every pending migration in one transaction, with foreign keys checked once
    /// all have run (a migration may rebuild a table that others refer to). Throws
    /// ``SchemaFromNewerRelease`` without writing, and rethrows a migration's error after
    /// rolling back all of them.
    func migrate(_ writer: any DatabaseWriter) throws {
        try writer.barrierWriteWithoutTransaction { db in
            let applied = try Set(db.tableExists("grdb_migrations") ? String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") : [])
            let unknown = applied.subtracting(list.map(\.identifier))
            guard unknown.isEmpty else { throw SchemaFromNewerRelease(unknown: unknown.sorted()) }
            let pending = list.filter { !applied.contains($0.identifier) }
            guard !pending.isEmpty else { return }
            // Outside the transaction: SQLite ignores this pragma inside one.
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
            try db.inTransaction(.immediate) {
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
                for migration in pending {
                    try migration.body(db)
                    try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [migration.identifier])
                }
                if let violation = try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") {
                    throw DatabaseError(resultCode: .SQLITE_CONSTRAINT_FOREIGNKEY, message: "a migration broke a foreign key: \(violation)")
                }
                return .commit
            }
        }
    }
}

/// A database written by a newer release: it lists migrations this release does not know.
public struct SchemaFromNewerRelease: Error, Sendable, CustomStringConvertible {
    /// The migrations it lists that this release does not know.
    public var unknown: [String]
    public var description: String {
        "it was written by a newer release of PosterWatch (its schema has \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")), which this release does not know); "
            + "it was left untouched: run the newer release, or restore a backup made with this one"
    }
}
