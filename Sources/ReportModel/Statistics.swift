import Foundation
import Geometry

/// Report counts by status, district and object type, in reference-data order (codes
/// with no reports are listed with 0).
public struct StoreStatistics: Sendable, Hashable {
    public struct Count: Sendable, Hashable {
        public var code: String
        public var count: Int

        public init(code: String, count: Int) {
            self.code = code
            self.count = count
        }
    }

    public var total: Int
    public var byStatus: [Count]
    public var byDistrict: [Count]
    public var byObjectType: [Count]
    /// The smallest box around every report, nil when there are none.
    public var extent: BoundingBox?
    /// The creation times of the oldest and the newest report.
    public var created: ClosedRange<Date>?

    public init(total: Int, byStatus: [Count], byDistrict: [Count], byObjectType: [Count], extent: BoundingBox? = nil, created: ClosedRange<Date>? = nil) {
        self.total = total
        self.byStatus = byStatus
        self.byDistrict = byDistrict
        self.byObjectType = byObjectType
        self.extent = extent
        self.created = created
    }
}

/// A report as the tally keeps it: its numbers, its district, object type and status
/// (their positions in the reference data's lists) and its creation time.
public struct TallyMarker: Sendable, Hashable {
    public var id: Int64
    public var phones: [String]
    public var district: Int
    public var objectType: Int
    public var status: Int
    public var createdAt: Int64

    public init(id: Int64, phones: [String], district: Int, objectType: Int, status: Int, createdAt: Int64) {
        self.id = id
        self.phones = phones
        self.district = district
        self.objectType = objectType
        self.status = status
        self.createdAt = createdAt
    }
}
