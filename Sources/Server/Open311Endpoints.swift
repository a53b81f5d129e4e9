/// The endpoints of Open311 GeoReport v2 (`Open311Routes.swift`), in the table of
/// `Endpoints.swift`: each in JSON and in XML, chosen by the path's extension as the
/// standard has it.
extension Endpoint {
    /// One jurisdiction is served: any `jurisdiction_id` is taken and changes nothing.
    static let jurisdiction = Parameter(
        name: "jurisdiction_id", description: "Taken for clients that send it; this server serves one jurisdiction.",
        schema: ["type": "string", "maxLength": 100, "pattern": "^[^\\u0000]*$"])

    static func open311(_ path: String, format: Open311Format, parameters: [Parameter] = [], summary: String, answer: String, schema: String) -> Endpoint {
        var endpoint = Endpoint(
            path: "/open311/v2/\(path).\(format.rawValue)", summary: summary, parameters: [jurisdiction] + parameters,
            answers: [format.mediaType], answerDescription: answer + " Errors are the standard's: `[{code, description}]` (XML: `<errors><error>`).",
            answerSchema: format == .json ? schema : nil)
        endpoint.errors = format == .json ? ("application/json", "Open311Errors") : ("text/xml", nil)
        return endpoint
    }

    static let open311ServiceCode = Parameter(
        name: "service_code", location: .path, required: true, description: "An object type's code (a service of /open311/v2/services).",
        schema: ["type": "string", "maxLength": 100])

    /// `POST requests`: a filing through Open311.
    static func open311Filing(_ format: Open311Format) -> Endpoint {
        var endpoint = open311(
            "requests", format: format,
            summary: "File a report through Open311 with an integration's `api_key` (in the form): the service's code, `lat` and `long`, `address_string`, the service's attributes (`attribute[city]`, `attribute[phones]`, `attribute[balance_holder]`, `attribute[district]`, `attribute[violator]`) and `description` as the comment. The same rules, duplicate hints (`service_notice`), change and history as `POST /v1/reports`; the requester's personal fields are taken and not kept.",
            answer: "`[{service_request_id, service_notice, account_id}]`; a missing, unknown or revoked `api_key` is a 403, each broken rule a 400 naming its field.",
            schema: "Open311Filed")
        endpoint.method = .post
        endpoint.requestBody = "Open311NewRequest"
        endpoint.requestType = "application/x-www-form-urlencoded"
        endpoint.success = .created
        return endpoint
    }

    static let open311RequestID = Parameter(
        name: "service_request_id", location: .path, required: true, description: "A report's id.",
        schema: ["type": "string", "pattern": "^[1-9][0-9]{0,9}$"])

    static let open311Endpoints = Open311Format.allCases.flatMap { format in
        [
            open311(
                "discovery", format: format, summary: "Open311 GeoReport v2 discovery: the endpoint, its formats and where API keys come from.",
                answer: "The discovery document.", schema: "Open311Discovery"),
            open311(
                "services", format: format, summary: "Open311 services: one per object type a poster is found on.",
                answer: "The services, each with `metadata` true (see its definition).", schema: "Open311Services"),
            open311(
                "services/{service_code}", format: format, parameters: [open311ServiceCode],
                summary: "An Open311 service's definition: the attributes a filing of it takes (phones, balance holder, district, violator).",
                answer: "The service definition; an unknown code is a 404.", schema: "Open311ServiceDefinition"),
            open311Filing(format),
            open311(
                "requests/{service_request_id}", format: format, parameters: [open311RequestID],
                summary: "A public report as an Open311 service request: `open` or `closed` by its status (the status itself in `status_notes`), its object type as the service, its balance holder as the agency, its first photo as `media_url`. Never the filer.",
                answer: "`[request]`; a report that is not public, or none, is a 404.", schema: "Open311Requests"),
        ]
    }
}

/// The two formats of GeoReport v2, named by the path's extension.
enum Open311Format: String, CaseIterable, Sendable {
    case json, xml

    var mediaType: String { self == .json ? "application/json" : "text/xml" }
}

extension OpenAPI {
    /// The shapes of the Open311 answers, as GeoReport v2 and its schemas have them.
    static let open311Schemas: [(String, JSONValue)] = [
        ("Open311Errors", array(of: object([("code", integer), ("description", string)]))),
        ("Open311Discovery", object([
            ("changeset", string), ("contact", nullableString), ("key_service", string),
            ("endpoints", array(of: object([("specification", string), ("url", string), ("changeset", string), ("type", string), ("formats", array(of: string))]))),
        ])),
        ("Open311Services", array(of: object([
            ("service_code", string), ("service_name", string), ("description", nullableString), ("metadata", ["type": "boolean"]),
            ("type", ["enum": ["realtime", "batch", "blackbox"]]), ("keywords", nullableString), ("group", nullableString),
        ]))),
        ("Open311ServiceDefinition", object([
            ("service_code", string),
            ("attributes", array(of: object(
                [
                    ("variable", ["type": "boolean"]), ("code", string), ("datatype", string), ("required", ["type": "boolean"]),
                    ("datatype_description", nullableString), ("order", integer), ("description", string),
                    ("values", array(of: object([("key", string), ("name", string)]))),
                ], required: ["variable", "code", "datatype", "required", "order", "description"]))),
        ])),
        ("Open311Filed", array(of: object([("service_request_id", string), ("service_notice", nullableString), ("account_id", nullableString)]))),
        ("Open311NewRequest", body(Open311Filing.members)),
        ("Open311Requests", array(of: object([
            ("service_request_id", string), ("status", ["enum": ["open", "closed"]]), ("status_notes", nullableString), ("service_name", nullableString),
            ("service_code", string), ("description", nullableString), ("agency_responsible", nullableString), ("service_notice", nullableString),
            ("requested_datetime", ["type": "string", "format": "date-time"]), ("updated_datetime", ["type": "string", "format": "date-time"]),
            ("expected_datetime", ["type": ["string", "null"], "format": "date-time"]), ("address", string), ("address_id", nullableString),
            ("zipcode", nullableString), ("lat", number), ("long", number), ("media_url", ["type": ["string", "null"], "format": "uri"]),
        ]))),
    ]
}
