import Clustering
import Geometry
import Tally
import ReportModel
import StorePorts

/// Numbers ranked by how many reports carry them, and reports counted for a dashboard:
/// from memory (``ReportTally``), the area and period through the cluster index.
extension ReportService {
    /// The most numbers one ranking lists.
    public static let maxRanking = 1_000

    /// The `limit` numbers the most public reports carry among those in `box`, created in
    /// `created`, of `statuses` (codes; nil: all) and of `district`, most first; each
    /// with its counts per status code (those with none left out), and its status.
    public func topPhones(
        box: BoundingBox?, created: ClosedRange<Int64>?, statuses: [String]?, district: String?, limit: Int
    ) async throws -> [RankedPhone] {
        let filter = try self.filter(statuses: statuses, created: created)
        let districtNumber = try district.map { code throws(ValidationError) in
            guard let i = reference.districts.firstIndex(where: { $0.code == code }) else {
                throw ValidationError(field: "district", "unknown district \"\(code.prefix(40))\"; known: \(reference.districts.map(\.code).joined(separator: ", "))")
            }
            return i
        }
        let limit = min(max(limit, 0), Self.maxRanking)
        try requireIndex()
        let ranked = box == nil && created == nil
            ? tally.ranking(limit: limit, statuses: filter.statuses, district: districtNumber)
            : tally.ranking(limit: limit, district: districtNumber) { visit in index.forEachReport(in: box ?? .world, filter: filter, visit) }
        let phoneStatuses = try await self.phoneStatuses(ranked.map(\.number))
        return ranked.map { r in
            RankedPhone(
                number: r.number, count: r.count, status: phoneStatuses[r.number] ?? .unverified,
                statusCounts: zip(statusCodes, r.statusCounts).filter { $0.1 > 0 }.map { (code: $0.0, count: $0.1) })
        }
    }
}

extension ReportService {
    /// The public reports in `box` created in `created`, counted by status, district,
    /// object type (every code of the reference data, in its order) and month.
    public func summary(box: BoundingBox?, created: ClosedRange<Int64>?) throws -> ReportSummary {
        try requireIndex()
        let tallied = box == nil && created == nil
            ? tally.summary()
            : tally.summary { visit in index.forEachReport(in: box ?? .world, filter: ClusterFilter(created: created), visit) }
        return ReportSummary(
            total: tallied.total,
            byStatus: zip(statusCodes, tallied.byStatus).map { (code: $0.0, count: $0.1) },
            byDistrict: reference.districts.enumerated().map { (code: $0.element.code, count: tallied.byDistrict[$0.offset]) },
            byObjectType: reference.objectTypes.enumerated().map { (code: $0.element.code, count: tallied.byObjectType[$0.offset]) },
            byMonth: tallied.byMonth.map { m in
                let (year, month) = (1970 + m.month / 12, 1 + m.month % 12)
                return (month: "\(year)-\(month < 10 ? "0" : "")\(month)", count: m.count)
            })
    }
}

/// Reports counted four ways, each a code (or a month, `YYYY-MM`) and its count.
public struct ReportSummary: Sendable {
    public var total: Int
    public var byStatus: [(code: String, count: Int)]
    public var byDistrict: [(code: String, count: Int)]
    public var byObjectType: [(code: String, count: Int)]
    public var byMonth: [(month: String, count: Int)]
}

/// A number in a ranking: how many of the reports asked about carry it, per status, and
/// where it stands.
public struct RankedPhone: Sendable {
    public var number: String
    public var count: Int
    public var status: PhoneStatus
    public var statusCounts: [(code: String, count: Int)]
}

extension ReportTally.Entry {
    init(_ marker: TallyMarker) {
        self.init(
            phones: marker.phones, district: marker.district, objectType: marker.objectType,
            month: Int(CivilCalendar.month(milliseconds: marker.createdAt)), status: marker.status, second: Self.second(marker.createdAt))
    }

    /// A creation time's second, as searches order by it (rounded down, as the stores do).
    static func second(_ milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
    }
}
