import Foundation
import Logging
import PostgresNIO
import ReportModel
import StorePorts

/// The connection the writes go through: one, kept open, one transaction at a time
/// (``PostgresReports/commit(_:)``). Reopened after it is lost.
final class PostgresWriter: @unchecked Sendable {
    private let database: PostgresDatabase
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var connection: PostgresConnection?

    init(_ database: PostgresDatabase) { self.database = database }

    /// Runs `body` holding the writer's connection, opened when needed.
    func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if connection?.isClosed ?? true {
            connection = try PostgresConnection.connect(
                on: PostgresConnection.defaultEventLoopGroup.any(), configuration: database.target, id: 1, logger: database.logger
            ).wait()
        }
        return try body(connection!)
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        // Held until closed: a connection must not go away while it closes.
        if let connection { connection.close().whenComplete { _ in _ = connection } }
        connection = nil
    }
}

/// One write transaction on the writer's connection, as its steps see it: the change and
/// report numbers it has handed out, kept in memory while it holds the counter's row and
/// written back when it commits.
final class WriteSession {
    let connection: PostgresConnection
    let logger: Logger
    private(set) var lastChange: Int64 = 0
    var lastID: Int64 = 0
    private var start: (change: Int64, id: Int64) = (0, 0)

    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Runs a statement and waits for its rows. The steps are synchronous by the port's
    /// design (they run on the group commit's writer thread): they wait on the future of
    /// the connection's event loop, which needs no thread of Swift's pool to complete.
    func rows(_ query: PostgresQuery) throws -> [PostgresRow] {
        if !query.sql.hasPrefix("SELECT") { dirty = true }
        do {
            return try connection.query(query, logger: logger).wait().rows
        } catch {
            dirty = true  // the transaction is aborted: only a rollback goes on from here
            throw error
        }
    }

    /// Whether a statement that may have changed rows ran (or one failed) since this was
    /// last cleared: a write that then throws must be undone.
    var dirty = false

    func execute(_ query: PostgresQuery) throws { _ = try rows(query) }

    /// Begins, and takes the writers' lock: the counter's row, held to the commit.
    func begin() throws {
        try execute("BEGIN")
        // Two statements: after waiting for the lock, only the locked row is read afresh
        // by the statement that waited; the next statement sees every commit before it.
        let last = try rows("SELECT last FROM change_counter FOR UPDATE")[0].decode(Int64.self)
        start = (last, try rows("SELECT last_id FROM report_sequence")[0].decode(Int64.self))
        (lastChange, lastID) = start
    }

    /// The number of the next change.
    func nextChange() -> Int64 {
        lastChange += 1
        return lastChange
    }

    /// Writes the numbers back, tells the listeners, and commits.
    func commit() throws {
        if (lastChange, lastID) != start {
            try execute(
                """
                WITH c AS (UPDATE change_counter SET last = \(lastChange)), s AS (UPDATE report_sequence SET last_id = \(lastID))
                SELECT pg_notify(\(CommitSignal.channel), \(String(lastChange)))
                """)
        }
        try execute("COMMIT")
    }
}

extension PostgresReports {
    /// Runs the writes in one transaction, committed once, and returns each one's outcome
    /// in order. A write that throws before it has changed a row (a refused transition, a
    /// stale version) simply fails. One that throws after changing rows cannot be undone
    /// alone without a savepoint per write, a round trip each (a fifth of a filing's), so
    /// the transaction is rolled back and run again without it, as the SQLite store does.
    /// If the transaction itself fails (the connection lost, the commit refused), every
    /// write fails with its error.
    public func commit<T>(_ writes: [(any ReportTransaction) throws -> T]) -> [Result<T, any Error>] {
        var outcomes = [Result<T, any Error>?](repeating: nil, count: writes.count)
        var pending = Array(writes.indices)
        let reference = self.reference, codes = self.codes, logger = self.logger
        do {
            try writer.withConnection { connection in
                let session = WriteSession(connection, logger: logger)
                while !pending.isEmpty {
                    var undone: Int?
                    do {
                        try session.begin()
                        let transaction = PostgresTransaction(session: session, reference: reference, codes: codes)
                        for i in pending {
                            session.dirty = false
                            do {
                                outcomes[i] = .success(try writes[i](transaction))
                            } catch {
                                outcomes[i] = .failure(error)
                                if session.dirty {
                                    undone = i
                                    break
                                }
                            }
                        }
                        if undone == nil {
                            try session.commit()
                            return
                        }
                        try session.execute("ROLLBACK")
                    } catch {
                        _ = try? session.execute("ROLLBACK")
                        throw error
                    }
                    // Again, without the write that failed halfway and those that failed outright.
                    pending = pending.filter { i in
                        if i == undone { return false }
                        if case .failure? = outcomes[i] { return false }
                        outcomes[i] = nil
                        return true
                    }
                }
            }
        } catch {
            for i in writes.indices {
                if case .failure? = outcomes[i] { continue }
                outcomes[i] = .failure(error)
            }
        }
        return outcomes.map { $0! }
    }
}
