/// The endpoints of Open311 GeoReport v2 (`Open311Routes.swift`), in the table of
/// `Endpoints.swift`: each in JSON and in XML, chosen by the path's extension as the
/// standard has it.
extension Endpoint {
    /// One jurisdiction is served: any `jurisdiction_id` is taken and changes nothing.
    static let jurisdiction = Parameter(
        name: "jurisdiction_id", description: "Taken for clients that send it; this server serves one jurisdiction.",
        schema: ["type": "string", "maxLength": 100])

    static func open311(_ path: String, format: Open311Format, parameters: [Parameter] = [], summary: String, answer: String) -> Endpoint {
        Endpoint(
            path: "/open311/v2/\(path).\(format.rawValue)", summary: summary, parameters: [jurisdiction] + parameters,
            answers: [format.mediaType], answerDescription: answer + " Errors are the standard's: `[{code, description}]` (XML: `<errors><error>`).")
    }

    static let open311ServiceCode = Parameter(
        name: "service_code", location: .path, required: true, description: "An object type's code (a service of /open311/v2/services).",
        schema: ["type": "string", "maxLength": 100])

    static let open311Endpoints = Open311Format.allCases.flatMap { format in
        [
            open311(
                "discovery", format: format, summary: "Open311 GeoReport v2 discovery: the endpoint, its formats and where API keys come from.",
                answer: "The discovery document."),
            open311(
                "services", format: format, summary: "Open311 services: one per object type a poster is found on.",
                answer: "The services, each with `metadata` true (see its definition)."),
            open311(
                "services/{service_code}", format: format, parameters: [open311ServiceCode],
                summary: "An Open311 service's definition: the attributes a filing of it takes (phones, balance holder, district, violator).",
                answer: "The service definition; an unknown code is a 404."),
        ]
    }
}

/// The two formats of GeoReport v2, named by the path's extension.
enum Open311Format: String, CaseIterable, Sendable {
    case json, xml

    var mediaType: String { self == .json ? "application/json" : "text/xml" }
}
