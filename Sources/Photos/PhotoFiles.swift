import Foundation
import StorePorts

/// Stored pictures and thumbnails in a directory, named by the SHA-256 of the stored
/// JPEG (`ab/abcdef….jpg` and `ab/abcdef….thumb.jpg`): the same picture is one file
/// however often it is uploaded.
///
/// A file is written under a temporary name, synced, and renamed into place, the
/// thumbnail before the picture, so a picture present means both are complete; the
/// caller commits the photo's row only after ``store(_:)`` returns.
public struct PhotoFiles: PhotoStorage {
    public let root: URL

    public init(root: URL) throws {
        self.root = root
        try FileManager.default.createDirectory(at: root.appendingPathComponent("tmp"), withIntermediateDirectories: true)
    }

    /// Whether `name` is a stored picture's name: 64 lowercase hex digits.
    public static func isName(_ name: some StringProtocol) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    public func url(_ sha256: String, thumbnail: Bool = false) -> URL {
        root.appendingPathComponent(String(sha256.prefix(2))).appendingPathComponent(sha256 + (thumbnail ? ".thumb.jpg" : ".jpg"))
    }

    /// Puts the picture and its thumbnail in place, unless they are there already (then
    /// they are made new again, so that a collection under way leaves them).
    public func store(_ photo: ProcessedPhoto) throws {
        try put(sha256: photo.sha256, image: photo.image, thumbnail: photo.thumbnail)
    }

    private func put(sha256: String, image imageBytes: [UInt8], thumbnail thumbnailBytes: [UInt8]) throws {
        let image = url(sha256), thumbnail = url(sha256, thumbnail: true)
        let files = FileManager.default
        if files.fileExists(atPath: image.path), files.fileExists(atPath: thumbnail.path) {
            for file in [thumbnail, image] { try? files.setAttributes([.modificationDate: Date()], ofItemAtPath: file.path) }
            return
        }
        try files.createDirectory(at: image.deletingLastPathComponent(), withIntermediateDirectories: true)
        try write(Data(thumbnailBytes), to: thumbnail)
        try write(Data(imageBytes), to: image)
    }

    /// The bytes of a stored file, or nil.
    public func read(_ sha256: String, thumbnail: Bool) -> Data? {
        guard Self.isName(sha256) else { return nil }
        return FileManager.default.contents(atPath: url(sha256, thumbnail: thumbnail).path)
    }

    // The port (`PhotoStorage`): the same, in place, as the report store reads (its
    // callers keep the cooperative pool free).

    public func store(sha256: String, image: [UInt8], thumbnail: [UInt8]) async throws {
        try put(sha256: sha256, image: image, thumbnail: thumbnail)
    }

    public func read(sha256: String, thumbnail: Bool) async throws -> Data? {
        read(sha256, thumbnail: thumbnail)
    }

    /// Removes the stored files no row names (left by a crash between a file and its
    /// row, or by deleted photos) and temporary files, once older than `age` (an upload
    /// in flight has its files in place before its row); returns how many pictures.
    @discardableResult
    public func collect(keeping names: Set<String>, olderThan age: TimeInterval = 3_600) throws -> Int {
        let files = FileManager.default
        let cutoff = Date() - age
        func old(_ url: URL) -> Bool {
            ((try? files.attributesOfItem(atPath: url.path)[.modificationDate]) as? Date).map { $0 < cutoff } ?? false
        }
        var removed = 0
        for directory in try files.contentsOfDirectory(atPath: root.path) where directory.count == 2 {
            let folder = root.appendingPathComponent(directory)
            // `x.jpg` before `x.thumb.jpg`: a picture present always has its thumbnail.
            for file in try files.contentsOfDirectory(atPath: folder.path).sorted() {
                let name = String(file.prefix(64))
                // The age is read just before removing: an upload of the same picture meanwhile made it new.
                guard Self.isName(name), !names.contains(name), old(folder.appendingPathComponent(file)) else { continue }
                try files.removeItem(at: folder.appendingPathComponent(file))
                if !file.hasSuffix(".thumb.jpg") { removed += 1 }
            }
        }
        for file in try files.contentsOfDirectory(atPath: root.appendingPathComponent("tmp").path) {
            let url = root.appendingPathComponent("tmp").appendingPathComponent(file)
            if old(url) { try? files.removeItem(at: url) }
        }
        return removed
    }

    /// Whether the picture and its thumbnail are stored.
    public func has(_ sha256: String) -> Bool {
        Self.isName(sha256) && [false, true].allSatisfy { FileManager.default.fileExists(atPath: url(sha256, thumbnail: $0).path) }
    }

    /// Copies a stored picture and its thumbnail from `other` (a backup, or the store a
    /// backup is taken of), unless they are here already; false when `other` lacks them.
    public func copy(_ sha256: String, from other: PhotoFiles) throws -> Bool {
        guard !has(sha256) else { return true }
        guard let thumbnail = other.read(sha256, thumbnail: true), let image = other.read(sha256, thumbnail: false) else { return false }
        try FileManager.default.createDirectory(at: url(sha256).deletingLastPathComponent(), withIntermediateDirectories: true)
        try write(thumbnail, to: url(sha256, thumbnail: true))
        try write(image, to: url(sha256))
        return true
    }

    private func write(_ bytes: Data, to target: URL) throws {
        try Durable.write(bytes, to: target, temporaryFolder: root.appendingPathComponent("tmp"))
    }
}
