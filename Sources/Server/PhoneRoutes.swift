import Accounts
import ChangeFeed
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import Offloading
import ReportModel
import ReportService

/// `/v1/phones/{number}`: a number's record and reports, and the supervisors' verifying,
/// blocking and unblocking; `/v1/blocklist` for the operators' systems.
struct PhoneRoutes {
    let service: ReportService

    static let maxPage = 1_000

    func register(on router: Router<AppRequestContext>) {
        router.read(.phone) { _, _, context in
            let number = try Self.number(context)
            guard let record = try await service.phoneRecord(number, for: context.caller) else { throw PhoneNotFound(number: number) }
            return try Self.record(record, staff: context.caller?.isStaff == true)
        }
        router.read(.phoneReports) { _, query, context in
            let number = try Self.number(context)
            let limit = try query.integer("limit", in: 1...Self.maxPage, default: 100, clampedTo: Self.maxPage)!
            let after = try query.integer("after", in: 0...Int(ReportLimits.maxID), default: 0)!
            let (reports, matched) = try await service.reports(carrying: number, after: Int64(after), limit: limit)
            var members: [(String, String)] = [("numberMatched", "\(matched)"), ("numberReturned", "\(reports.count)")]
            if reports.count == limit, let last = reports.last {
                let next = "/v1/phones/\(Phone.written(number))/reports?limit=\(limit)&after=\(last.id)"
                members.append(Responses.nextLink(next))
            }
            return Responses.geoJSON(Responses.featureCollection(reports, members: members))
        }
        router.handle(.verifyPhone) { request, _, context, identity in
            let number = try Self.number(context)
            let body = try await Verification.read(request)
            return try await answer(try await service.verify(number, outcome: body.outcome, note: body.note, by: identity.caller), for: identity.caller)
        }
        router.handle(.blockPhone) { request, _, context, identity in
            let number = try Self.number(context)
            let note = try await Note<PhoneNote>.read(request).note
            return try await answer(try await service.block(number, note: note, by: identity.caller), for: identity.caller)
        }
        router.handle(.unblockPhone) { request, _, context, identity in
            let number = try Self.number(context)
            let note = try await Note<PhoneNote>.read(request).note
            return try await answer(try await service.unblock(number, note: note, by: identity.caller), for: identity.caller)
        }
        router.handle(.blocklist) { _, query, _, _ in
            let format = try query.choice("format", ["json", "csv"], default: "json")
            let blocked = try await service.stored.blocklist()
            let csv = format == "csv"
            var response = Responses.body(try Blocklist.render(blocked, csv: csv), type: csv ? "text/csv; charset=utf-8" : "application/json")
            response.headers[.cacheControl] = "private, no-cache"
            return response
        }
        router.handle(.blocklistChanges) { _, query, _, _ in
            let since = Int64(try query.required("since", try query.integer("since", in: 0...Int(Int64.max))))
            let changes = try await service.blocklistChanges(since: since)
            try ChangesUnavailable.check(since: since, prunedThrough: changes.prunedThrough, lastSeq: changes.lastSeq, restart: "fetch GET /v1/blocklist again")
            return try Responses.private(BlocklistDelta(changes))
        }
    }

    /// The answer to a phone's change: its record as staff see it, and the reports moved.
    private func answer(_ change: PhoneChange, for caller: Caller) async throws -> Response {
        guard let record = try await service.phoneRecord(change.entry.number, for: caller) else { throw PhoneNotFound(number: change.entry.number) }
        var view = PhoneRecordView(record, staff: true)
        view.movedReports = change.moved.map(\.id)
        var response = try Responses.json(view)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private static func record(_ record: PhoneRecord, staff: Bool) throws -> Response {
        var response = try Responses.json(PhoneRecordView(record, staff: staff))
        response.headers[.vary] = "Authorization"
        if staff { response.headers[.cacheControl] = "private, no-store" }
        return response
    }

    /// The number of the path, in any written form (`%20` taken as a space).
    static func number(_ context: AppRequestContext) throws(ValidationError) -> String {
        let text = (context.parameters.get("number") ?? "").replacingOccurrences(of: "%20", with: " ")
        return try Phone.normalize(text, field: "number")
    }
}

extension ValidationErrors {
    /// Runs a check that throws one issue, as one that throws a list.
    static func wrap<T>(_ body: () throws(ValidationError) -> T) throws(ValidationErrors) -> T {
        do { return try body() } catch { throw ValidationErrors([error]) }
    }
}

/// `GET /v1/phones/{number}`, and the answer to a phone's change.
struct PhoneRecordView: Encodable {
    struct Reports: Encodable {
        var total: Int
        var open: Int
        var byStatus: [String: Int]
        enum CodingKeys: String, CodingKey { case total, open, byStatus = "by_status" }
    }
    struct Count: Encodable {
        var code: String?
        var name: String?
        var count: Int
    }
    struct Change: Encodable {
        var at: String
        var action: String
        var fromStatus: String
        var toStatus: String
        var movedReports: Int
        var note: String?
        var by: History.Entry.Author?

        enum CodingKeys: String, CodingKey { case at, action, fromStatus = "from_status", toStatus = "to_status", movedReports = "moved_reports", note, by }
    }

    var number: String
    var status: String
    var changedAt: String?
    var blockedAt: String?
    var reports: Reports
    var firstSeen: String?
    var lastSeen: String?
    var districts: [Count]
    var violators: [Count]
    var history: [Change]
    /// The answer to a block or an unblock: the reports it moved.
    var movedReports: [Int64]?

    init(_ r: PhoneRecord, staff: Bool) {
        (number, status) = (r.number, r.status.rawValue)
        changedAt = r.changedAt.map { RFC3339.string(from: $0) }
        blockedAt = r.blockedAt.map { RFC3339.string(from: $0) }
        reports = Reports(total: r.reportCount, open: r.openCount, byStatus: r.statusCounts)
        firstSeen = r.firstSeen.map { RFC3339.string(from: $0) }
        lastSeen = r.lastSeen.map { RFC3339.string(from: $0) }
        districts = r.districts.map { Count(code: $0.code, count: $0.count) }
        violators = r.violators.map { Count(name: $0.name, count: $0.count) }
        history = r.history.map { e in
            Change(
                at: RFC3339.string(from: e.at), action: e.action.rawValue, fromStatus: e.fromStatus.rawValue, toStatus: e.toStatus.rawValue,
                movedReports: e.moved, note: staff ? e.note : nil,
                by: staff ? History.Entry.Author(id: e.author.accountID, name: nil, apiKey: e.author.apiKeyID) : nil)
        }
    }

    enum CodingKeys: String, CodingKey {
        case number, status, changedAt = "changed_at", blockedAt = "blocked_at", reports, firstSeen = "first_seen", lastSeen = "last_seen"
        case districts, violators, history, movedReports = "moved_reports"
    }
}

/// `GET /v1/blocklist?format=json`, and `posterwatch blocklist`.
package struct Blocklist: Encodable {
    /// The list as JSON, or as CSV: `number,blocked_at,report_count`, numbers with their `+`.
    package static func render(_ blocked: [BlockedPhone], csv: Bool) throws -> [UInt8] {
        guard csv else { return try Responses.jsonBytes(Blocklist(numbers: blocked.map(Number.init), count: blocked.count)) + [0x0A] }
        return Array(("number,blocked_at,report_count\r\n" + blocked.map { "+\($0.number),\(RFC3339.string(from: $0.blockedAt)),\($0.reportCount)\r\n" }.joined()).utf8)
    }

    struct Number: Encodable {
        var number: String
        var blockedAt: String
        var reportCount: Int

        init(_ b: BlockedPhone) {
            (number, reportCount) = (b.number, b.reportCount)
            blockedAt = RFC3339.string(from: b.blockedAt)
        }
        enum CodingKeys: String, CodingKey { case number, blockedAt = "blocked_at", reportCount = "report_count" }
    }
    var numbers: [Number]
    var count: Int
}

/// `GET /v1/blocklist/changes`.
struct BlocklistDelta: Encodable {
    var added: [Blocklist.Number]
    var removed: [String]
    var lastSeq: Int64

    init(_ c: BlocklistChanges) {
        added = c.added.map(Blocklist.Number.init)
        removed = c.removed
        lastSeq = c.lastSeq
    }
    enum CodingKeys: String, CodingKey { case added, removed, lastSeq = "last_seq" }
}
