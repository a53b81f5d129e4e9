import Foundation
import Offloading
import Photos
import ReportModel
import StorePorts

/// Photos of reports: the filer adds and removes them while the report is open,
/// supervisors at any time. The picture's files are in place before its row is
/// committed (``PhotoStorage/store(sha256:image:thumbnail:)``), so a row never names a missing file.
extension ReportService {
    /// Processes the uploads (one after another, in one of ``photoLanes``: it is the
    /// costly part), stores their files, then, checking `caller`'s rights again, adds them to the
    /// report in one transaction with their changes: all of them or, when one is refused
    /// (``PhotosRejected``, ``PhotoLimitReached``), none. The same picture on the same
    /// report is the photo it already has. Returns each row with its processed photo
    /// (its EXIF hints). A caller that has yet to read the uploads checks
    /// ``checkMayAddPhotos(to:by:)`` first, so that a refused one costs no decoding.
    public func addPhotos(
        _ uploads: [[UInt8]], to id: Int64, by caller: Caller, files: any PhotoStorage, processor: PhotoProcessor = PhotoProcessor(), now: Date = Date()
    ) async throws -> [(photo: PhotoRow, processed: ProcessedPhoto)] {
        let processed = try await photoLanes.run { () throws -> [ProcessedPhoto] in
            var done: [ProcessedPhoto] = [], refused: [(Int, ImageRejected)] = []
            for (i, upload) in uploads.enumerated() {
                do throws(ImageRejected) { done.append(try processor.process(upload)) } catch { refused.append((i, error)) }
            }
            guard refused.isEmpty else { throw PhotosRejected(refused: refused) }
            return done
        }
        // Checked again in the transaction; here, so that no file is stored for nothing.
        let have = Set(try await read { try await $0.photos(of: id) }.map(\.sha256))
        guard have.union(processed.map(\.sha256)).count <= PhotoRow.maxPerReport else {
            throw PhotoLimitReached(id: id, limit: PhotoRow.maxPerReport)
        }
        try await Blocking.offPool {
            for photo in processed { try await files.store(sha256: photo.sha256, image: photo.image, thumbnail: photo.thumbnail) }
        }
        let rows = try await commits.perform { [self] t in
            try checkPhotoRights(id, caller, t)
            let rows = try processed.map { photo in
                try t.addPhoto(
                    to: id, sha256: photo.sha256, width: photo.width, height: photo.height, bytes: photo.image.count, author: caller.author, now: now
                ).photo
            }
            return (rows, IndexEffect())
        }
        return Array(zip(rows, processed))
    }

    /// Removes photo `photoID` from report `id` (its files stay until `posterwatch photos gc`).
    public func removePhoto(_ photoID: Int64, of id: Int64, by caller: Caller, now: Date = Date()) async throws {
        try await commits.perform { [self] t in
            try checkPhotoRights(id, caller, t)
            _ = try t.removePhoto(photoID, of: id, now: now)
            return ((), IndexEffect())
        }
    }

    /// The photos of `report` (a report whose version is its creation has none: adding a
    /// photo moves the version on, so a just-filed report costs no read).
    public func photos(of report: Report) async throws -> [PhotoRow] {
        report.updatedAt == report.createdAt ? [] : try await read { try await $0.photos(of: report.id) }
    }

    /// The photos of these reports in one read, by report (the same skip of the
    /// never-changed as above).
    public func photos(of reports: [Report]) async throws -> [Int64: [PhotoRow]] {
        let changed = reports.filter { $0.updatedAt != $0.createdAt }.map(\.id)
        return changed.isEmpty ? [:] : try await read { try await $0.photos(of: changed) }
    }

    /// Throws unless `caller` may add photos to report `id` now (a check before the
    /// upload's body is even read; ``addPhotos(_:to:by:files:processor:now:)`` checks again).
    public func checkMayAddPhotos(to id: Int64, by caller: Caller) async throws {
        let _: Void = try await commits.perform { [self] t in
            try checkPhotoRights(id, caller, t)
            try t.ensurePhotoRoom(on: id)
            return ((), IndexEffect())
        }
    }

    /// The filer while the report is open; supervisors at any time. A hidden report's
    /// photos wait, as its fields do, until it is unhidden (``ReportHidden`` to staff).
    private func checkPhotoRights(_ id: Int64, _ caller: Caller, _ t: any ReportTransaction) throws {
        let report = try current(id, t, ifMatch: nil, for: caller)
        if caller.isStaff { return }
        guard let account = caller.author.accountID, try t.filer(of: id) == account else {
            throw Forbidden(reason: "only the filer or a supervisor may change the photos of report \(id)")
        }
        guard reference.statuses.first(where: { $0.code == report.status })?.open == true else {
            throw Forbidden(reason: "the filer may change the photos of a report only while it is open; it is \(report.status)")
        }
    }
}

/// Uploads that are no photos we take, by their place in the request.
public struct PhotosRejected: Error, Sendable {
    public var refused: [(index: Int, reason: ImageRejected)]
}

extension ReportService {
    /// Every core but one: a burst of uploads waits its turn rather than take every core
    /// from the reads (a 12-megapixel photo is some 60 ms of one core).
    public static var defaultPhotoWorkers: Int { max(1, ProcessInfo.processInfo.activeProcessorCount - 1) }
}
