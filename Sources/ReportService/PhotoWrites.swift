import Accounts
import Foundation
import Photos
import ReportStore

/// Photos of reports: the filer adds and removes them while the report is open,
/// supervisors at any time. The picture's files are in place before its row is
/// committed (``PhotoFiles/store(_:)``), so a row never names a missing file.
extension ReportService {
    /// Checks that `caller` may add to report `id`, processes `upload` (off the
    /// cooperative pool: it is the costly part), stores its files, then adds it to the
    /// report in one transaction with its change. The same picture on the same report is
    /// the photo it already has. Returns the row and the processed photo (its EXIF hints).
    public func addPhoto(
        _ upload: [UInt8], to id: Int64, by caller: Caller, files: PhotoFiles, processor: PhotoProcessor = PhotoProcessor(), now: Date = Date()
    ) async throws -> (photo: PhotoRow, processed: ProcessedPhoto) {
        let _: Void = try await commits.perform { [self] t in
            try checkPhotoRights(id, caller, t)
            try t.ensurePhotoRoom(on: id)
            return ((), IndexEffect())
        }
        let photo = try await Blocking.run { try processor.process(upload) }
        try await Blocking.run { try files.store(photo) }
        let row = try await commits.perform { [self] t in
            try checkPhotoRights(id, caller, t)
            let (row, _) = try t.addPhoto(
                to: id, sha256: photo.sha256, width: photo.width, height: photo.height, bytes: photo.image.count, author: caller.author, now: now)
            return (row, IndexEffect())
        }
        return (row, photo)
    }

    /// Removes photo `photoID` from report `id` (its files stay until `posterwatch photos gc`).
    public func removePhoto(_ photoID: Int64, of id: Int64, by caller: Caller, now: Date = Date()) async throws {
        try await commits.perform { [self] t in
            try checkPhotoRights(id, caller, t)
            _ = try t.removePhoto(photoID, of: id, now: now)
            return ((), IndexEffect())
        }
    }

    /// Report `id`'s photos, when `caller` may see the report (hidden ones: staff only).
    public func photos(of id: Int64) throws -> [PhotoRow] {
        try store.photos(of: id)
    }

    private func checkPhotoRights(_ id: Int64, _ caller: Caller, _ t: WriteTransaction) throws {
        let report = try current(id, t, ifMatch: nil, for: caller)
        guard !caller.isStaff else { return }
        guard let account = caller.author.accountID, try t.filer(of: id) == account else {
            throw Forbidden(reason: "only the filer or a supervisor may change the photos of report \(id)")
        }
        guard reference.statuses.first(where: { $0.code == report.status })?.open == true else {
            throw Forbidden(reason: "the filer may change the photos of a report only while it is open; it is \(report.status)")
        }
    }
}
