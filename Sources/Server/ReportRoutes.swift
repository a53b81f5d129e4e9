import Geometry
import Hummingbird
import Interchange
import Offloading
import ReportModel
import ReportService

/// `/v1/reports` and `/v1/search`: reports by area (cursor paging), by id, and by phone
/// fragment or id.
struct ReportRoutes {
    let service: ReportService

    static let maxPage = 10_000
    static let maxSearch = 1_000

    func register(on router: Router<AppRequestContext>, views: ReportViews) {
        // GET /v1/reports?bbox=…&limit=…&after=…: in id order; `after` is the cursor.
        router.read(.reports) { request, query, context in
            // Read before the page: every change after it is in the feed (the page may
            // already show some, which an entry then sets again to the same).
            let lastSeq = try await service.lastChange()
            let page = try await self.page(query, defaultLimit: 100, caller: context.caller)
            var members: [(String, String)] = [("numberMatched", "\(page.matched)"), ("numberReturned", "\(page.reports.count)")]
            if let after = page.nextAfter {
                let next = "/v1/reports?limit=\(page.limit)&after=\(after)" + page.kept
                members.append(Responses.nextLink(next))
            }
            var response = Responses.geoJSON(Responses.featureCollection(page.reports, members: members))
            response.headers[.lastSeq] = "\(lastSeq)"
            if query["assigned"] != nil { (response.headers[.cacheControl], response.headers[.vary]) = ("private, no-store", "Authorization") }
            return response
        }
        // GET /v1/reports/{id}: the staff form (filer, hidden) for supervisors and admins.
        router.read(.report) { _, _, context in
            let id = try Self.reportID(context)
            let caller = context.caller
            guard let (report, hidden) = try await service.report(id: id, for: caller) else {
                throw APIError(.notFound, code: "not_found", message: "report \(id) does not exist", field: "id")
            }
            return try await views.response(report, hidden: hidden, for: caller)
        }
        // GET /v1/search?q=…&limit=…: exact id first, then newest.
        router.read(.search) { request, query, _ in
            let q = try query.required("q", query["q"])
            let limit = try query.integer("limit", in: 1...Self.maxSearch, default: 50)!
            let (found, matched) = try await service.search(q, limit: limit)
            // Past the count's cap, OGC API Features' numberMatched is left out, and the
            // answer says how many there are at least.
            let count = matched.map { ("numberMatched", "\($0)") } ?? ("numberMatchedAtLeast", "\(service.searchCountCap + 1)")
            return Responses.geoJSON(Responses.featureCollection(found, members: [("query", GeoJSON.string(q)), count, ("numberReturned", "\(found.count)")]))
        }
    }
}

extension ReportRoutes {
    /// The area, statuses (checked against the reference data) and times of a query.
    func reportFilter(_ query: QueryParameters, caller: Caller? = nil) throws -> ReportFilter {
        let statuses = query.statuses()
        if let statuses { _ = try service.statusNumbers(statuses) }
        return ReportFilter(box: try query.bbox(), statuses: statuses, created: try query.created(), assignee: try Self.assignee(query, caller: caller))
    }

    /// `assigned=me|none|{id}`: `me` for any signed-in person, the others for staff (who
    /// is assigned is not the public's to know).
    static func assignee(_ query: QueryParameters, caller: Caller?) throws -> AssigneeFilter? {
        guard let text = query["assigned"] else { return nil }
        guard let caller else { throw Unauthorized(reason: "assigned: sign in to list reports by who checks them") }
        if text == "me" {
            guard let account = caller.author.accountID else { throw Forbidden(reason: "assigned=me: an API key has no reports to check") }
            return .account(account)
        }
        guard caller.isStaff else { throw Forbidden(reason: "assigned=\(text.prefix(20)): only supervisors list others' assignments; use assigned=me") }
        if text == "none" { return .unassigned }
        guard let id = QueryParameters.decimalID(text, maxDigits: 16) else {
            throw ValidationError(field: "assigned", "must be me, none or an account's id, got \"\(text.prefix(20))\"")
        }
        return .account(id)
    }

    /// A page of a cursor-paged listing (`/v1/reports`, OGC items).
    struct Page {
        var reports: [Report]
        var matched: Int
        var limit: Int
        /// The cursor of the next page; nil on the last one.
        var nextAfter: Int64?
        /// The filter's parameters, `&name=value` each, to carry into links.
        var kept: String
    }

    /// Reads `bbox`, `status`, `datetime`, `limit` (clamped to ``maxPage``) and `after`,
    /// and answers them: the box-only paths of the store when only a box narrows the
    /// listing, the filtered scan otherwise.
    func page(_ query: QueryParameters, defaultLimit: Int, caller: Caller? = nil) async throws -> Page {
        let filter = try reportFilter(query, caller: caller)
        let limit = try query.integer("limit", in: 1...Self.maxPage, default: defaultLimit, clampedTo: Self.maxPage)!
        let after = try query.integer("after", in: 0...Int(ReportLimits.maxID), default: nil).map(Int64.init)
        let reports = try await service.page(filter, after: after, limit: limit)
        let kept = query.carried(["bbox", "status", "datetime", "assigned"])
        return await Page(
            reports: reports, matched: try service.count(filter), limit: limit,
            nextAfter: reports.count == limit ? reports.last?.id : nil, kept: kept)
    }

    /// The report a path parameter names, as a public Feature.
    static func feature(_ service: ReportService, _ context: AppRequestContext, parameter: String) async throws -> Response {
        let id = try reportID(context, parameter: parameter)
        guard let report = try await service.report(id: id) else {
            throw APIError(.notFound, code: "not_found", message: "report \(id) does not exist", field: parameter)
        }
        return Responses.geoJSON(Array(GeoJSON.feature(report).utf8) + [0x0A])
    }
}

extension ReportRoutes {
    /// The report number of a path parameter.
    static func reportID(_ context: AppRequestContext, parameter: String = "id") throws(ValidationError) -> Int64 {
        let text = context.parameters.get(parameter) ?? ""
        guard let id = Int64(text), (1...ReportLimits.maxID).contains(id) else {
            throw ValidationError(field: parameter, "must be a report number from 1 to \(ReportLimits.maxID), got \"\(text.prefix(40))\"")
        }
        return id
    }
}

extension Responses {
    /// Reports as a FeatureCollection, `members` before `features`.
    static func featureCollection(_ reports: [Report], members: [ReportWriter.Member]) -> [UInt8] {
        var writer = ReportWriter(format: .geojson)
        writer.begin(members: members)
        for report in reports { writer.write(report) }
        writer.end()
        return writer.takeOutput()
    }
}

/// Percent-encoding for values put back into links.
enum URLText {
    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~,:"))) ?? value
    }
}

import Foundation
