import Foundation
import GRDB
import Geometry
import ReportModel
@testable import SQLiteStore
import StorePorts
import TestSupport

extension SQLiteReports {
    // Raw row writes, around the write transaction (no history, no change): what the
    // triggers must keep the indexes consistent with.

    /// Replaces the fields of report `id` by those of `draft` (its `id` is ignored). A
    /// missing `status` keeps the current one, a missing `createdAt` the current one, and
    /// `updatedAt` defaults to `now`. Returns the stored report.
    @discardableResult
    public func update(id: Int64, with draft: ReportDraft, now: Date = Date()) throws -> Report {
        var draft = draft
        draft.id = nil
        draft = try reference.validate(draft)
        return try pool.write { db in
            guard let current = try ReportRow.fetch(db, id: id) else {
                throw ReportNotFound(id: id)
            }
            draft.status = draft.status ?? current.status
            let created = draft.createdAt ?? current.createdAt
            let updated = draft.updatedAt ?? max(now, created)
            guard updated >= created else { throw ValidationError(field: "updated_at", "must not be earlier than created_at") }
            try db.execute(
                sql: """
                    UPDATE report SET key = ?, longitude = ?, latitude = ?, address = ?, city = ?, district = ?, object_type = ?,
                    balance_holder = ?, violator = ?, phones = ?, comment = ?, status = ?, created_at = ?, updated_at = ?
                    WHERE id = ?
                    """,
                arguments: [
                    ReportRow.key(draft.coordinate, id: id), draft.coordinate.longitude, draft.coordinate.latitude, draft.address, draft.city, draft.district,
                    draft.objectType, draft.balanceHolder, draft.violator, RowInserter.phoneText(draft.phones), draft.comment,
                    draft.status, ReportRow.milliseconds(created), ReportRow.milliseconds(updated), id,
                ])
            try SearchQueue.drain(db)
            return try ReportRow.fetch(db, id: id)!
        }
    }

    /// Deletes report `id`; throws ``ReportNotFound`` when there is none.
    public func delete(id: Int64) throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM report WHERE id = ?", arguments: [id])
            if db.changesCount == 0 { throw ReportNotFound(id: id) }
            try SearchQueue.drain(db)
        }
    }

    /// Imports drafts as one batch, the way the CLI does.
    @discardableResult
    func importDrafts(_ drafts: [ReportDraft], options: ImportOptions = ImportOptions()) throws -> ImportSummary {
        var batches = [Drafts.records(drafts)]
        return try importRecords(options: options, next: { batches.popLast() })
    }

    /// Every stored report, by id (the brute-force reference's input).
    func all() throws -> [Report] {
        try pool.read { db in try ReportRow.fetchAll(db, sql: "SELECT \(ReportRow.columns) FROM report ORDER BY id") }
    }

    /// SQLite's own checks of the R*Tree and the full-text index, and the layout's:
    /// every key is the report's cell and id, and the R*Tree holds every key.
    func checkIndexes() throws -> String {
        try pool.write { db in
            try db.execute(sql: "INSERT INTO report_search(report_search, rank) VALUES ('integrity-check', 0)")
            if try Int.fetchOne(db, sql: "SELECT count(*) FROM report_search_queue") != 0 { return "full-text writes are left queued" }
            for row in try Row.fetchAll(db, sql: "SELECT key, id, longitude, latitude FROM report") {
                let key: Int64 = row[0]
                if key != ReportRow.key(Coordinate(longitude: row[2], latitude: row[3]), id: row[1]) { return "key \(key) is off" }
            }
            // Every report once in the R*Tree, around its place, and nothing else there.
            let reports = try Int.fetchOne(db, sql: "SELECT count(*) FROM report") ?? 0
            let placed = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM report r JOIN report_rtree t ON t.key = r.key
                  AND t.min_lon <= r.longitude AND t.max_lon >= r.longitude AND t.min_lat <= r.latitude AND t.max_lat >= r.latitude
                """) ?? 0
            let boxes = try Int.fetchOne(db, sql: "SELECT count(*) FROM report_rtree") ?? 0
            if placed != reports || boxes != reports { return "the R*Tree and the table differ: \(reports) reports, \(placed) placed, \(boxes) boxes" }
            let counted = try Int.fetchOne(db, sql: "SELECT (SELECT report_count FROM report_sequence) = (SELECT count(*) FROM report)")
            if counted != 1 { return "the report count is off" }
            struct Holder: Hashable { var phone: String, id: Int64, lon: Double, lat: Double, status: String }
            var expected = Set<Holder>()
            for row in try Row.fetchAll(db, sql: "SELECT phones, id, longitude, latitude, status FROM report") {
                for phone in (row[0] as String).split(separator: ";") {
                    expected.insert(Holder(phone: String(phone), id: row[1], lon: row[2], lat: row[3], status: row[4]))
                }
            }
            let held = try Row.fetchAll(db, sql: "SELECT phone, report_id, longitude, latitude, status FROM report_phone").map {
                Holder(phone: $0[0], id: $0[1], lon: $0[2], lat: $0[3], status: $0[4])
            }
            if Set(held) != expected || held.count != expected.count { return "the whole-number phone index and the table differ" }
            return try String.fetchOne(db, sql: "SELECT rtreecheck('report_rtree')") ?? "no answer"
        }
    }
}
