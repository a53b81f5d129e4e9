import Accounts
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import Offloading
import ReportModel
import ReportService

/// Filing and working reports: `POST /v1/reports`, `/v1/reports/nearby`,
/// `/v1/me/reports`, `PATCH /v1/reports/{id}`, its transitions, hiding and history.
/// Handlers read the body, call ``ReportService`` and answer; who may call each is the
/// endpoint table's to say, and which step of the workflow the service's.
struct ReportWriteRoutes {
    let service: ReportService
    let views: ReportViews

    /// The longest `Idempotency-Key` taken.
    static let maxKeyLength = 255

    func register(on router: Router<AppRequestContext>) {
        router.handle(.fileReport, fileReport)
        router.read(.nearby, nearby)
        router.handle(.myReports, myReports)
        router.handle(.editReport, editReport)
        router.handle(.transition, transition)
        router.handle(.hideReport, hideReport)
        router.handle(.unhideReport, unhideReport)
        router.read(.history, history)
    }

    @Sendable func fileReport(_ request: Request, _: QueryParameters, _: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let members = try JSONBody.members(try await JSONBody.collect(request))
        let draft = try ReportIntake.draft(members, reference: service.reference, area: service.intake)
        let caller = identity.caller
        guard let key = try Self.idempotencyKey(request) else {
            return Self.response(try filed(try await service.file(draft, by: caller)))
        }
        let outcome = try await service.file(draft, by: caller, key: key, body: try JSONBody.canonical(members), answer: filed)
        switch outcome {
        case .first(let reply), .replayed(let reply): return Self.response(reply)
        }
    }

    @Sendable func nearby(_: Request, _ query: QueryParameters, _: AppRequestContext) async throws -> Response {
        let lon = try query.required("lon", try query.number("lon", in: -180...180))
        let lat = try query.required("lat", try query.number("lat", in: -90...90))
        let radius = try query.number("radius", in: 1...1000) ?? service.intake.duplicateRadius
        let hints = try await service.duplicateHints(near: Coordinate(longitude: lon, latitude: lat), phones: [], radius: radius)
        return Responses.body(Array(#"{"possible_duplicates":"#.utf8) + DuplicateHint.json(hints) + Array("}\n".utf8), type: "application/json")
    }

    @Sendable func myReports(_: Request, _ query: QueryParameters, _: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let limit = try query.integer("limit", in: 1...500, default: 50)!
        let before = try query.integer("before", in: 1...Int(ReportLimits.maxID)).map(Int64.init)
        let reports = try await service.reports(filedBy: identity.caller, before: before, limit: limit)
        var members: [(String, String)] = [("numberReturned", "\(reports.count)")]
        if reports.count == limit, let last = reports.last {
            let next = "/v1/me/reports?limit=\(limit)&before=\(last.id)"
            members.append(Responses.nextLink(next))
        }
        var response = Responses.geoJSON(Responses.featureCollection(reports, members: members))
        response.headers[.cacheControl] = "private, no-store"
        return response
    }

    @Sendable func editReport(_ request: Request, _: QueryParameters, _ context: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let id = try ReportRoutes.reportID(context)
        guard let ifMatch = request.headers[.ifMatch] else {
            throw APIError(
                .preconditionRequired, code: "precondition_required",
                message: "send If-Match with the report's ETag, so that an edit never overwrites one you have not seen", field: "If-Match")
        }
        let (patch, issues) = ReportIntake.patch(
            try await JSONBody.read(request, allowed: ReportIntake.fields + ReportIntake.assigned + ReportIntake.position.map(\.name)))
        let report = try await service.edit(id, by: identity.caller, ifMatch: ReportViews.version(ifMatch: ifMatch, id: id), issues: issues) { current in
            patch.applied(to: current)
        }
        return try await views.response(report, for: identity.caller)
    }

    @Sendable func transition(_ request: Request, _: QueryParameters, _ context: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let id = try ReportRoutes.reportID(context)
        let body = try await Transition.read(request)
        let ifMatch = request.headers[.ifMatch].map { ReportViews.version(ifMatch: $0, id: id) }
        let report = try await service.transition(
            id, to: body.to, note: body.note, duplicateOf: body.duplicateOf, by: identity.caller, ifMatch: ifMatch ?? nil)
        return try await views.response(report, for: identity.caller)
    }

    @Sendable func hideReport(_ request: Request, _: QueryParameters, _ context: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let id = try ReportRoutes.reportID(context)
        let hidden = try await service.hide(id, note: try await Hide.read(request).note, by: identity.caller)
        return try await views.response(hidden.report, hidden: hidden, for: identity.caller)
    }

    @Sendable func unhideReport(_ request: Request, _: QueryParameters, _ context: AppRequestContext, _ identity: AccountService.Identity) async throws -> Response {
        let id = try ReportRoutes.reportID(context)
        let note = try await Note<UnhideNote>.read(request).note
        return try await views.response(try await service.unhide(id, note: note, by: identity.caller), for: identity.caller)
    }

    @Sendable func history(_: Request, _ query: QueryParameters, _ context: AppRequestContext) async throws -> Response {
        let id = try ReportRoutes.reportID(context)
        let limit = try query.integer("limit", in: 1...HistoryPage.maxLimit, default: HistoryPage.maxLimit)!
        let after = try query.integer("after", in: 0...Int(Int64.max)).map(Int64.init) ?? 0
        guard let page = try await service.history(of: id, for: context.caller, after: after, limit: limit) else { throw ReportNotFound(id: id) }
        let staff = context.caller?.isStaff == true
        var names: [Int64: String] = [:]
        if staff {
            for account in Set(page.entries.compactMap(\.author.accountID)) { names[account] = try await views.accounts.account(id: account)?.name }
        }
        var response = try Responses.json(History(history: page.entries.map { History.Entry($0, staff: staff, names: names) }, next: page.next))
        response.headers[.vary] = "Authorization"
        if staff { response.headers[.cacheControl] = "private, no-store" }
        return response
    }

    /// The 201 of a filing, as an idempotency key keeps it.
    @Sendable private func filed(_ filing: Filing) throws -> StoredAnswer.Reply {
        // Just filed: no photos yet.
        let (headers, body) = try views.rendered(filing.report, for: nil, photos: [], extra: [("possible_duplicates", DuplicateHint.json(filing.possibleDuplicates))])
        return StoredAnswer.Reply(
            status: 201, headers: ["Location": "/v1/reports/\(filing.report.id)", "ETag": headers[.eTag] ?? ""], body: Data(body))
    }

    /// The `Idempotency-Key` header, if sent: 1 to 255 visible ASCII characters.
    static func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers[.idempotencyKey] else { return nil }
        guard (1...maxKeyLength).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ValidationError(field: "Idempotency-Key", "must be 1 to \(maxKeyLength) visible ASCII characters (a UUID, say)")
        }
        return key
    }

    /// A stored reply as a response.
    static func response(_ reply: StoredAnswer.Reply) -> Response {
        var headers: HTTPFields = [.contentType: "application/geo+json", .cacheControl: "no-store"]
        for (name, value) in reply.headers where !value.isEmpty {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return Response(status: HTTPResponse.Status(code: reply.status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
    }
}

/// `GET /v1/reports/{id}/history`.
struct History: Encodable {
    var history: [Entry]
    /// The `after` of the next page; nil on the last.
    var next: Int64?

    struct Entry: Encodable {
        var at: String
        var action: String
        var fromStatus: String?
        var toStatus: String?
        var note: String?
        var changes: [FieldChange]?
        var by: Author?

        struct Author: Encodable {
            var id: Int64?
            var name: String?
            var apiKey: Int64?
            enum CodingKeys: String, CodingKey { case id, name, apiKey = "api_key" }
        }

        init(_ entry: HistoryEntry, staff: Bool, names: [Int64: String]) {
            at = RFC3339.string(from: entry.at)
            action = entry.action.rawValue
            fromStatus = entry.fromStatus
            toStatus = entry.toStatus
            guard staff else { return }
            note = entry.note
            changes = entry.changes
            by = Author(id: entry.author.accountID, name: entry.author.accountID.flatMap { names[$0] }, apiKey: entry.author.apiKeyID)
        }

        enum CodingKeys: String, CodingKey { case at, action, fromStatus = "from_status", toStatus = "to_status", note, changes, by }
    }
}

extension HTTPField.Name {
    static let idempotencyKey = Self("Idempotency-Key")!
}
