import Geometry
import HTTPTypes
import Hummingbird
import ReportModel
import ReportService

/// `/open311/v2/`: Open311 GeoReport v2, through which a city's contact centre or a
/// FixMyStreet instance reads PosterWatch with no code of its own. Each answer in JSON and
/// in XML by the path's extension, and every error in the standard's form, never ours.
struct Open311Routes {
    let service: ReportService
    var reference: ReferenceData { service.reference }
    let publicURL: String?
    /// Who answers for the service (from the about file), for discovery.
    let contact: String?

    func register(on router: Router<AppRequestContext>) {
        for format in Open311Format.allCases {
            on(router, "discovery", format, root: "discovery") { request, _ in
                Open311Documents.discovery(base: OGCRoutes.base(request, publicURL: publicURL), contact: contact)
            }
            on(router, "services", format, root: "services") { _, _ in Open311Documents.services(reference) }
            on(router, "services/{service_code}", format, root: "service_definition") { _, context in
                let code = context.parameters.get("service_code") ?? ""
                guard let type = reference.objectTypes.first(where: { $0.code == code }) else {
                    throw HTTPError(.notFound, message: "no service \"\(code.prefix(100))\"; the services are /open311/v2/services")
                }
                return Open311Documents.definition(type, reference)
            }
            on(router, "requests/{service_request_id}", format, root: "service_requests") { request, context in
                let text = context.parameters.get("service_request_id") ?? ""
                guard text.first != "0", text.count <= 10, text.utf8.allSatisfy({ (48...57).contains($0) }), let id = Int64(text) else {
                    throw ValidationError(field: "service_request_id", "must be a report's id: 1 to 10 digits, the first not 0")
                }
                guard id <= ReportLimits.maxID, let report = try await service.report(id: id) else { throw HTTPError(.notFound, message: "no public report \(id)") }
                let photo = try await service.photos(of: report).first
                let base = OGCRoutes.base(request, publicURL: publicURL)
                return [Open311Documents.request(report, reference, mediaURL: photo.map { base + "/v1/photos/\($0.sha256).jpg" })]
            }
        }
    }

    /// Registers one endpoint of the table in one format; its errors, a bad parameter
    /// among them, answered in the standard's form.
    private func on(
        _ router: Router<AppRequestContext>, _ path: String, _ format: Open311Format, root: String,
        _ answer: @escaping @Sendable (Request, AppRequestContext) async throws -> JSONValue
    ) {
        let endpoint = Endpoint.open311Endpoints.first { $0.path == "/open311/v2/\(path).\(format.rawValue)" }!
        router.on(RouterPath(endpoint.path), method: .get) { request, context in
            do {
                _ = try QueryParameters(request, endpoint: endpoint).text("jurisdiction_id", maxLength: 100)
                return try Self.response(try await answer(request, context), root: root, format: format)
            } catch {
                guard let known = APIError.from(error) else { throw error }
                var response = try Self.response(Open311Documents.errors(status: known.status.code, description: Self.description(known)), root: "errors", format: format)
                response.status = known.status
                response.headers[.cacheControl] = "no-store"
                return response
            }
        }
    }

    /// An error's text, naming every field at fault and its rule.
    static func description(_ error: APIError) -> String {
        let fields = error.fields.isEmpty ? error.field.map { [ValidationError(field: $0, error.message)] } ?? [] : error.fields
        return fields.isEmpty ? error.message : fields.map { "\($0.field): \($0.message)" }.joined(separator: "; ")
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
