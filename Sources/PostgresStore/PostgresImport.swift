import Foundation
import NIOCore
import PostgresNIO
import ReportModel
import StorePorts

/// The bulk path: records checked by the rules every store shares (``ImportAdmission``)
/// and streamed into `report` with COPY, in one transaction that holds the writers' lock
/// (the counter's row) throughout: all of them or, when one is refused and
/// ``ImportOptions/skipInvalid`` is off, none. Into an empty table the indexes are built
/// after the rows, whole.
extension PostgresReports {
    public func importRecords(
        options: ImportOptions, now: Date, next: () throws -> [DraftRecord]?, progress: (Int) -> Void
    ) async throws -> ImportSummary {
        let connection = try await database.connect()
        do {
            let summary = try await importRecords(on: connection, options: options, now: now, next: next, progress: progress)
            try await connection.query("COMMIT", logger: logger)
            try? await connection.close()
            return summary
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            try? await connection.close()
            throw error
        }
    }

    private func importRecords(
        on c: PostgresConnection, options: ImportOptions, now: Date, next: () throws -> [DraftRecord]?, progress: (Int) -> Void
    ) async throws -> ImportSummary {
        try await c.query("BEGIN", logger: logger)
        // The writers' lock first; then, in a statement of its own, the numbers as of every
        // commit before it (see ``WriteSession/begin()``).
        let lastChange = try await c.query("SELECT last FROM change_counter FOR UPDATE", logger: logger).collect()[0].decode(Int64.self)
        let lastID = try await c.query(
            "SELECT greatest(last_id, (SELECT coalesce(max(id), 0) FROM report)) FROM report_sequence", logger: logger
        ).collect()[0].decode(Int64.self)
        var admission = ImportAdmission(options: options, reference: reference, lastID: lastID)
        var summary = ImportSummary()
        // Into an empty table the secondary indexes and foreign keys are dropped and made
        // whole after the rows (17 s against 29 s for a million). Dropping takes the
        // table's exclusive lock to the commit, which readers of an empty table lose nothing by.
        let rebuilt = try await Self.isEmpty(c, logger: logger) ? try await Self.dropIndexes(c, logger: logger) : []
        var done = 0
        let start = Date()
        let initialStatus = reference.initialStatus
        try await c.copyFrom(table: "report", columns: Self.copyColumns, logger: logger) { writer in
            while let batch = try next() {
                // The ids the batch gives, those the store holds (public or hidden).
                let given = batch.compactMap { try? $0.draft.get().id }
                // (On another connection, as this one is copying: into an empty table,
                // whose lock this transaction holds, only the hidden ones can be taken.)
                let taken = given.isEmpty ? [] : Set(try await database.client.query(
                    rebuilt.isEmpty
                        ? "SELECT id FROM report WHERE id = ANY(\(given)) UNION ALL SELECT id FROM report_hidden WHERE id = ANY(\(given))"
                        : "SELECT id FROM report_hidden WHERE id = ANY(\(given))", logger: logger
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
        try admission.check()
        summary.tableSeconds = Date().timeIntervalSince(start)
        if !rebuilt.isEmpty {
            summary.rebuiltIndexes = true
            try await c.query("SET LOCAL maintenance_work_mem = '1GB'", logger: logger)
            for (name, definition) in rebuilt {
                let built = Date()
                try await c.query(PostgresQuery(unsafeSQL: definition), logger: logger)
                let seconds = Date().timeIntervalSince(built)
                switch name {
                case "report_search", "report_phone": summary.searchIndexSeconds += seconds
                case "report_position": summary.rtreeSeconds += seconds
                default: summary.secondaryIndexSeconds += seconds
                }
            }
        }
        summary.skipped = admission.issueCount
        summary.issues = admission.issues
        var last = lastChange
        if summary.imported > 0 && options.marksDataSetChanged {
            // One change says the data set changed: a server on this database rebuilds its
            // index, and feed readers start again from a snapshot.
            last += 1
            try await c.query(
                "INSERT INTO report_change (seq, report_id, action, at) VALUES (\(last), 0, \(ReportAction.imported.rawValue), \(Date().milliseconds))",
                logger: logger)
        }
        try await c.query(
            """
            WITH c AS (UPDATE change_counter SET last = \(last)), s AS (UPDATE report_sequence SET last_id = greatest(last_id, \(admission.lastID)))
            SELECT pg_notify(\(CommitSignal.channel), \(String(last)))
            """, logger: logger)
        return summary
    }

    private static func isEmpty(_ c: PostgresConnection, logger: Logger) async throws -> Bool {
        try await c.query("SELECT NOT EXISTS (SELECT 1 FROM report)", logger: logger).collect()[0].decode(Bool.self)
    }

    /// Drops the report table's indexes but its key, and its foreign keys (checked row by
    /// row they cost two thirds of a load; put back, they check the table in one join);
    /// turns off the trigger that keeps `report_phone` and drops that table's key. Returns
    /// each one's name and the statements that make it again (from the catalogue), the
    /// phones' table first.
    private static func dropIndexes(_ c: PostgresConnection, logger: Logger) async throws -> [(name: String, definition: String)] {
        let trigger = PostgresSchema.reportPhoneTrigger
        try await c.query(PostgresQuery(unsafeSQL: "ALTER TABLE report DISABLE TRIGGER \(trigger)"), logger: logger)
        try await c.query("TRUNCATE report_phone", logger: logger)
        try await c.query("ALTER TABLE report_phone DROP CONSTRAINT report_phone_pkey", logger: logger)
        let phones = [
            (name: "report_phone", definition: "ALTER TABLE report ENABLE TRIGGER \(trigger)"),
            (name: "report_phone", definition: PostgresSchema.fillReportPhone),
            (name: "report_phone", definition: "ALTER TABLE report_phone ADD PRIMARY KEY (phone, report_id) INCLUDE (longitude, latitude, status)"),
        ]
        let indexes = try await c.query(
            """
            SELECT i.indexname, i.indexdef FROM pg_indexes i JOIN pg_index x ON x.indexrelid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass
            WHERE i.schemaname = current_schema() AND i.tablename = 'report' AND NOT x.indisprimary ORDER BY i.indexname
            """, logger: logger
        ).collect().map { try $0.decode((String, String).self) }
        let foreignKeys = try await c.query(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'report'::regclass AND contype = 'f' ORDER BY conname",
            logger: logger
        ).collect().map { try $0.decode((String, String).self) }
        for (name, _) in indexes { try await c.query(PostgresQuery(unsafeSQL: "DROP INDEX \(name)"), logger: logger) }
        for (name, _) in foreignKeys { try await c.query(PostgresQuery(unsafeSQL: "ALTER TABLE report DROP CONSTRAINT \(name)"), logger: logger) }
        return phones + indexes.map { (name: $0.0, definition: $0.1) }
            + foreignKeys.map { (name: $0.0, definition: "ALTER TABLE report ADD CONSTRAINT \($0.0) \($0.1)") }
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
