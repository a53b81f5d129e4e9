/// `/openapi.json`: the OpenAPI 3.1 document of ``Endpoint/all``, with a schema for every
/// answer, so that a client (or schemathesis, in `make test`) can check bodies as well as
/// parameters.
enum OpenAPI {
    /// The document, with status lists checked against `statusCodes` (the served ones).
    static func document(statusCodes: [String]) -> String {
        var paths: [(String, JSONValue)] = []
        for e in Endpoint.all {
            let parameters: [JSONValue] = e.parameters.map { p in
                var schema = p.schema
                if p.listsStatuses { schema["pattern"] = .string(Patterns.statuses(statusCodes)) }
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
            var responses: [(String, JSONValue)] = [
                ("200", ["description": .string(e.answerDescription), "content": .object(content)]),
                ("304", ["description": "Not modified: the `ETag` given in `If-None-Match` is still current."]),
                ("4XX", ["description": "Bad input or nothing there: the parameter and the rule are named.",
                         "content": ["application/json": ["schema": ref("Error")]]]),
            ]
            if let noContent = e.noContent { responses.insert(("204", ["description": .string(noContent)]), at: 1) }
            let get: JSONValue = ["summary": .string(e.summary), "parameters": .array(parameters), "responses": .object(responses)]
            paths.append((e.path, ["get": get]))
        }
        let document: JSONValue = [
            "openapi": "3.1.0",
            "info": ["title": "PosterWatch", "version": "1", "description": "Reports of illegally placed posters: clusters for maps, search by phone fragment, reports by area."],
            "paths": .object(paths),
            "components": ["schemas": .object(schemas)],
        ]
        return document.text + "\n"
    }

    static func ref(_ name: String) -> JSONValue { ["$ref": .string("#/components/schemas/" + name)] }

    static func object(_ properties: [(String, JSONValue)], required: [String]? = nil) -> JSONValue {
        ["type": "object", "required": .array((required ?? properties.map(\.0)).map { .string($0) }), "properties": .object(properties)]
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
    static let schemas: [(String, JSONValue)] = [
        ("Error", object([
            ("error", object([("code", string), ("message", string), ("field", nullableString)])),
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
        ("ReportCollection", object([
            ("type", ["const": "FeatureCollection"]), ("features", array(of: ref("Report"))),
            ("numberMatched", ["type": "integer", "minimum": 0]), ("numberReturned", ["type": "integer", "minimum": 0]),
            ("links", array(of: ref("Link"))),
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
    ]
}
