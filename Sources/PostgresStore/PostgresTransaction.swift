import Foundation
import Geometry
import PostgresNIO
import ReportModel
import StorePorts

/// The steps of one write transaction on PostgreSQL (``PostgresReports/commit(_:)``): a
/// report's row, its history row and its change row go in together or not at all.
/// Every recorded write moves `updated_at` forward by at least a millisecond, so that it
/// is a version, as in the SQLite store.
struct PostgresTransaction: ReportTransaction {
    let session: WriteSession
    let reference: ReferenceData
    /// The reference codes' positions, made once by the store.
    let codes: ReferenceCodes

    func rows(_ query: PostgresQuery) throws -> [PostgresRow] { try session.rows(query) }

    func takeReportsWritten() -> [Int64] {
        defer { session.reportsWritten.removeAll() }
        return session.reportsWritten
    }
    func execute(_ query: PostgresQuery) throws { try session.execute(query) }

    // MARK: Reports

    func insert(_ draft: ReportDraft, filer: Int64?, author: Author, now: Date) throws -> Report {
        let id: Int64
        if let given = draft.id {
            id = given
        } else {
            guard session.lastID < ReportLimits.maxID else { throw ValidationError(field: "id", "every report number up to \(ReportLimits.maxID) is taken") }
            id = session.lastID + 1
        }
        let created = (draft.createdAt ?? now).milliseconds, updated = draft.updatedAt?.milliseconds ?? created
        let status = draft.status ?? reference.initialStatus
        let d = draft
        // Kept to the millisecond, as stored: the row is not read back.
        let report = Report(
            id: id, coordinate: d.coordinate, address: d.address, city: d.city, district: d.district, objectType: d.objectType,
            balanceHolder: d.balanceHolder, violator: d.violator, phones: d.phones, comment: d.comment, status: status,
            createdAt: Date(milliseconds: created), updatedAt: Date(milliseconds: updated))
        do {
            try session.file(report, filer: filer, author: author, at: now.milliseconds, givenID: draft.id != nil)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" && draft.id != nil {
            throw ValidationError(field: "id", "report \(id) already exists")
        }
        session.lastID = max(session.lastID, id)
        session.reportsWritten.append(id)
        return report
    }

    func report(_ id: Int64) throws -> Report? {
        try rows(Statements.report(id: id)).first.map(Rows.report)
    }

    func hidden(_ id: Int64) throws -> HiddenReport? {
        try rows(Statements.hidden(id: id)).first.map(Rows.hidden)
    }

    func filer(of id: Int64) throws -> Int64? {
        try rows(Statements.filer(of: id)).first?.decode(Int64.self)
    }

    func edit(_ id: Int64, to draft: ReportDraft, author: Author, now: Date) throws -> (before: Report, after: Report) {
        guard let before = try report(id) else { throw ReportNotFound(id: id) }
        var d = draft
        d.status = before.status
        try execute(
            """
            UPDATE report SET longitude = \(d.coordinate.longitude), latitude = \(d.coordinate.latitude), address = \(d.address), city = \(d.city),
                district = \(d.district), object_type = \(d.objectType), balance_holder = \(d.balanceHolder), violator = \(d.violator),
                phones = \(Rows.phoneText(d.phones)), comment = \(d.comment), updated_at = \(before.nextVersion(at: now))
            WHERE id = \(id)
            """)
        try record(id, .edited, author: author, at: now, changes: FieldChange.between(before, d))
        return (before, try report(id)!)
    }

    func setStatus(_ id: Int64, to status: String, note: String?, author: Author, now: Date) throws -> (before: Report, after: Report) {
        guard let before = try report(id) else { throw ReportNotFound(id: id) }
        return (before, try setStatus(of: before, to: status, note: note, author: author, now: now).after)
    }

    /// Moves a report read in this transaction to `status`; returns it as stored and the
    /// number of the step's history row.
    func setStatus(of before: Report, to status: String, note: String?, author: Author, now: Date) throws -> (after: Report, historySeq: Int64) {
        var after = before
        after.status = status
        after.updatedAt = Date(milliseconds: before.nextVersion(at: now))
        try execute("UPDATE report SET status = \(status), updated_at = \(after.updatedAt.milliseconds) WHERE id = \(before.id)")
        let seq = try record(before.id, .transition, author: author, at: now, from: before.status, to: status, note: note)
        return (after, seq)
    }

    /// The columns a report keeps when it moves between `report` and `report_hidden`.
    private static let movedColumns = "id, longitude, latitude, address, city, district, object_type, balance_holder, violator, phones, comment, status, created_at"

    func hide(_ id: Int64, note: String, author: Author, now: Date) throws -> Report {
        guard let before = try report(id) else { throw ReportNotFound(id: id) }
        try execute(
            """
            WITH moved AS (DELETE FROM report WHERE id = \(id) RETURNING *)
            INSERT INTO report_hidden (\(unescaped: Self.movedColumns), updated_at, hidden_at, hide_note)
            SELECT \(unescaped: Self.movedColumns), \(before.nextVersion(at: now)), \(now.milliseconds), \(note) FROM moved
            """)
        try record(id, .hidden, author: author, at: now, note: note)
        return before
    }

    func unhide(_ id: Int64, note: String?, author: Author, now: Date) throws -> Report {
        guard let hidden = try hidden(id) else { throw ReportNotFound(id: id) }
        try execute(
            """
            WITH moved AS (DELETE FROM report_hidden WHERE id = \(id) RETURNING *)
            INSERT INTO report (\(unescaped: Self.movedColumns), updated_at)
            SELECT \(unescaped: Self.movedColumns), \(hidden.report.nextVersion(at: now)) FROM moved
            """)
        try record(id, .unhidden, author: author, at: now, note: note)
        return try report(id)!
    }

    func delete(_ id: Int64, author: Author, now: Date) throws -> Report {
        guard let before = try report(id) ?? hidden(id)?.report else { throw ReportNotFound(id: id) }
        try execute(
            """
            WITH a AS (DELETE FROM report WHERE id = \(id)), b AS (DELETE FROM report_hidden WHERE id = \(id)),
                 c AS (DELETE FROM report_filer WHERE report_id = \(id))
            DELETE FROM report_photo WHERE report_id = \(id)
            """)
        try record(id, .deleted, author: author, at: now)
        return before
    }

    // MARK: History and changes

    /// Appends the history row and the numbered change row of a write, in one statement;
    /// returns the history row's number.
    @discardableResult
    func record(
        _ id: Int64, _ action: ReportAction, author: Author, at now: Date,
        from: String? = nil, to: String? = nil, note: String? = nil, changes: [FieldChange] = []
    ) throws -> Int64 {
        let at = now.milliseconds
        let changesText = changes.isEmpty ? nil : String(decoding: try JSONEncoder().encode(changes), as: UTF8.self)
        session.reportsWritten.append(id)
        return try rows(
            """
            WITH h AS (
                INSERT INTO report_history (report_id, at, account_id, api_key_id, action, from_status, to_status, note, changes)
                VALUES (\(id), \(at), \(author.accountID), \(author.apiKeyID), \(action.rawValue), \(from), \(to), \(note), \(changesText))
                RETURNING seq)
            INSERT INTO report_change (seq, report_id, action, at, history_seq)
            SELECT \(session.nextChange()), \(id), \(action.rawValue), \(at), h.seq FROM h RETURNING history_seq
            """)[0].decode(Int64.self)
    }

    // MARK: Idempotency keys

    func storedAnswer(caller: String, key: String) throws -> StoredAnswer? {
        try rows(Statements.storedAnswer(caller: caller, key: key)).first.map(Rows.storedAnswer)
    }

    func store(_ answer: StoredAnswer, caller: String, key: String, now: Date) throws {
        let headers = String(decoding: try JSONEncoder().encode(answer.reply.headers), as: UTF8.self)
        try execute(
            """
            INSERT INTO idempotency_key (caller, key, fingerprint, status, headers, answer, created_at)
            VALUES (\(caller), \(key), \(answer.fingerprint), \(answer.reply.status), \(headers), \(answer.reply.body), \(now.milliseconds))
            """)
    }

    // MARK: Phones

    func phoneStatus(_ number: String) throws -> PhoneStatus {
        try Statements.phoneStatuses(rows(Statements.phoneStatuses([number])), of: [number])[number] ?? .unverified
    }

    func knows(phone number: String) throws -> Bool {
        try rows(
            """
            SELECT EXISTS (SELECT 1 FROM report_phone WHERE phone = \(number))
                OR EXISTS (SELECT 1 FROM report_hidden WHERE string_to_array(phones, ';') @> ARRAY[\(number)])
                OR EXISTS (SELECT 1 FROM phone WHERE number = \(number))
            """)[0].decode(Bool.self)
    }

    @discardableResult
    func setPhoneStatus(
        _ number: String, to status: PhoneStatus, action: PhoneAction, note: String?, moved: Int, author: Author, now: Date
    ) throws -> PhoneHistoryEntry {
        let from = try phoneStatus(number)
        let at = now.milliseconds
        let blockedAt: Int64? = status == .blocked ? at : nil
        if action.setsStatus {
            try execute(
                """
                INSERT INTO phone (number, status, changed_at, blocked_at) VALUES (\(number), \(status.rawValue), \(at), \(blockedAt))
                ON CONFLICT (number) DO UPDATE SET status = excluded.status, changed_at = excluded.changed_at, blocked_at = excluded.blocked_at
                """)
        }
        let seq = try rows(
            """
            WITH h AS (
                INSERT INTO phone_history (number, at, account_id, api_key_id, action, from_status, to_status, note, moved)
                VALUES (\(number), \(at), \(author.accountID), \(author.apiKeyID), \(action.rawValue), \(from.rawValue), \(status.rawValue), \(note), \(moved))
                RETURNING seq)
            INSERT INTO report_change (seq, report_id, action, at, history_seq, phone)
            SELECT \(session.nextChange()), 0, \(action.change.rawValue), \(at), h.seq, \(number) FROM h RETURNING history_seq
            """)[0].decode(Int64.self)
        return PhoneHistoryEntry(
            seq: seq, number: number, at: Date(milliseconds: at), author: author, action: action, fromStatus: from, toStatus: status, note: note, moved: moved)
    }

    func reports(carrying number: String, status: String) throws -> [Report] {
        try Rows.reports(rows(
            """
            SELECT \(unescaped: Rows.reportColumns) FROM report
            WHERE id IN (SELECT report_id FROM report_phone WHERE phone = \(number) AND status = \(status)) ORDER BY id
            """))
    }

    func blockedNumbers(among numbers: some Collection<String>) throws -> Set<String> {
        guard !numbers.isEmpty else { return [] }
        return Set(try rows("SELECT number FROM phone WHERE status = 'blocked' AND number = ANY(\(Array(numbers)))").map { try $0.decode(String.self) })
    }

    func moveForPhone(_ report: Report, to status: String, note: String, author: Author, now: Date) throws -> (after: Report, historySeq: Int64) {
        try setStatus(of: report, to: status, note: note, author: author, now: now)
    }

    func rememberBlockMoves(_ moves: [(reportID: Int64, historySeq: Int64)]) throws {
        guard !moves.isEmpty else { return }
        try execute(
            """
            INSERT INTO phone_block_move (report_id, history_seq) SELECT * FROM unnest(\(moves.map(\.reportID))::bigint[], \(moves.map(\.historySeq))::bigint[])
            ON CONFLICT (report_id) DO UPDATE SET history_seq = excluded.history_seq
            """)
    }

    func movedByBlock(_ ids: [Int64]) throws -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return Set(try rows(
            """
            SELECT m.report_id FROM phone_block_move m
            WHERE m.report_id = ANY(\(ids))
              AND m.history_seq = (SELECT max(h.seq) FROM report_history h WHERE h.report_id = m.report_id AND h.action = 'transition')
            """).map { try $0.decode(Int64.self) })
    }

    func forgetBlockMoves(_ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        try execute("DELETE FROM phone_block_move WHERE report_id = ANY(\(ids))")
    }

    // MARK: Photos' rows and notifications

    func addPhoto(to id: Int64, sha256: String, width: Int, height: Int, bytes: Int, author: Author, now: Date) throws -> (photo: PhotoRow, added: Bool) {
        let photos = try rows(Statements.photos(of: id)).map(Rows.photo)
        if let existing = photos.first(where: { $0.sha256 == sha256 }) { return (existing, false) }
        guard photos.count < PhotoRow.maxPerReport else { throw PhotoLimitReached(id: id, limit: PhotoRow.maxPerReport) }
        let photoID = try rows(
            """
            INSERT INTO report_photo (report_id, sha256, width, height, bytes, created_at, account_id)
            VALUES (\(id), \(sha256), \(width), \(height), \(bytes), \(now.milliseconds), \(author.accountID)) RETURNING id
            """)[0].decode(Int64.self)
        try touch(id, .photoAdded, now: now)
        return (PhotoRow(id: photoID, reportID: id, sha256: sha256, width: width, height: height, bytes: bytes, createdAt: Date(milliseconds: now.milliseconds)), true)
    }

    func ensurePhotoRoom(on id: Int64) throws {
        guard try rows(Statements.photos(of: id)).count < PhotoRow.maxPerReport else { throw PhotoLimitReached(id: id, limit: PhotoRow.maxPerReport) }
    }

    func removePhoto(_ photoID: Int64, of id: Int64, now: Date) throws -> PhotoRow {
        guard let photo = try rows(Statements.photos(of: id)).map(Rows.photo).first(where: { $0.id == photoID }) else {
            throw PhotoNotFound(reportID: id, photoID: photoID)
        }
        try execute("DELETE FROM report_photo WHERE id = \(photoID)")
        try touch(id, .photoRemoved, now: now)
        return photo
    }

    /// Moves the report's version forward and numbers the change (a photo's: no history row).
    private func touch(_ id: Int64, _ action: ReportAction, now: Date) throws {
        let at = now.milliseconds
        session.reportsWritten.append(id)
        try execute(
            """
            WITH a AS (UPDATE report SET updated_at = greatest(\(at), updated_at + 1) WHERE id = \(id)),
                 b AS (UPDATE report_hidden SET updated_at = greatest(\(at), updated_at + 1) WHERE id = \(id))
            INSERT INTO report_change (seq, report_id, action, at) VALUES (\(session.nextChange()), \(id), \(action.rawValue), \(at))
            """)
    }

    func markNotificationsRead(of account: Int64, upTo seq: Int64) throws -> (readUpTo: Int64, unread: Int) {
        let upTo = try rows(
            """
            INSERT INTO notification_read (account_id, up_to) VALUES (\(account), least(\(seq), (SELECT last FROM change_counter)))
            ON CONFLICT (account_id) DO UPDATE SET up_to = greatest(notification_read.up_to, excluded.up_to) RETURNING up_to
            """)[0].decode(Int64.self)
        return (upTo, try rows(Statements.unreadCount(of: account, upTo: upTo))[0].decode(Int.self))
    }

    // MARK: Following

    func changes(after seq: Int64, limit: Int) throws -> [ChangeRow] {
        try rows(Statements.changes(after: seq, limit: limit)).map(Rows.change)
    }

    func prunedThrough() throws -> Int64 {
        try rows("SELECT pruned_through FROM change_counter")[0].decode(Int64.self)
    }

    func markers<Marker>(ids: some Collection<Int64>, _ make: MarkerMaker<Marker>) throws -> [Marker] {
        guard !ids.isEmpty else { return [] }
        return try rows("SELECT \(unescaped: Rows.markerColumns) FROM report WHERE id = ANY(\(Array(ids)))").map { try Rows.marker($0, codes.statuses, make) }
    }

    func tallyMarkers(ids: some Collection<Int64>) throws -> [TallyMarker] {
        guard !ids.isEmpty else { return [] }
        return try rows("SELECT \(unescaped: Rows.tallyColumns) FROM report WHERE id = ANY(\(Array(ids)))").compactMap { try Rows.tally($0, codes) }
    }
}
