import Foundation
import Geometry

/// A stored report of an illegally placed poster.
///
/// Codes (`district`, `objectType`, `balanceHolder`, `status`) are the stable ASCII codes of
/// the ``ReferenceData``; `phones` are normalized (see ``Phone``). Times are kept to the
/// millisecond. Reporter identity and photos are kept apart from the report (a later
/// schema version adds them in tables of their own), so a `Report` is public data.
public struct Report: Sendable, Hashable {
    /// The public report number.
    public var id: Int64
    public var coordinate: Coordinate
    public var address: String
    public var city: String
    public var district: String
    public var objectType: String
    public var balanceHolder: String
    /// The company named on the poster, when known.
    public var violator: String?
    /// 1 to 5 normalized phone numbers.
    public var phones: [String]
    public var comment: String?
    public var status: String
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: Int64, coordinate: Coordinate, address: String, city: String, district: String,
        objectType: String, balanceHolder: String, violator: String?, phones: [String],
        comment: String?, status: String, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.coordinate = coordinate
        self.address = address
        self.city = city
        self.district = district
        self.objectType = objectType
        self.balanceHolder = balanceHolder
        self.violator = violator
        self.phones = phones
        self.comment = comment
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// A report as it arrives from an import file or a form, before the store accepts it.
///
/// `id`, `status` and the times may be missing: the store assigns the next free id,
/// status `new`, and the current time. ``ReferenceData/validate(_:)`` checks every field
/// and normalizes the phone numbers.
public struct ReportDraft: Sendable, Hashable {
    public var id: Int64?
    public var coordinate: Coordinate
    public var address: String
    public var city: String
    public var district: String
    public var objectType: String
    public var balanceHolder: String
    public var violator: String?
    public var phones: [String]
    public var comment: String?
    public var status: String?
    public var createdAt: Date?
    public var updatedAt: Date?

    public init(
        id: Int64? = nil, coordinate: Coordinate, address: String, city: String, district: String,
        objectType: String, balanceHolder: String, violator: String? = nil, phones: [String],
        comment: String? = nil, status: String? = nil, createdAt: Date? = nil, updatedAt: Date? = nil
    ) {
        self.id = id
        self.coordinate = coordinate
        self.address = address
        self.city = city
        self.district = district
        self.objectType = objectType
        self.balanceHolder = balanceHolder
        self.violator = violator
        self.phones = phones
        self.comment = comment
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The draft of an existing report, e.g. to edit and store it again.
    public init(_ report: Report) {
        self.init(
            id: report.id, coordinate: report.coordinate, address: report.address, city: report.city,
            district: report.district, objectType: report.objectType, balanceHolder: report.balanceHolder,
            violator: report.violator, phones: report.phones, comment: report.comment, status: report.status,
            createdAt: report.createdAt, updatedAt: report.updatedAt)
    }

    /// What a client files for a report like this one: its place and fields, and `status`
    /// when given; no id or times (the store gives them), unless `keepingTimes`.
    public init(filing report: Report, status: String? = nil, keepingTimes: Bool = false) {
        self.init(
            coordinate: report.coordinate, address: report.address, city: report.city, district: report.district,
            objectType: report.objectType, balanceHolder: report.balanceHolder, violator: report.violator, phones: report.phones,
            comment: report.comment, status: status, createdAt: keepingTimes ? report.createdAt : nil,
            updatedAt: keepingTimes ? report.updatedAt : nil)
    }
}

/// The limits of a report's free-text fields, in characters.
public enum ReportLimits {
    public static let address = 255
    public static let city = 100
    public static let violator = 255
    public static let comment = 2000
    /// The times a report may carry: seconds since 1970 fit 32 bits.
    public static let dates = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 4_294_967_295)
    /// The highest report number (ids are stored in 31 bits).
    public static let maxID: Int64 = 2_147_483_647
}

extension Report {
    /// The position of this report's status in `reference.statuses` (nil for an unknown one).
    public func statusNumber(in reference: ReferenceData) -> Int? {
        reference.statuses.firstIndex { $0.code == status }
    }

    /// Creation time in milliseconds since 1970, as stored.
    public var createdMilliseconds: Int64 { createdAt.milliseconds }

    /// The `updated_at` of the next write: now, or a millisecond past the last one if that
    /// is not later (every recorded write moves it, so that it is a version).
    public func nextVersion(at now: Date) -> Int64 {
        max(now.milliseconds, updatedAt.milliseconds + 1)
    }
}

extension Date {
    /// Milliseconds since 1970, as every table stores a time.
    public var milliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    public init(milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
