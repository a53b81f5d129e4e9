import Hummingbird
import Offloading
import ReportService

/// `/v1/stats`: reports counted for a dashboard, and `/v1/stats/phones`: the numbers the
/// most reports carry (for supervisors: it says which are blocked). Both from memory, for
/// any area and period.
struct StatsRoutes {
    let service: ReportService

    func register(on router: Router<AppRequestContext>) {
        router.read(.stats) { _, query, _ in
            try Responses.json(Summary(try service.summary(box: try query.bbox(), created: try query.created())))
        }
        router.handle(.phoneRanking) { _, query, _, _ in
            let limit = try query.integer("limit", in: 1...ReportService.maxRanking, default: 50)!
            let (box, created, statuses, district) = (try query.bbox(), try query.created(), query.statuses(), query["district"])
            let ranked = try await service.topPhones(box: box, created: created, statuses: statuses, district: district, limit: limit)
            var response = try Responses.json(PhoneRanking(phones: ranked.map(PhoneRanking.Phone.init)))
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }
    }
}

/// `GET /v1/stats`.
struct Summary: Encodable {
    struct Count: Encodable {
        var code: String
        var count: Int
    }
    struct Month: Encodable {
        var month: String
        var count: Int
    }
    var total: Int
    var byStatus: [Count]
    var byDistrict: [Count]
    var byObjectType: [Count]
    var byMonth: [Month]

    init(_ s: ReportSummary) {
        total = s.total
        byStatus = s.byStatus.map { Count(code: $0.code, count: $0.count) }
        byDistrict = s.byDistrict.map { Count(code: $0.code, count: $0.count) }
        byObjectType = s.byObjectType.map { Count(code: $0.code, count: $0.count) }
        byMonth = s.byMonth.map { Month(month: $0.month, count: $0.count) }
    }

    enum CodingKeys: String, CodingKey {
        case total, byStatus = "by_status", byDistrict = "by_district", byObjectType = "by_object_type", byMonth = "by_month"
    }
}

/// `GET /v1/stats/phones`.
struct PhoneRanking: Encodable {
    struct Phone: Encodable {
        var number: String
        var reports: Int
        var byStatus: [String: Int]
        var status: String
        var blocked: Bool

        init(_ r: RankedPhone) {
            (number, reports, status, blocked) = (r.number, r.count, r.status.rawValue, r.status == .blocked)
            byStatus = Dictionary(uniqueKeysWithValues: r.statusCounts.map { ($0.code, $0.count) })
        }
        enum CodingKeys: String, CodingKey { case number, reports, byStatus = "by_status", status, blocked }
    }
    var phones: [Phone]
}
