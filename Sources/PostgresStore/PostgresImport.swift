import Foundation
import NIOCore
import PostgresNIO
import ReportModel
import StorePorts

/// The bulk path: records checked by the rules every store shares (``ImportAdmission``)
/// and streamed into `report` with COPY, in one transaction that holds the writers' lock
/// (the counter's row) throughout: all of them or, when one is refused and
/// ``ImportOptions/skipInvalid`` is off, none. Into an empty table the rows go into a
/// table beside it whose indexes are built whole, on two connections at once, and which
/// that transaction swaps in (``ReportTableSwap``).
extension PostgresReports {
    public func importRecords(
        options: ImportOptions, now: Date, next: () throws -> [DraftRecord]?, progress: (Int) -> Void
    ) async throws -> ImportSummary {
        let connection = try await database.connect()
        var loaders: [PostgresConnection] = []
        var swapping = false
        do {
            try await connection.query("BEGIN", logger: logger)
            // The writers' lock first; then, in a statement of its own, the numbers as of every
            // commit before it (see ``WriteSession/begin()``).
            let lastChange = try await connection.query("SELECT last FROM change_counter FOR UPDATE", logger: logger).collect()[0].decode(Int64.self)
            let lastID = try await connection.query(
                "SELECT greatest(last_id, (SELECT coalesce(max(id), 0) FROM report)) FROM report_sequence", logger: logger
            ).collect()[0].decode(Int64.self)
            var admission = ImportAdmission(options: options, reference: reference, lastID: lastID)
            var summary = ImportSummary()
            let swap = try await Self.isEmpty(connection, logger: logger) ? try await ReportTableSwap.plan(on: connection, logger: logger) : nil
            if let swap {
                swapping = true
                loaders = [try await database.connect(), try await database.connect()]
                try await swap.prepare(on: loaders[0], logger: logger)
                try await copy(
                    into: ReportTableSwap.stand(in: "report"), on: loaders[0], admission: &admission, options: options, now: now, next: next,
                    progress: progress, summary: &summary)
                try admission.check()
                try await build(swap, on: loaders, summary: &summary)
                try await swap.swap(on: connection, logger: logger)
                summary.rebuiltIndexes = true
            } else {
                try await copy(into: "report", on: connection, admission: &admission, options: options, now: now, next: next, progress: progress, summary: &summary)
                try admission.check()
            }
            summary.skipped = admission.issueCount
            summary.issues = admission.issues
            try await finish(on: connection, lastChange: lastChange, lastID: admission.lastID, summary: summary, options: options)
            try await connection.query("COMMIT", logger: logger)
            for c in [connection] + loaders { try? await c.close() }
            return summary
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            for c in [connection] + loaders { try? await c.close() }
            if swapping, let cleaner = try? await database.connect() {
                try? await ReportTableSwap.discardUnderLock(on: cleaner, logger: logger)
                try? await cleaner.close()
            }
            throw error
        }
    }

    /// Streams the admitted records into `table` with COPY on `c`.
    private func copy(
        into table: String, on c: PostgresConnection, admission: inout ImportAdmission, options: ImportOptions, now: Date,
        next: () throws -> [DraftRecord]?, progress: (Int) -> Void, summary: inout ImportSummary
    ) async throws {
        var done = 0
        let start = Date()
        let initialStatus = reference.initialStatus
        // Into a table beside an empty `report`, whose writers wait for this import's lock,
        // only the hidden reports can hold an id.
        let hiddenOnly = table != "report"
        try await c.copyFrom(table: table, columns: Self.copyColumns, logger: logger) { writer in
            while let batch = try next() {
                // The ids the batch gives, those the store holds (public or hidden), read on
                // another connection, as this one is copying.
                let given = batch.compactMap { try? $0.draft.get().id }
                let taken = given.isEmpty ? [] : Set(try await database.client.query(
                    hiddenOnly
                        ? "SELECT id FROM report_hidden WHERE id = ANY(\(given))"
                        : "SELECT id FROM report WHERE id = ANY(\(given)) UNION ALL SELECT id FROM report_hidden WHERE id = ANY(\(given))",
                    logger: logger
                ).collect().map { try $0.decode(Int64.self) })
                var lines = ByteBuffer()
                for record in batch {
                    guard let draft = admission.admit(record, taken: taken.contains) else { continue }
                    Self.appendLine(draft, initialStatus: initialStatus, now: now, to: &lines)
                    summary.imported += 1
                    if options.keepsIDs { summary.ids.append(draft.id!) }
                }
                if admission.keeps, lines.readableBytes > 0 { try await writer.write(lines) }
                done += batch.count
                progress(done)
            }
        }
        summary.tableSeconds = Date().timeIntervalSince(start)
    }

    /// Runs the swap's builds, each list on its own connection, at once.
    private func build(_ swap: ReportTableSwap, on loaders: [PostgresConnection], summary: inout ImportSummary) async throws {
        let logger = self.logger
        var spent = try await withThrowingTaskGroup(of: [(ReportTableSwap.Phase, Double)].self) { group in
            for (connection, builds) in zip(loaders, swap.builds) {
                group.addTask {
                    // Half of what one build had (1 GB) for each of the two.
                    try await connection.query("SET maintenance_work_mem = '512MB'", logger: logger)
                    var spent: [(ReportTableSwap.Phase, Double)] = []
                    for build in builds {
                        let start = Date()
                        try await connection.query(PostgresQuery(unsafeSQL: build.statement), logger: logger)
                        spent.append((build.phase, Date().timeIntervalSince(start)))
                    }
                    return spent
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        for build in swap.afterBuilds {
            let start = Date()
            try await loaders[1].query(PostgresQuery(unsafeSQL: build.statement), logger: logger)
            spent.append((build.phase, Date().timeIntervalSince(start)))
        }
        for (phase, seconds) in spent {
            switch phase {
            case .search: summary.searchIndexSeconds += seconds
            case .position: summary.rtreeSeconds += seconds
            case .secondary: summary.secondaryIndexSeconds += seconds
            }
        }
    }

    /// One change says the data set changed (a server on this database rebuilds its index,
    /// and feed readers start again from a snapshot), and the shared saved index is dropped;
    /// the counters move on and replicas are told.
    private func finish(on c: PostgresConnection, lastChange: Int64, lastID: Int64, summary: ImportSummary, options: ImportOptions) async throws {
        var last = lastChange
        if summary.imported > 0 {
            // The shared saved index is of the data set before (the lock: a share under way
            // commits first, and is dropped here, or waits and sees this import's change).
            try await c.query("SELECT pg_advisory_xact_lock(\(Self.sharingLock))", logger: logger)
            try await c.query("DELETE FROM saved_index_part", logger: logger)
            if options.marksDataSetChanged {
                last += 1
                try await c.query(
                    "INSERT INTO report_change (seq, report_id, action, at) VALUES (\(last), 0, \(ReportAction.imported.rawValue), \(Date().milliseconds))",
                    logger: logger)
            }
        }
        try await c.query(
            """
            WITH c AS (UPDATE change_counter SET last = \(last)), s AS (UPDATE report_sequence SET last_id = greatest(last_id, \(lastID)))
            SELECT pg_notify(\(CommitSignal.channel), \(String(last)))
            """, logger: logger)
    }

    private static func isEmpty(_ c: PostgresConnection, logger: Logger) async throws -> Bool {
        try await c.query("SELECT NOT EXISTS (SELECT 1 FROM report)", logger: logger).collect()[0].decode(Bool.self)
    }

    /// Whether `value` holds a backslash, tab, newline or carriage return (checked on its
    /// bytes: a generic `contains` took 7% of an import).
    static func needsEscape(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            for byte in bytes where byte == 0x5C || (byte <= 0x0D && (byte == 0x09 || byte == 0x0A || byte == 0x0D)) { return true }
            return false
        }
    }

    static let copyColumns = [
        "id", "longitude", "latitude", "address", "city", "district", "object_type", "balance_holder", "violator", "phones", "comment", "status",
        "created_at", "updated_at",
    ]

    /// One row in COPY's text format: tab-separated, `\N` for NULL, and the backslash,
    /// tab, newline and carriage return escaped.
    static func appendLine(_ d: ReportDraft, initialStatus: String, now: Date, to buffer: inout ByteBuffer) {
        func text(_ value: String?) {
            guard let value else {
                buffer.writeStaticString("\\N\t")
                return
            }
            // Most values need no escape: written whole (byte by byte, the lines took 40% of an import).
            if !Self.needsEscape(value) {
                buffer.writeString(value)
            } else {
                for byte in value.utf8 {
                    switch byte {
                    case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                    case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                    case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                    case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                    default: buffer.writeInteger(byte)
                    }
                }
            }
            buffer.writeStaticString("\t")
        }
        let created = (d.createdAt ?? now).milliseconds
        // Doubles in their shortest exact form: PostgreSQL reads them back to the same bits.
        buffer.writeString("\(d.id!)\t\(d.coordinate.longitude)\t\(d.coordinate.latitude)\t")
        text(d.address)
        text(d.city)
        text(d.district)
        text(d.objectType)
        text(d.balanceHolder)
        text(d.violator)
        text(Rows.phoneText(d.phones))
        text(d.comment)
        text(d.status ?? initialStatus)
        buffer.writeString("\(created)\t\(d.updatedAt?.milliseconds ?? created)\n")
    }
}
