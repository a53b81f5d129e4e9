import Clustering
import Geometry
import PhoneRanking
import ReportModel
import ReportStore

/// Numbers ranked by how many reports carry them: from memory (``PhoneTally``), the
/// area and period through the cluster index.
extension ReportService {
    /// The most numbers one ranking lists.
    public static let maxRanking = 1_000

    /// The `limit` numbers the most public reports carry among those in `box`, created in
    /// `created`, of `statuses` (codes; nil: all) and of `district`, most first; each
    /// with its counts per status code (those with none left out), and its status.
    public func topPhones(
        box: BoundingBox?, created: ClosedRange<Int64>?, statuses: [String]?, district: String?, limit: Int
    ) throws -> [RankedPhone] {
        let filter = try self.filter(statuses: statuses, created: created)
        let districtNumber = try district.map { code throws(ValidationError) in
            guard let i = reference.districts.firstIndex(where: { $0.code == code }) else {
                throw ValidationError(field: "district", "unknown district \"\(code.prefix(40))\"; known: \(reference.districts.map(\.code).joined(separator: ", "))")
            }
            return i
        }
        let limit = min(max(limit, 0), Self.maxRanking)
        let ranked = box == nil && created == nil
            ? tally.ranking(limit: limit, statuses: filter.statuses, district: districtNumber)
            : tally.ranking(limit: limit, district: districtNumber) { visit in index.forEachReport(in: box ?? .world, filter: filter, visit) }
        let phoneStatuses = try store.phoneStatuses(ranked.map(\.number))
        return ranked.map { r in
            RankedPhone(
                number: r.number, count: r.count, status: phoneStatuses[r.number] ?? .unverified,
                statusCounts: zip(statusCodes, r.statusCounts).filter { $0.1 > 0 }.map { (code: $0.0, count: $0.1) })
        }
    }
}

/// A number in a ranking: how many of the reports asked about carry it, per status, and
/// where it stands.
public struct RankedPhone: Sendable {
    public var number: String
    public var count: Int
    public var status: PhoneStatus
    public var statusCounts: [(code: String, count: Int)]
}

extension PhoneTally.Entry {
    init(_ marker: PhoneMarker) {
        self.init(phones: marker.phones, district: marker.district, status: marker.status)
    }
}
