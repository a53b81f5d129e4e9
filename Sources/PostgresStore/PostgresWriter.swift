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
/// written back when it commits; and, while ``deferring``, the filings not yet sent
/// (``PendingFilings``), sent before any other statement and with the commit.
final class WriteSession {
    let connection: PostgresConnection
    let logger: Logger
    private(set) var lastChange: Int64 = 0
    var lastID: Int64 = 0
    /// The reports whose rows the steps wrote (``PostgresTransaction/takeReportsWritten()``).
    var reportsWritten: [Int64] = []
    private var start: (change: Int64, id: Int64) = (0, 0)
    private var pending = PendingFilings()
    /// Whether filings wait to be sent together. Off, each is sent when made, and its
    /// failure is its own.
    var deferring: Bool
    /// Whether sending deferred filings failed: which one failed is unknown, so the
    /// transaction is run again without deferring.
    private(set) var deferredFailed = false

    init(_ connection: PostgresConnection, logger: Logger, deferring: Bool) {
        self.connection = connection
        self.logger = logger
        self.deferring = deferring
    }

    /// Runs a statement and waits for its rows, the deferred filings first. The steps are
    /// synchronous by the port's design (they run on the group commit's writer thread):
    /// they wait on the future of the connection's event loop, which needs no thread of
    /// Swift's pool to complete.
    func rows(_ query: PostgresQuery) throws -> [PostgresRow] {
        try flush()
        if !query.sql.hasPrefix("SELECT") { dirty = true }
        return try send(query)
    }

    private func send(_ query: PostgresQuery) throws -> [PostgresRow] {
        do {
            return try connection.query(query, logger: logger).wait().rows
        } catch {
            dirty = true  // the transaction is aborted: only a rollback goes on from here
            throw error
        }
    }

    /// Whether a statement that may have changed rows ran (or one failed), or a filing was
    /// deferred, since this was last cleared: a write that then throws must be undone.
    var dirty = false

    func execute(_ query: PostgresQuery) throws { _ = try rows(query) }

    /// Files `report`, numbering its change: deferred, or sent now when not deferring or
    /// when its id was given (a taken id is then this filing's failure).
    func file(_ report: Report, filer: Int64?, author: Author, at: Int64, givenID: Bool) throws {
        let now = !deferring || givenID
        if now { try flush() }
        pending.append(report, filer: filer, author: author, at: at, change: nextChange())
        dirty = true
        if now { try sendPending(last: false) }
    }

    /// Sends the deferred filings (`last`: with the numbers written back); their failure
    /// marks the transaction to be run again.
    private func flush(last: Bool = false) throws {
        guard !pending.isEmpty else { return }
        do {
            try sendPending(last: last)
        } catch {
            deferredFailed = true
            throw error
        }
    }

    /// Sends the pending filings' statement; `last`: with the numbers written back.
    private func sendPending(last: Bool) throws {
        var query = pending.statement
        if last { writeBack(into: &query, leading: ", ") } else { query.sql += " SELECT NULL" }
        pending = PendingFilings()
        _ = try send(query)
    }

    /// Ends `query`, a statement's common table expressions, with the numbers written back
    /// and the listeners told.
    private func writeBack(into query: inout PostgresQuery, leading: String) {
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            query.binds.append(value)
            return "$\(query.binds.count)"
        }
        let (change, id, channel, payload) = (bind(lastChange), bind(lastID), bind(CommitSignal.channel), bind(String(lastChange)))
        query.sql += """
            \(leading)wc AS (UPDATE change_counter SET last = \(change)), ws AS (UPDATE report_sequence SET last_id = \(id))
            SELECT pg_notify(\(channel), \(payload))
            """
    }

    /// Begins, and takes the writers' lock: the counter's row, held to the commit.
    func begin() throws {
        try execute("BEGIN")
        // Two statements: after waiting for the lock, only the locked row is read afresh
        // by the statement that waited; the next statement sees every commit before it.
        let last = try rows("SELECT last FROM change_counter FOR UPDATE")[0].decode(Int64.self)
        start = (last, try rows("SELECT last_id FROM report_sequence")[0].decode(Int64.self))
        (lastChange, lastID) = start
        deferredFailed = false
    }

    /// Rolls back, the deferred filings dropped unsent.
    func rollback() throws {
        pending = PendingFilings()
        _ = try send("ROLLBACK")
    }

    /// The number of the next change.
    func nextChange() -> Int64 {
        lastChange += 1
        return lastChange
    }

    /// The change numbers given out since ``begin()``, if any: the transaction's own, as
    /// it holds the counter's row.
    var numbers: ChangeNumbers? {
        lastChange > start.change ? ChangeNumbers(after: start.change, through: lastChange) : nil
    }

    /// Sends the deferred filings with the numbers written back and the listeners told (one
    /// statement), and commits.
    func commit() throws {
        if !pending.isEmpty {
            try flush(last: true)
        } else if (lastChange, lastID) != start {
            var query = PostgresQuery(unsafeSQL: "WITH ")
            writeBack(into: &query, leading: "")
            _ = try send(query)
        }
        _ = try send("COMMIT")
    }
}

extension PostgresReports {
    /// Runs the writes in one transaction, committed once, and returns each one's outcome
    /// in order. Filings are deferred and sent together (``PendingFilings``). A write that
    /// throws before it has changed a row (a refused transition, a stale version) simply
    /// fails. One that throws after changing rows cannot be undone alone without a
    /// savepoint per write, a round trip each, so the transaction is rolled back and run
    /// again without it, as the SQLite store does; if deferred filings fail when sent, it
    /// is run again with each filing sent when made, to learn whose failure it was. If the
    /// transaction itself fails (the connection lost, the commit refused), every write
    /// fails with its error.
    public func commitNumbered<T>(_ writes: [(any ReportTransaction) throws -> T]) -> Committed<T> {
        var outcomes = [Result<T, any Error>?](repeating: nil, count: writes.count)
        var numbers: ChangeNumbers?
        var pending = Array(writes.indices)
        let reference = self.reference, codes = self.codes, logger = self.logger
        do {
            try writer.withConnection { connection in
                let session = WriteSession(connection, logger: logger, deferring: true)
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
                            do {
                                try session.commit()
                                numbers = session.numbers
                                return
                            } catch where session.deferredFailed {}
                        }
                        try session.rollback()
                    } catch {
                        try? session.rollback()
                        throw error
                    }
                    if session.deferredFailed {
                        // Again, each filing sent when made: every write's outcome is to be learned.
                        session.deferring = false
                        for i in pending { outcomes[i] = nil }
                        continue
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
        if numbers != nil { pendingList.wrote() }
        return Committed(outcomes: outcomes.map { $0! }, numbers: numbers)
    }
}
