import Foundation
import NIOCore
import PostgresNIO
import ReportModel
import StorePorts

/// The bulk path: records checked by the rules every store shares (``ImportAdmission``)
/// and streamed into `report` with COPY, in one transaction that holds the writers' lock
/// (the counter's row) throughout: all of them or, when one is refused and
/// ``ImportOptions/skipInvalid`` is off, none.
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
        var done = 0
        let start = Date()
        let initialStatus = reference.initialStatus
        try await c.copyFrom(table: "report", columns: Self.copyColumns, logger: logger) { writer in
            while let batch = try next() {
                // The ids the batch gives, those the store holds (public or hidden).
                let given = batch.compactMap { try? $0.draft.get().id }
                let taken = given.isEmpty ? [] : Set(try await database.client.query(
                    "SELECT id FROM report WHERE id = ANY(\(given)) UNION ALL SELECT id FROM report_hidden WHERE id = ANY(\(given))", logger: logger
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
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case UInt8(ascii: "\t"): buffer.writeStaticString("\\t")
                case UInt8(ascii: "\n"): buffer.writeStaticString("\\n")
                case UInt8(ascii: "\r"): buffer.writeStaticString("\\r")
                default: buffer.writeInteger(byte)
                }
            }
            buffer.writeStaticString("\t")
        }
        let created = (d.createdAt ?? now).milliseconds
        // Doubles in their shortest exact form: PostgreSQL reads them back to the same bits.
        buffer.writeString("\(d.id!)\t\(d.coordinate.longitude)\t\(d.coordinate.latitude)\t")
        for value in [d.address, d.city, d.district, d.objectType, d.balanceHolder, d.violator, Rows.phoneText(d.phones), d.comment, d.status ?? initialStatus] {
            text(value)
        }
        buffer.writeString("\(created)\t\(d.updatedAt?.milliseconds ?? created)\n")
    }
}
