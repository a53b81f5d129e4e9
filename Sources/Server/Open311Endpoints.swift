import Interchange
import ReportService

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

    /// `after`, this server's extension: read on past a full answer.
    static func open311After(_ of: String) -> Parameter {
        Parameter(
            name: "after", description: "An extension: only \(of) after this id (the last of an answer of \(Open311Query.maxAnswers), or the one a `Link` to the next page gives, to read on).",
            schema: ["type": "string", "pattern": "^[1-9][0-9]{0,17}$"])
    }

    static func open311Dates(_ of: String) -> [Parameter] {
        ["start_date", "end_date"].map { name in
            Parameter(
                name: name,
                description: "The \(name == "start_date" ? "earliest" : "latest") \(of) to include, a W3C date-time with its zone. The window is at most \(Open311Query.maxDays) days: a missing end is \(Open311Query.maxDays) days after the start, a missing start \(Open311Query.maxDays) days before the end; neither, the last \(Open311Query.maxDays) days.",
                schema: ["type": "string", "format": "date-time", "maxLength": 40])
        }
    }

    /// `GET requests`: public reports as service requests.
    static func open311Requests(_ format: Open311Format) -> Endpoint {
        open311(
            "requests", format: format,
            parameters: [
                Parameter(
                    name: "service_request_id", description: "Report ids, separated by commas (at most \(Open311Query.maxIDs)): these reports, in this order; the other parameters are then not applied.",
                    schema: ["type": "string", "pattern": .string("^[1-9][0-9]{0,9}(,[1-9][0-9]{0,9}){0,\(Open311Query.maxIDs - 1)}$")]),
                Parameter(name: "service_code", description: "Services (object types), separated by commas.", schema: ["type": "string", "maxLength": 1_200], listsObjectTypes: true),
                Parameter(name: "status", description: "`open`, `closed` or both, separated by commas.", schema: ["type": "string", "pattern": "^(open|closed)(,(open|closed))*$"]),
            ] + open311Dates("filing time (requested_datetime)") + [open311After("requests (by `service_request_id`)")],
            summary: "Public reports as Open311 service requests, in id order: those listed by `service_request_id`, or those of the services, open or closed, filed in the window. At most \(Open311Query.maxAnswers) an answer: a client reads on with `after`, the last `service_request_id` it got.",
            answer: "`[request]`, each as `requests/{id}` gives it; a bad parameter is a 400 naming it.", schema: "Open311Requests")
    }

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
            open311Requests(format),
            open311Filing(format),
            open311(
                "requests/{service_request_id}", format: format, parameters: [open311RequestID],
                summary: "A public report as an Open311 service request: `open` or `closed` by its status (the status itself in `status_notes`), its object type as the service, its balance holder as the agency, its first photo as `media_url`. Never the filer.",
                answer: "`[request]`; a report that is not public, or none, is a 404.", schema: "Open311Requests"),
            open311(
                "servicerequestupdates", format: format, parameters: open311Dates("update") + [open311After("updates (by `update_id`)")],
                summary: "mySociety's service request updates: the status changes of public reports in the window, oldest first (at most \(Open311Query.maxAnswers) an answer, and \(ReportService.statusUpdateScan) changes of the log read for one: an answer that stops before the window's end, with fewer updates or none, carries `Link: <…>; rel=\"next\"`, the next page's address; only an answer without it is the window's end). `status` is the state of FixMyStreet's extension, `external_status_code` our status; never who made the change or the note. Read from the change log: what retention forgot is not listed.",
                answer: "`[request_update]` (XML: `<service_request_updates><request_update>`); a bad date is a 400 naming it.", schema: "Open311Updates"),
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
            ("extended_attributes", object([("status", mySocietyState), ("external_status_code", string)])),
        ]))),
        ("Open311Updates", array(of: object([
            ("update_id", string), ("service_request_id", string), ("status", mySocietyState),
            ("updated_datetime", ["type": "string", "format": "date-time"]), ("description", string), ("media_url", nullableString),
            ("external_status_code", string),
        ]))),
    ]

    /// The states of FixMyStreet's Open311 extension.
    static let mySocietyState: JSONValue = [
        "enum": ["open", "investigating", "action_scheduled", "in_progress", "fixed", "duplicate", "not_councils_responsibility", "no_further_action", "internal_referral", "closed"],
    ]
}
