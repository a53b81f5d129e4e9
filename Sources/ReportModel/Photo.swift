import Foundation
import Geometry

/// A photo of a report as stored: its picture is the file named by `sha256`.
public struct PhotoRow: Sendable, Hashable {
    /// The most photos one report may have.
    public static let maxPerReport = 5

    public var id: Int64
    public var reportID: Int64
    public var sha256: String
    public var width: Int
    public var height: Int
    public var bytes: Int
    public var createdAt: Date

    public init(id: Int64, reportID: Int64, sha256: String, width: Int, height: Int, bytes: Int, createdAt: Date) {
        self.id = id
        self.reportID = reportID
        self.sha256 = sha256
        self.width = width
        self.height = height
        self.bytes = bytes
        self.createdAt = createdAt
    }
}

/// A report has as many photos as it may.
public struct PhotoLimitReached: Error, Sendable, CustomStringConvertible {
    public var id: Int64
    public var limit: Int
    public init(id: Int64, limit: Int) { (self.id, self.limit) = (id, limit) }
    public var description: String { "report \(id) has \(limit) photos, the most it may have; delete one first" }
}

/// No photo of this id on this report.
public struct PhotoNotFound: Error, Sendable, CustomStringConvertible {
    public var reportID: Int64
    public var photoID: Int64
    public var description: String { "report \(reportID) has no photo \(photoID)" }

    public init(reportID: Int64, photoID: Int64) {
        self.reportID = reportID
        self.photoID = photoID
    }
}
