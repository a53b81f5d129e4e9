import Foundation
import Accounts
import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import Offloading
import ReportModel
import ReportService

/// `/open311/v2/`: Open311 GeoReport v2, through which a city's contact centre or a
/// FixMyStreet instance reads PosterWatch with no code of its own. Each answer in JSON and
/// in XML by the path's extension, and every error in the standard's form, never ours.
struct Open311Routes {
    let service: ReportService
    let accounts: AccountService
    var reference: ReferenceData { service.reference }
    let publicURL: String?
    /// Who answers for the service (from the about file), for discovery.
    let contact: String?
    /// The most changes of the log one answer of `servicerequestupdates` reads.
    var updateScan = ReportService.statusUpdateScan

    func register(on router: Router<AppRequestContext>) {
        for format in Open311Format.allCases {
            on(router, "discovery", format, root: "discovery") { request, _, _ in
                Open311Documents.discovery(base: OGCRoutes.base(request, publicURL: publicURL), contact: contact)
            }
            on(router, "services", format, root: "services") { _, _, _ in Open311Documents.services(reference) }
            on(router, "services/{service_code}", format, root: "service_definition") { _, _, context in
                let code = context.parameters.get("service_code") ?? ""
                guard let type = reference.objectTypes.first(where: { $0.code == code }) else {
                    throw HTTPError(.notFound, message: "no service \"\(code.prefix(100))\"; the services are /open311/v2/services")
                }
                return Open311Documents.definition(type, reference)
            }
            on(router, "requests", format, root: "service_requests", method: .post, success: .created) { request, _, _ in
                try await file(request)
            }
            on(router, "requests", format, root: "service_requests") { request, query, _ in
                try await requests(Open311Query(query, reference: reference), base: OGCRoutes.base(request, publicURL: publicURL))
            }
            on(router, "requests/{service_request_id}", format, root: "service_requests") { request, _, context in
                let id = try Open311Query.id(context.parameters.get("service_request_id") ?? "")
                guard id <= ReportLimits.maxID, let report = try await service.report(id: id) else { throw HTTPError(.notFound, message: "no public report \(id)") }
                return [serviceRequest(report, photo: try await service.photos(of: report).first, base: OGCRoutes.base(request, publicURL: publicURL))]
            }
            onPage(router, "servicerequestupdates", format, root: "service_request_updates") { request, query, _ in
                // The same reading as requests': every bad parameter named at once.
                let asked = try Open311Query(query, reference: reference)
                let page = try await service.statusUpdates(
                    from: asked.window.lowerBound, to: asked.window.upperBound, after: asked.after, limit: Open311Query.maxAnswers, scan: updateScan)
                // The next page's window as this one resolved it (a window left to its default
                // would slide with the clock between pages).
                let next = page.next.map { after in
                    [("start_date", RFC3339.string(from: asked.window.lowerBound)), ("end_date", RFC3339.string(from: asked.window.upperBound))]
                        + (query["jurisdiction_id"].map { [("jurisdiction_id", $0)] } ?? []) + [("after", String(after))]
                }
                return (.array(page.updates.map { Open311Documents.update($0, reference) }), next)
            }
        }
    }

    /// The reports a `GET requests` asks for: those listed by id, in the order listed, or
    /// those its filter takes, in id order, at most ``Open311Query/maxAnswers``.
    private func requests(_ query: Open311Query, base: String) async throws -> JSONValue {
        let reports = if let ids = query.ids { try await service.reports(ids: ids) } else {
            try await service.page(query.filter, after: query.after, limit: Open311Query.maxAnswers)
        }
        let photos = try await service.photos(of: reports)
        return .array(reports.map { serviceRequest($0, photo: photos[$0.id]?.first, base: base) })
    }

    /// A report as a service request, with its first photo's address.
    private func serviceRequest(_ report: Report, photo: PhotoRow?, base: String) -> JSONValue {
        Open311Documents.request(report, reference, mediaURL: photo.map { base + PhotoView.url($0.sha256) })
    }

    /// Files the form's report for the integration whose API key it carries: the same
    /// rules and duplicate hints as `POST /v1/reports`, the same change and history.
    private func file(_ request: Request) async throws -> JSONValue {
        let form = try Open311Filing.form(try await Self.collectForm(request))
        guard let key = form.values["api_key"] else { throw Forbidden(reason: "api_key is required: an API key of the city's integrations") }
        let identity: AccountService.Identity
        do { identity = try await accounts.authenticate(apiKey: key) } catch is Unauthorized {
            throw Forbidden(reason: "api_key is not an API key of this service, or it was revoked")
        }
        guard identity.role == .integration else { throw Forbidden(reason: "api_key must be an integration's") }
        // Every broken rule at once: the form's own (a lat that is no number), then the
        // draft's in GeoReport's words, each field named once.
        let (members, problems) = form.members()
        let drafted = Result { () throws(ValidationErrors) in try ReportIntake.draft(members, reference: reference, area: service.intake) }
        var issues = problems
        if case .failure(let errors) = drafted {
            let named = Set(problems.map(\.field))
            issues += Open311Filing.theirs(errors).issues.filter { !named.contains($0.field) }
        }
        guard case .success(let draft) = drafted, issues.isEmpty else { throw ValidationErrors(issues) }
        guard let key = try ReportWriteRoutes.idempotencyKey(request) else {
            return Open311Filing.Filed(try await service.file(draft, by: identity.caller)).answer
        }
        // The reply is kept as JSON and given again in the format the retry asks for.
        let outcome = try await service.file(draft, by: identity.caller, key: key, body: try form.canonical()) { filing in
            StoredAnswer.Reply(status: 201, headers: [:], body: try JSONEncoder().encode(Open311Filing.Filed(filing)))
        }
        switch outcome {
        case .first(let reply), .replayed(let reply): return try JSONDecoder().decode(Open311Filing.Filed.self, from: reply.body).answer
        }
    }

    /// A form body's bytes, once its media type and size are checked.
    static func collectForm(_ request: Request) async throws -> ByteBuffer {
        if let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(),
           type != "application/x-www-form-urlencoded"
        {
            throw HTTPError(.unsupportedMediaType, message: "send the form as application/x-www-form-urlencoded, not \(type.prefix(60))")
        }
        var request = request
        do { return try await request.collectBody(upTo: JSONBody.maxBytes) } catch {
            throw HTTPError(.contentTooLarge, message: "the form is larger than \(JSONBody.maxBytes / 1024) KiB")
        }
    }

    /// Registers one endpoint of the table in one format; its errors, a bad parameter
    /// among them, answered in the standard's form (a body's broken rules a 400, as
    /// GeoReport has it, each field its own error).
    private func on(
        _ router: Router<AppRequestContext>, _ path: String, _ format: Open311Format, root: String,
        method: HTTPRequest.Method = .get, success: HTTPResponse.Status = .ok,
        _ answer: @escaping @Sendable (Request, QueryParameters, AppRequestContext) async throws -> JSONValue
    ) {
        onPage(router, path, format, root: root, method: method, success: success) { (try await answer($0, $1, $2), nil) }
    }

    /// ``on(_:_:_:root:method:success:_:)`` for an answer that may be a page of more: with
    /// the next page's parameters, it carries a `Link` to it (RFC 8288).
    private func onPage(
        _ router: Router<AppRequestContext>, _ path: String, _ format: Open311Format, root: String,
        method: HTTPRequest.Method = .get, success: HTTPResponse.Status = .ok,
        _ answer: @escaping @Sendable (Request, QueryParameters, AppRequestContext) async throws -> (JSONValue, next: [(String, String)]?)
    ) {
        let endpoint = Endpoint.open311Endpoints.first { $0.path == "/open311/v2/\(path).\(format.rawValue)" && $0.method == method }!
        router.on(RouterPath(endpoint.path), method: method) { request, context in
            do {
                try context.drawRateLimit(endpoint)
                let query = try QueryParameters(request, endpoint: endpoint)
                _ = try query.text("jurisdiction_id", maxLength: 100)
                // The store may read in place (SQLite): off the threads that move the bytes.
                let (value, next) = try await Blocking.offPool { try await answer(request, query, context) }
                var response = try Self.response(value, root: root, format: format)
                response.status = success
                if let next { response.headers[.link] = "<\(OGCRoutes.base(request, publicURL: publicURL) + endpoint.path)?\(Self.query(next))>; rel=\"next\"" }
                return response
            } catch {
                guard let known = APIError.from(error) else { throw error }
                let status: HTTPResponse.Status = known.status == .unprocessableContent ? .badRequest : known.status
                var response = try Self.response(Open311Documents.errors(status: status.code, descriptions: Self.descriptions(known)), root: "errors", format: format)
                response.status = status
                response.headers[.cacheControl] = "no-store"
                for (name, value) in known.headers.map({ ($0.name, $0.value) }) where response.headers[name] == nil { response.headers[name] = value }
                return response
            }
        }
    }

    /// A query of these parameters, each value percent-encoded.
    static func query(_ items: [(String, String)]) -> String {
        items.map { "\($0)=\(URLText.encode($1))" }.joined(separator: "&")
    }

    /// An error's texts: one for each field at fault, naming it and its rule.
    static func descriptions(_ error: APIError) -> [String] {
        let fields = error.fields.isEmpty ? error.field.map { [ValidationError(field: $0, error.message)] } ?? [] : error.fields
        return fields.isEmpty ? [error.message] : fields.map { "\($0.field): \($0.message)" }
    }

    /// A contact of the about file as one line: its name, phone and email.
    static func contact(_ c: AboutText.Contact) -> String {
        ([c.name] + [c.phone, c.email].compactMap { $0 }).joined(separator: ", ")
    }

    static func response(_ value: JSONValue, root: String, format: Open311Format) throws -> Response {
        switch format {
        case .json: try Responses.json(value, type: "application/json; charset=utf-8")
        case .xml: Responses.body(Array(Open311XML.document(value, root: root).utf8), type: "text/xml; charset=utf-8")
        }
    }
}

extension HTTPField.Name {
    /// The next page of a paged answer (RFC 8288).
    static let link = Self("Link")!
}
