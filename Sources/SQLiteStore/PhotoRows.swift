import Foundation
import GRDB
import ReportModel

extension WriteTransaction {
    /// Adds a stored picture to report `id` (public or hidden): the same picture twice is
    /// the first row again, and no change. The report's version moves forward, as its
    /// answer now lists the photo.
    public func addPhoto(
        to id: Int64, sha256: String, width: Int, height: Int, bytes: Int, author: Author, now: Date
    ) throws -> (photo: PhotoRow, added: Bool) {
        let photos = try SQLiteReports.photos(db, of: id)
        if let existing = photos.first(where: { $0.sha256 == sha256 }) { return (existing, false) }
        guard photos.count < PhotoRow.maxPerReport else { throw PhotoLimitReached(id: id, limit: PhotoRow.maxPerReport) }
        try db.execute(
            sql: "INSERT INTO report_photo (report_id, sha256, width, height, bytes, created_at, account_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [id, sha256, width, height, bytes, now.milliseconds, author.accountID])
        let photo = PhotoRow(
            id: db.lastInsertedRowID, reportID: id, sha256: sha256, width: width, height: height, bytes: bytes,
            createdAt: Date(milliseconds: now.milliseconds))
        try touch(id, .photoAdded, now: now)
        return (photo, true)
    }

    /// Throws ``PhotoLimitReached`` when report `id` has as many photos as it may.
    public func ensurePhotoRoom(on id: Int64) throws {
        guard try SQLiteReports.photos(db, of: id).count < PhotoRow.maxPerReport else { throw PhotoLimitReached(id: id, limit: PhotoRow.maxPerReport) }
    }

    /// Removes photo `photoID` of report `id`; its file stays while another row names it.
    public func removePhoto(_ photoID: Int64, of id: Int64, now: Date) throws -> PhotoRow {
        guard let photo = try SQLiteReports.photos(db, of: id).first(where: { $0.id == photoID }) else { throw PhotoNotFound(reportID: id, photoID: photoID) }
        try db.execute(sql: "DELETE FROM report_photo WHERE id = ?", arguments: [photoID])
        try touch(id, .photoRemoved, now: now)
        return photo
    }

    /// Moves the report's version forward and numbers the change.
    private func touch(_ id: Int64, _ action: ReportAction, now: Date) throws {
        written.ids.append(id)
        for table in ["report", "report_hidden"] {
            try db.execute(sql: "UPDATE \(table) SET updated_at = max(?, updated_at + 1) WHERE id = ?", arguments: [ReportRow.milliseconds(now), id])
        }
        try db.execute(
            sql: "INSERT INTO report_change (report_id, action, at) VALUES (?, ?, ?)", arguments: [id, action.rawValue, ReportRow.milliseconds(now)])
    }
}

extension SQLiteReports {
    /// Report `id`'s photos in the order they were added.
    public func photos(of id: Int64) throws -> [PhotoRow] {
        try pool.read { db in try Self.photos(db, of: id) }
    }

    static func photos(_ db: Database, of id: Int64) throws -> [PhotoRow] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT \(photoColumns) FROM report_photo WHERE report_id = ? ORDER BY id"), arguments: [id]
        ).map(photo)
    }

    /// The photos of many reports in one read (a list of them: an inspector's checks, an
    /// Open311 listing).
    public func photos(of ids: [Int64]) throws -> [Int64: [PhotoRow]] {
        guard !ids.isEmpty else { return [:] }
        return try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(Self.photoColumns) FROM report_photo WHERE report_id IN (SELECT value FROM json_each(?)) ORDER BY report_id, id",
                arguments: [Self.jsonList(ids)]
            ).map(Self.photo).reduce(into: [:]) { $0[$1.reportID, default: []].append($1) }
        }
    }

    static let photoColumns = "id, report_id, sha256, width, height, bytes, created_at"

    static func photo(_ row: Row) -> PhotoRow {
        PhotoRow(id: row[0], reportID: row[1], sha256: row[2], width: row[3], height: row[4], bytes: row[5], createdAt: ReportRow.date(milliseconds: row[6]))
    }

    /// Whether a stored picture belongs to a report the public sees (`publicOnly`), or to
    /// any report.
    public func photoExists(sha256: String, publicOnly: Bool) throws -> Bool {
        try pool.read { db in
            try Bool.fetchOne(
                db, sql: publicOnly
                    ? "SELECT EXISTS (SELECT 1 FROM report_photo p JOIN report r ON r.id = p.report_id WHERE p.sha256 = ?)"
                    : "SELECT EXISTS (SELECT 1 FROM report_photo WHERE sha256 = ?)",
                arguments: [sha256]) ?? false
        }
    }

    /// Every picture some row names (for collecting files no row names).
    public func photoNames() throws -> Set<String> {
        try pool.read(Self.photoNames)
    }

    static func photoNames(_ db: Database) throws -> Set<String> {
        Set(try String.fetchAll(db, sql: "SELECT DISTINCT sha256 FROM report_photo"))
    }
}
