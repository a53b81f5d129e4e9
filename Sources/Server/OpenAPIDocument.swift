import ChangeFeed
import Interchange
import ReportModel
import Webhooks

/// `/openapi.json`: the OpenAPI 3.1 document of ``Endpoint/all``, with a schema for every
/// answer, so that a client (or schemathesis, in `make test`) can check bodies as well as
/// parameters.
enum OpenAPI {
    /// The document, with lists of statuses, object types and districts checked against
    /// the served ones.
    static func document(_ reference: ReferenceData) -> String {
        var paths: [(String, [(String, JSONValue)])] = []
        for e in Endpoint.all {
            let operation = (e.method.rawValue.lowercased(), self.operation(e, reference))
            if let i = paths.firstIndex(where: { $0.0 == e.path }) { paths[i].1.append(operation) } else { paths.append((e.path, [operation])) }
        }
        let document: JSONValue = [
            "openapi": "3.1.0",
            "info": ["title": "PosterWatch", "version": "1", "description": "Reports of illegally placed posters: clusters for maps, search by phone fragment, reports by area, accounts."],
            "paths": .object(paths.map { ($0.0, .object($0.1)) }),
            "components": [
                "schemas": .object(schemas + bodies),
                "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "An access token from /v1/auth/login, /register or /refresh."]],
            ],
        ]
        return document.text + "\n"
    }

    static func operation(_ e: Endpoint, _ reference: ReferenceData) -> JSONValue {
        let parameters: [JSONValue] = e.parameters.map { p in
            var schema = p.schema
            if p.listsStatuses { schema["pattern"] = .string(Patterns.statuses(reference.statuses.map(\.code))) }
            if p.listsObjectTypes { schema["pattern"] = .string(Patterns.list(reference.objectTypes.map(\.code))) }
            if p.namesDistrict { schema["enum"] = .array(reference.districts.map { .string($0.code) }) }
            return [
                "name": .string(p.name), "in": .string(p.location.rawValue), "required": .bool(p.required), "description": .string(p.description),
                "schema": .object(schema.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }),
            ]
        }
        let content: [(String, JSONValue)] = e.answers.map { type in
            if let schema = e.answerSchema, type.hasSuffix("json") { return (type, ["schema": ref(schema)]) }
            if type.hasPrefix("image/") { return (type, ["schema": ["type": "string", "format": "binary"]]) }
            return (type, ["schema": ["type": "string"]])
        }
        var success: JSONValue = ["description": .string(e.answerDescription)]
        if !content.isEmpty { success = ["description": .string(e.answerDescription), "content": .object(content)] }
        var responses: [(String, JSONValue)] = [(String(e.success.code), success)]
        if let noContent = e.noContent { responses.append(("204", ["description": .string(noContent)])) }
        if let already = e.alreadyThere, case .object(var members) = success {
            members = members.map { $0.0 == "description" ? ($0.0, .string(already)) : $0 }
            responses.append(("200", .object(members)))
        }
        if e.method == .get { responses.append(("304", ["description": "Not modified: the `ETag` given in `If-None-Match` is still current."])) }
        responses.append(("4XX", [
            "description": "Bad input (every field at fault named), nothing there, a missing or invalid token (401), a role that may not (403), too many attempts (429).",
            "content": .object([(e.errors.type, .object([("schema", e.errors.schema.map(ref) ?? string)]))]),
        ]))
        var operation: [(String, JSONValue)] = [("summary", .string(e.summary)), ("parameters", .array(parameters))]
        if e.requestBody == "Image" {
            let binary: JSONValue = ["schema": ["type": "string", "format": "binary"]]
            let files: JSONValue = ["schema": object([("files", ["type": "array", "minItems": 1, "maxItems": 5, "items": ["type": "string", "format": "binary"]])])]
            operation.append(("requestBody", ["required": true, "content": ["image/jpeg": binary, "image/png": binary, "multipart/form-data": files]]))
        } else if let body = e.requestBody {
            operation.append(("requestBody", ["required": true, "content": .object([(e.requestType, .object([("schema", ref(body))]))])]))
        }
        if e.access != .anyone {
            operation.append(("security", [["bearer": []]]))
            operation[0].1 = .string(e.summary + " Needs \(e.access.needs).")
        }
        operation.append(("responses", .object(responses)))
        return .object(operation)
    }

    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/" + name)] }

    static func object(_ properties: [(String, JSONValue)], required: [String]? = nil) -> JSONValue {
        ["type": "object", "required": .array((required ?? properties.map(\.0)).map { .string($0) }), "properties": .object(properties)]
    }

    /// A request body: exactly these members, no others; those required, and at least
    /// `minMembers` of them.
    static func body(_ members: [BodyMember], minMembers: Int = 0) -> JSONValue {
        var schema: [(String, JSONValue)] = [
            ("type", "object"), ("required", .array(members.filter(\.required).map { .string($0.name) })),
            ("properties", .object(members.map { ($0.name, $0.schema) })), ("additionalProperties", false),
        ]
        if minMembers > 0 { schema.append(("minProperties", .int(minMembers))) }
        return .object(schema)
    }

    static func array(of items: JSONValue, count: Int? = nil) -> JSONValue {
        guard let count else { return ["type": "array", "items": items] }
        return ["type": "array", "items": items, "minItems": .int(count), "maxItems": .int(count)]
    }

    static let string: JSONValue = ["type": "string"]
    static let integer: JSONValue = ["type": "integer"]
    static let number: JSONValue = ["type": "number"]
    static let nullableString: JSONValue = ["type": ["string", "null"]]

    /// The shapes of the answers.
    static let schemas: [(String, JSONValue)] = ownSchemas + autodialSchemas + assignmentSchemas + open311Schemas

    private static let ownSchemas: [(String, JSONValue)] = [
        ("Error", object([
            ("error", object([
                ("code", string), ("message", string), ("field", nullableString),
                ("fields", array(of: object([("field", string), ("message", string)]))),
            ])),
        ])),
        ("Point", object([("type", ["const": "Point"]), ("coordinates", array(of: number, count: 2))])),
        ("Link", object([("href", string), ("rel", string), ("type", string), ("title", string)], required: ["href", "rel"])),
        ("Report", object([
            ("type", ["const": "Feature"]), ("id", integer), ("geometry", ref("Point")),
            ("properties", object([
                ("address", string), ("city", string), ("district", string), ("object_type", string), ("balance_holder", nullableString),
                ("violator", nullableString), ("phones", array(of: string)), ("comment", nullableString), ("status", string),
                ("created_at", ["type": "string", "format": "date-time"]), ("updated_at", ["type": "string", "format": "date-time"]),
            ])),
        ])),
        ("BaseLayer", object([
            ("type", ["const": "FeatureCollection"]), ("bbox", array(of: number, count: 4)), ("source", string),
            ("features", array(of: object([
                ("type", ["const": "Feature"]),
                ("properties", object([("kind", ["enum": ["river", "lake"]]), ("level", ["type": "integer", "minimum": 1, "maximum": 4])], required: ["kind"])),
                ("geometry", object([("type", ["enum": ["LineString", "Polygon"]]), ("coordinates", ["type": "array"])])),
            ]))),
        ])),
        ("ReportCollection", object([
            ("type", ["const": "FeatureCollection"]), ("features", array(of: ref("Report"))),
            ("numberMatched", ["type": "integer", "minimum": 0]), ("numberMatchedAtLeast", ["type": "integer", "minimum": 0]),
            ("numberReturned", ["type": "integer", "minimum": 0]), ("links", array(of: ref("Link"))),
        ], required: ["type", "features"])),
        ("ClusterFeature", object([
            ("type", ["const": "Feature"]), ("id", integer), ("bbox", array(of: number, count: 4)), ("geometry", ref("Point")),
            ("properties", object([
                ("cluster", ["const": true]), ("cluster_id", integer), ("count", ["type": "integer", "minimum": 2]), ("count_abbrev", string),
                ("expansion_zoom", integer), ("statuses", ["type": "object", "additionalProperties": ["type": "integer", "minimum": 0]]),
            ])),
        ])),
        ("ClusterCollection", object([
            ("type", ["const": "FeatureCollection"]), ("features", array(of: ["anyOf": [ref("ClusterFeature"), ref("Report")]])),
            ("bbox", array(of: number, count: 4)), ("zoom", integer),
        ], required: ["type", "features"])),
        ("Health", object([
            ("status", ["const": "ok"]), ("reports", ["type": "integer", "minimum": 0]),
            ("tile_cache", object(["tiles", "bytes", "hits", "misses", "evictions", "invalidations"].map { ($0, ["type": "integer", "minimum": 0]) })),
        ])),
        ("Districts", array(of: object([("code", string), ("name_uk", string), ("name_en", string), ("center", array(of: number, count: 2))]))),
        ("ObjectTypes", array(of: object([
            ("code", string), ("name_uk", string), ("name_en", string),
            ("balance_holders", array(of: object([("code", string), ("name_uk", string), ("name_en", string), ("object_types", array(of: string))]))),
        ]))),
        ("Statuses", array(of: object([("code", string), ("name_uk", string), ("name_en", string), ("open", ["type": "boolean"])]))),
        ("Transitions", array(of: object([
            ("from", array(of: string)), ("to", string), ("by", array(of: ["type": "string", "enum": .array(StatusTransition.actors.map { .string($0) })])),
            ("note_required", ["type": "boolean"]), ("duplicate_of_required", ["type": "boolean"]),
        ]))),
        ("TileJSON", object([
            ("tilejson", ["const": "3.0.0"]), ("name", string), ("description", string), ("version", string), ("attribution", string),
            ("scheme", ["const": "xyz"]), ("tiles", array(of: string)), ("minzoom", integer), ("maxzoom", integer),
            ("bounds", array(of: number, count: 4)), ("center", array(of: number, count: 3)),
        ])),
        ("OGCLanding", object([("title", string), ("description", string), ("links", array(of: ref("Link")))])),
        ("OGCConformance", object([("conformsTo", array(of: string))])),
        ("OGCCollection", object([
            ("id", string), ("title", string), ("description", string), ("itemType", string),
            ("extent", object([
                ("spatial", object([("bbox", array(of: array(of: number, count: 4))), ("crs", string)])),
                ("temporal", object([("interval", array(of: array(of: nullableString, count: 2))), ("trs", string)])),
            ])),
            ("crs", array(of: string)), ("storageCrs", string), ("links", array(of: ref("Link"))),
        ])),
        ("OGCCollections", object([("collections", array(of: ref("OGCCollection"))), ("links", array(of: ref("Link")))])),
        ("OpenAPIDocument", object([("openapi", string), ("info", ["type": "object"]), ("paths", ["type": "object"])])),
        ("TokenPair", object([
            ("access_token", string), ("token_type", ["const": "Bearer"]), ("expires_in", ["type": "integer", "minimum": 1]), ("refresh_token", string),
        ])),
        ("FiledReport", ["allOf": [ref("Report"), object([("possible_duplicates", array(of: ref("DuplicateHint")))])]]),
        ("DuplicateHint", object([("id", integer), ("distance_m", ["type": "number", "minimum": 0]), ("shared_phones", array(of: string))])),
        ("Nearby", object([("possible_duplicates", array(of: ref("DuplicateHint")))])),
        ("History", object([
            ("history", array(of: object([
                ("at", ["type": "string", "format": "date-time"]), ("action", ["type": "string", "enum": ["filed", "edited", "transition", "hidden", "unhidden", "deleted", "assigned", "unassigned"]]),
                ("from_status", nullableString), ("to_status", nullableString), ("note", nullableString),
                ("changes", array(of: object([("field", string), ("before", nullableString), ("after", nullableString)]))),
                ("by", object([("id", ["type": ["integer", "null"]]), ("name", nullableString), ("api_key", ["type": ["integer", "null"]])], required: [])),
            ], required: ["at", "action"]))),
            ("next", ["type": "integer", "minimum": 1]),
        ], required: ["history"])),
        ("Changes", object([
            ("changes", array(of: object([
                ("seq", ["type": "integer", "minimum": 1]), ("type", ["type": "string", "enum": .array(ChangeType.allCases.map { .string($0.rawValue) })]),
                ("id", integer), ("at", ["type": "string", "format": "date-time"]), ("report", ref("Report")),
                ("hidden", object([("at", ["type": "string", "format": "date-time"]), ("note", string)])),
                ("change", object([
                    ("account_id", ["type": ["integer", "null"]]), ("api_key_id", ["type": ["integer", "null"]]), ("from_status", nullableString),
                    ("to_status", nullableString), ("note", nullableString),
                    ("fields", array(of: object([("field", string), ("before", nullableString), ("after", nullableString)]))),
                    ("moved", count),
                ], required: [])),
                ("filer_id", integer), ("phone", string), ("status", phoneStatus),
            ], required: ["seq", "type", "id"]))),
            ("last_seq", ["type": "integer", "minimum": 0]),
        ])),
        ("Notifications", object([
            ("notifications", array(of: object([
                ("id", ["type": "integer", "minimum": 1]), ("report_id", integer),
                ("type", ["enum": ["report.status_changed", "report.assigned", "report.unassigned"]]), ("at", ["type": "string", "format": "date-time"]),
                ("from_status", nullableString), ("to_status", nullableString), ("note", nullableString), ("read", ["type": "boolean"]),
            ], required: ["id", "report_id", "type", "at", "read"]))),
            ("unread_count", ["type": "integer", "minimum": 0]), ("next", ["type": ["integer", "null"]]),
        ], required: ["notifications", "unread_count"])),
        ("ReadMark", object([("read_up_to", ["type": "integer", "minimum": 0]), ("unread_count", ["type": "integer", "minimum": 0])])),
        ("Me", object([("id", integer), ("name", string), ("email", string), ("phone", string), ("role", role)])),
        ("User", object([
            ("id", integer), ("name", string), ("email", string), ("phone", string), ("role", role), ("disabled", ["type": "boolean"]),
            ("created_at", string), ("last_login_at", nullableString),
        ])),
        ("Users", object([("users", array(of: ref("User"))), ("next", ["type": ["integer", "null"]])], required: ["users"])),
        ("Photo", object([
            ("id", integer), ("sha256", ["type": "string", "pattern": "^[0-9a-f]{64}$"]), ("url", string), ("thumbnail_url", string),
            ("width", integer), ("height", integer), ("bytes", integer),
            ("exif_position", object([("longitude", number), ("latitude", number)])),
        ], required: ["id", "sha256", "url", "thumbnail_url", "width", "height", "bytes"])),
        ("PhotoAdded", ["oneOf": [ref("Photo"), object([("photos", array(of: ref("Photo")))])]]),
        ("PhoneRecord", object([
            ("number", ["type": "string", "pattern": "^[0-9]{8,15}$"]), ("status", phoneStatus),
            ("changed_at", ["type": ["string", "null"], "format": "date-time"]), ("blocked_at", ["type": ["string", "null"], "format": "date-time"]),
            ("reports", object([("total", count), ("open", count), ("by_status", ["type": "object", "additionalProperties": count])])),
            ("first_seen", ["type": ["string", "null"], "format": "date-time"]), ("last_seen", ["type": ["string", "null"], "format": "date-time"]),
            ("districts", array(of: object([("code", string), ("count", count)]))),
            ("violators", array(of: object([("name", string), ("count", count)]))),
            ("history", array(of: object([
                ("at", ["type": "string", "format": "date-time"]), ("action", ["type": "string", "enum": .array(PhoneAction.allCases.map { .string($0.rawValue) })]),
                ("from_status", phoneStatus), ("to_status", phoneStatus), ("moved_reports", count), ("note", nullableString),
                ("by", object([("id", ["type": ["integer", "null"]]), ("api_key", ["type": ["integer", "null"]])], required: [])),
            ], required: ["at", "action", "from_status", "to_status", "moved_reports"]))),
            ("moved_reports", array(of: integer)),
        ], required: ["number", "status", "reports", "districts", "violators", "history"])),
        ("Blocklist", object([
            ("numbers", array(of: blockedNumber)), ("count", count),
        ])),
        ("BlocklistChanges", object([("added", array(of: blockedNumber)), ("removed", array(of: string)), ("last_seq", count)])),
        ("PhoneRanking", object([
            ("phones", array(of: object([
                ("number", string), ("reports", ["type": "integer", "minimum": 1]), ("by_status", ["type": "object", "additionalProperties": count]),
                ("status", phoneStatus), ("blocked", ["type": "boolean"]),
            ]))),
        ])),
        ("Stats", object([
            ("total", count),
            ("by_status", array(of: object([("code", string), ("count", count)]))), ("by_district", array(of: object([("code", string), ("count", count)]))),
            ("by_object_type", array(of: object([("code", string), ("count", count)]))),
            ("by_month", array(of: object([("month", ["type": "string", "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])$"]), ("count", ["type": "integer", "minimum": 1])]))),
        ])),
        ("About", object([
            ("uk", ["anyOf": [aboutSection, ["type": "null"]]]), ("en", ["anyOf": [aboutSection, ["type": "null"]]]),
            ("statuses", array(of: object([("code", string), ("name_uk", string), ("name_en", string), ("open", ["type": "boolean"])]))),
            ("version", string), ("counts", object([("reports", count), ("open_reports", count), ("blocked_numbers", count)])),
        ])),
        ("Webhook", webhook),
        ("NewWebhook", {
            guard case .object(var members) = webhook, case .object(var properties)? = members.first(where: { $0.0 == "properties" })?.1 else { return .null }
            properties.append(("secret", ["type": "string", "pattern": "^whsec_[A-Za-z0-9+/]+={0,2}$", "description": "Shown this once."]))
            members = members.map { $0.0 == "properties" ? ("properties", .object(properties)) : $0 }
            return .object(members)
        }()),
        ("Webhooks", object([("webhooks", array(of: ref("Webhook")))], required: ["webhooks"])),
        ("Deliveries", object([
            ("deliveries", array(of: object([
                ("id", integer), ("seq", integer), ("type", nullableString),
                ("state", ["type": "string", "enum": .array(DeliveryState.allCases.map { .string($0.rawValue) })]),
                ("attempt_count", integer), ("next_at", nullableString), ("last_status", ["type": ["integer", "null"]]), ("last_error", nullableString),
                ("created_at", string), ("finished_at", nullableString),
                ("attempts", array(of: object([
                    ("number", integer), ("at", string), ("status", ["type": ["integer", "null"]]), ("error", nullableString), ("duration_ms", integer),
                ], required: ["number", "at", "duration_ms"]))),
            ], required: ["id", "seq", "state", "attempt_count", "created_at", "attempts"]))),
            ("next", ["type": ["integer", "null"]]),
        ], required: ["deliveries"])),
        ("Sessions", object([
            ("sessions", array(of: object([
                ("id", string), ("created_at", string), ("last_used_at", string), ("expires_at", string), ("current", ["type": "boolean"]),
            ]))),
        ])),
    ]

    /// A report's text of one line, as the reference data's rule takes it: no control
    /// characters, and not U+FFFE or U+FFFF, but in the white space around it, which the
    /// server trims first.
    static let lineText = "^\\s*[^\\u0000-\\u001F\\u007F-\\u009F\\uFFFE\\uFFFF]*\\s*$"
    /// A text of lines (a comment, a note): tabs and line breaks besides.
    static let linesText = "^\\s*[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\uFFFE\\uFFFF]*\\s*$"

    /// A person's or a key's name: at most 100 characters, no control characters, not
    /// only white space.
    static let personName: JSONValue = [
        "type": "string", "minLength": 1, "maxLength": 100, "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        "description": "1 to 100 characters, no control characters, not only white space.",
    ]

    static let role: JSONValue = ["type": "string", "enum": ["inspector", "supervisor", "admin"]]

    static let count: JSONValue = ["type": "integer", "minimum": 0]
    static let aboutSection = object([
        ("title", string), ("purpose", string), ("legal_basis", array(of: string)), ("handling", string),
        ("contacts", array(of: object([("name", string), ("phone", string), ("email", string), ("address", string), ("hours", string)], required: ["name"]))),
    ])
    static let phoneStatus: JSONValue = ["type": "string", "enum": .array(PhoneStatus.allCases.map { .string($0.rawValue) })]
    static let blockedNumber = object([("number", string), ("blocked_at", ["type": "string", "format": "date-time"]), ("report_count", count)])

    static let changeTypes: JSONValue = ["type": "string", "enum": .array(ChangeType.allCases.map { .string($0.rawValue) })]

    static let webhook = object([
        ("id", integer), ("url", string), ("events", array(of: changeTypes)), ("description", string), ("enabled", ["type": "boolean"]),
        ("disabled_reason", nullableString), ("created_at", string), ("updated_at", string),
    ], required: ["id", "url", "events", "description", "enabled", "created_at", "updated_at"])

    static let webhookURL: JSONValue = [
        "type": "string", "maxLength": .int(WebhookDraft.maxURLLength), "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s#]+$",
        "description": "An absolute http or https URL with a host, without a user name, password or fragment. It may be an internal address.",
    ]
    static let webhookEvents: JSONValue = ["type": "array", "minItems": 1, "uniqueItems": true, "items": changeTypes]
    static let webhookDescription: JSONValue = [
        "type": ["string", "null"], "maxLength": .int(WebhookDraft.maxDescriptionLength), "pattern": "^[^\\u0000-\\u001F\\u007F-\\u009F]*$",
        "description": "What it is for; null or absent: none.",
    ]

    /// The request bodies, each declared with its parsing (`RequestBody.swift`); a new
    /// report's two forms and a report's patch with their intake (`ReportIntake.swift`).
    /// Rules that depend on what is stored (an email already registered, the current
    /// password, one's own account) and the list of common passwords are in the
    /// descriptions, not in the schemas: they are 422s all the same.
    static let bodies: [(String, JSONValue)] = {
        let declared: [any RequestBody.Type] = [
            Registration.self, Login.self, Refresh.self, MePatch.self, PasswordChange.self, Transition.self, ReadUpTo.self, Hide.self,
            Note<UnhideNote>.self, Verification.self, Note<PhoneNote>.self, WebhookRegistration.self, WebhookChange.self, UserPatch.self,
            AssignmentRequest.self, BulkAssignment.self, AssignmentOrder.self,
        ]
        return declared.map { ($0.schemaName, $0.schema) } + [("NewReport", ReportIntake.newReportSchema), ("ReportPatch", ReportIntake.patchSchema)]
    }()
}
