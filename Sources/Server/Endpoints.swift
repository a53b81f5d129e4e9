import Foundation

/// Every endpoint of the API: its path, what it answers and the parameters it takes.
///
/// Routes are registered from this table, ``QueryParameters`` refuses any parameter an
/// endpoint does not list here, and `/openapi.json` is written from it: the document
/// cannot drift from the server.
struct Endpoint: Sendable {
    /// The path in OpenAPI form, e.g. `/v1/clusters/{id}/leaves`, which is also how
    /// Hummingbird's router writes it (`{name}` captures a segment, `{y}.png` its start).
    var path: String
    var summary: String
    var parameters: [Parameter]
    /// The media type of a successful answer.
    var answers: String
    var answerDescription: String

    /// What a `204 No Content` means here, for the endpoints that answer one.
    var noContent: String? = nil

    /// The names of its query parameters.
    var queryNames: [String] { parameters.filter { $0.location == .query }.map(\.name) }

    struct Parameter: Sendable {
        enum Location: String, Sendable { case query, path }
        var name: String
        var location: Location = .query
        var required = false
        var description: String
        /// The JSON Schema of the value.
        var schema: [String: JSONValue]
    }
}

extension Endpoint {
    // Parameters several endpoints share.
    static let bbox = Parameter(
        name: "bbox", description: "The area: west,south,east,north in degrees (WGS84). A west edge east of the east edge crosses the antimeridian.",
        schema: ["type": "string", "pattern": "^[^,]+,[^,]+,[^,]+,[^,]+$", "example": "30.2,50.3,30.8,50.6"])
    static let status = Parameter(
        name: "status", description: "Count only reports with these status codes (see /v1/statuses), comma-separated.",
        schema: ["type": "string", "example": "new,verifying"])
    static let datetime = Parameter(
        name: "datetime", description: "Count only reports created at this RFC 3339 instant or in this interval (`start/end`, `..` for an open end), ends included.",
        schema: ["type": "string", "example": "2026-01-01T00:00:00Z/.."])
    static let clusterID = Parameter(
        name: "id", location: .path, required: true, description: "A cluster id, as /v1/clusters gives it (it encodes the zoom and the cell).",
        schema: ["type": "integer", "minimum": 1, "maximum": 9_007_199_254_740_991])
    static func limit(default value: Int, max: Int) -> Parameter {
        Parameter(name: "limit", description: "How many features to return at most.", schema: ["type": "integer", "minimum": 1, "maximum": .int(max), "default": .int(value)])
    }

    static let health = Endpoint(
        path: "/health", summary: "Whether the service is up, how many reports it holds, and how the tile cache is doing.", parameters: [],
        answers: "application/json",
        answerDescription: "`{\"status\":\"ok\",\"reports\":N,\"tile_cache\":{\"tiles\",\"bytes\",\"hits\",\"misses\",\"evictions\",\"invalidations\"}}`")
    static let openAPI = Endpoint(
        path: "/openapi.json", summary: "This document.", parameters: [], answers: "application/json", answerDescription: "An OpenAPI 3.1 document.")
    static let clusters = Endpoint(
        path: "/v1/clusters", summary: "The clusters and lone reports of an area at a zoom: what the map shows.",
        parameters: [
            { var p = bbox; p.required = true; return p }(),
            Parameter(name: "zoom", required: true, description: "The map zoom.", schema: ["type": "integer", "minimum": 0, "maximum": 20]),
            status, datetime,
        ],
        answers: "application/geo+json",
        answerDescription: "A FeatureCollection. Clusters carry `cluster: true`, `cluster_id`, `count`, `count_abbrev`, `expansion_zoom`, `statuses` and a `bbox`; lone reports carry their own properties.")
    static let cluster = Endpoint(
        path: "/v1/clusters/{id}", summary: "One cluster.", parameters: [clusterID, status, datetime],
        answers: "application/geo+json", answerDescription: "A cluster Feature.")
    static let children = Endpoint(
        path: "/v1/clusters/{id}/children", summary: "What a cluster becomes one zoom deeper.", parameters: [clusterID, status, datetime],
        answers: "application/geo+json", answerDescription: "A FeatureCollection of clusters and lone reports.")
    static let leaves = Endpoint(
        path: "/v1/clusters/{id}/leaves", summary: "The reports inside a cluster, paged.",
        parameters: [
            clusterID, limit(default: 100, max: 10_000),
            Parameter(name: "offset", description: "How many reports to skip.", schema: ["type": "integer", "minimum": 0, "maximum": 2_147_483_647, "default": 0]),
            status, datetime,
        ],
        answers: "application/geo+json", answerDescription: "A FeatureCollection of reports with `numberMatched`, `numberReturned` and a `next` link until the last page.")
    static let reports = Endpoint(
        path: "/v1/reports", summary: "The reports of an area in id order, paged by cursor.",
        parameters: [
            bbox, status, datetime,
            { var p = limit(default: 100, max: 10_000); p.description += " Larger values are clamped to 10000."; p.schema["maximum"] = nil; return p }(),
            Parameter(name: "after", description: "The cursor: only reports with ids above this one (the `next` link sets it).", schema: ["type": "integer", "minimum": 0]),
        ],
        answers: "application/geo+json", answerDescription: "A FeatureCollection with `numberMatched`, `numberReturned` and a `next` link until the last page.")
    static let export = Endpoint(
        path: "/v1/export", summary: "The whole matching data set, streamed in id order (bounded memory, however large).",
        parameters: [
            Parameter(name: "format", description: "geojson (a FeatureCollection), geojsonseq (one Feature per line) or csv.",
                      schema: ["type": "string", "enum": ["geojson", "geojsonseq", "csv"], "default": "geojson"]),
            bbox, status, datetime,
            Parameter(name: "crs", description: "Reproject the coordinates (through PROJ), e.g. EPSG:3857, EPSG:6384 (UCS-2000 / Ukraine TM zone 10), EPSG:32636; the answer names it in `Content-Crs`. Without it: WGS84 longitude, latitude.",
                      schema: ["type": "string", "example": "EPSG:3857"]),
        ],
        answers: "application/geo+json", answerDescription: "The reports in the chosen format (`application/geo+json`, `application/geo+json-seq` or `text/csv`), as an attachment.")
    static let report = Endpoint(
        path: "/v1/reports/{id}", summary: "One report.",
        parameters: [Parameter(name: "id", location: .path, required: true, description: "The report number.", schema: ["type": "integer", "minimum": 1, "maximum": 2_147_483_647])],
        answers: "application/geo+json", answerDescription: "A Feature.")
    static let search = Endpoint(
        path: "/v1/search", summary: "Reports by a fragment of a phone number, or by report id.",
        parameters: [
            Parameter(name: "q", required: true, description: "Digits in any written form: `067 12`, `+38(067)…`, `#1234`.", schema: ["type": "string", "example": "067 12"]),
            limit(default: 50, max: 1_000),
        ],
        answers: "application/geo+json", answerDescription: "A FeatureCollection, the exact id first, then newest; `numberMatched` says how many matched in all.")
    static let districts = Endpoint(
        path: "/v1/districts", summary: "The districts of Kyiv.", parameters: [], answers: "application/json", answerDescription: "An array of `{code, name_uk, name_en, center}`.")
    static let objectTypes = Endpoint(
        path: "/v1/object-types", summary: "What posters are glued to, with the balance holders that fit each.", parameters: [],
        answers: "application/json", answerDescription: "An array of `{code, name_uk, name_en, balance_holders}`.")
    static let statuses = Endpoint(
        path: "/v1/statuses", summary: "The statuses of a report; `open` ones still need work.", parameters: [],
        answers: "application/json", answerDescription: "An array of `{code, name_uk, name_en, open}`.")

    static let tile = Endpoint(
        path: "/v1/tiles/{z}/{x}/{y}.png", summary: "A PNG map tile of the clustered markers: 256 px, or 512 px as `{y}@2x.png`; transparent where there is nothing.",
        parameters: [
            Parameter(name: "z", location: .path, required: true, description: "The zoom (the range is in /v1/tiles.json).", schema: ["type": "integer", "minimum": 0, "maximum": 20]),
            Parameter(name: "x", location: .path, required: true, description: "The column, 0 at 180° W.", schema: ["type": "integer", "minimum": 0]),
            Parameter(name: "y", location: .path, required: true, description: "The row, 0 at the north; `@2x` after it for a 512-px tile.",
                      schema: ["type": "string", "pattern": "^[0-9]+(@2x)?$", "example": "1385@2x"]),
            status, datetime,
        ],
        answers: "image/png", answerDescription: "The tile: clusters as discs with their counts, single reports as dots coloured by status.",
        noContent: "Nothing shows on the tile.")
    static let tileJSON = Endpoint(
        path: "/v1/tiles.json", summary: "The tiles as a TileJSON 3.0.0 document, for map clients.", parameters: [status, datetime],
        answers: "application/json", answerDescription: "TileJSON 3.0.0: the URL template (with the filters given), zooms, bounds of the data, attribution.")
    static let mapPage = Endpoint(
        path: "/", summary: "The map page: the tiles on a Leaflet map, search in the visible area, search by phone or id.",
        parameters: [
            Parameter(name: "q", description: "Search for this phone fragment or report id when the page opens (a link to a search).", schema: ["type": "string", "example": "067 12"]),
            Parameter(name: "selftest", description: "Check the page (tiles load, both searches answer) and write the outcome into `#selftest`; `make e2e` uses it.", schema: ["type": "string", "example": "1"]),
        ],
        answers: "text/html", answerDescription: "An HTML page.")
    static let leafletFile = Endpoint(
        path: "/leaflet/{file}", summary: "Leaflet, as installed by Debian's libjs-leaflet, for the map page.",
        parameters: [Parameter(name: "file", location: .path, required: true, description: "leaflet.js or leaflet.css.", schema: ["type": "string", "enum": ["leaflet.js", "leaflet.css"]])],
        answers: "application/javascript", answerDescription: "The file (JavaScript or CSS).")
    static let leafletImage = Endpoint(
        path: "/leaflet/images/{file}", summary: "Leaflet's images (layer control, markers).",
        parameters: [Parameter(name: "file", location: .path, required: true, description: "An image of Leaflet's.", schema: ["type": "string", "example": "layers.png"])],
        answers: "image/png", answerDescription: "The image.")

    // OGC API – Features.
    static let collectionID = Parameter(
        name: "collectionId", location: .path, required: true, description: "The collection: `reports`.", schema: ["type": "string", "enum": ["reports"]])
    static let f = Parameter(name: "f", description: "The format: only GeoJSON is offered.", schema: ["type": "string", "enum": ["json", "geojson"]])
    static let ogcLanding = Endpoint(
        path: "/ogc", summary: "OGC API – Features landing page.", parameters: [], answers: "application/json", answerDescription: "Links to the API definition, conformance and collections.")
    static let ogcConformance = Endpoint(
        path: "/ogc/conformance", summary: "The OGC API – Features conformance classes met.", parameters: [], answers: "application/json", answerDescription: "`{conformsTo: [...]}`.")
    static let ogcCollections = Endpoint(
        path: "/ogc/collections", summary: "The collections (one: reports).", parameters: [], answers: "application/json", answerDescription: "`{collections, links}`.")
    static let ogcCollection = Endpoint(
        path: "/ogc/collections/{collectionId}", summary: "The reports collection: extent and links.", parameters: [collectionID],
        answers: "application/json", answerDescription: "A collection description.")
    static let ogcItems = Endpoint(
        path: "/ogc/collections/{collectionId}/items", summary: "The reports, paged by `next` links.",
        parameters: [
            collectionID, bbox, datetime, status,
            { var p = limit(default: 10, max: 10_000); p.description += " Larger values are clamped to 10000."; p.schema["maximum"] = nil; return p }(),
            Parameter(name: "after", description: "The cursor the `next` link sets.", schema: ["type": "integer", "minimum": 0]), f,
        ],
        answers: "application/geo+json", answerDescription: "A FeatureCollection with `numberMatched`, `numberReturned`, `timeStamp` and `links`.")
    static let ogcItem = Endpoint(
        path: "/ogc/collections/{collectionId}/items/{featureId}", summary: "One report.",
        parameters: [collectionID, Parameter(name: "featureId", location: .path, required: true, description: "The report number.", schema: ["type": "integer", "minimum": 1]), f],
        answers: "application/geo+json", answerDescription: "A Feature.")

    /// The whole API, in the order the document lists it.
    static let all: [Endpoint] = [
        clusters, cluster, children, leaves, tile, tileJSON, reports, report, export, search, districts, objectTypes, statuses,
        ogcLanding, ogcConformance, ogcCollections, ogcCollection, ogcItems, ogcItem, mapPage, leafletFile, leafletImage, health, openAPI,
    ]
}

/// A JSON value, for documents built in code.
enum JSONValue: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    case string(String), int(Int), number(Double), bool(Bool), null, array([JSONValue]), object([(String, JSONValue)])

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }

    /// Compact JSON, members in the order given.
    var text: String {
        switch self {
        case .string(let s): return Interchange.GeoJSON.string(s)
        case .int(let n): return String(n)
        case .number(let x): return x.isFinite ? "\(x)" : "null"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { Interchange.GeoJSON.string($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }
}

enum OpenAPI {
    /// The OpenAPI 3.1 document of ``Endpoint/all``.
    static let document: String = {
        let error: JSONValue = [
            "type": "object",
            "properties": ["error": [
                "type": "object", "required": ["code", "message", "field"],
                "properties": ["code": ["type": "string"], "message": ["type": "string"], "field": ["type": ["string", "null"]]],
            ]],
        ]
        var paths: [(String, JSONValue)] = []
        for e in Endpoint.all {
            let parameters: [JSONValue] = e.parameters.map { p in
                ["name": .string(p.name), "in": .string(p.location.rawValue), "required": .bool(p.required), "description": .string(p.description),
                 "schema": .object(p.schema.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })]
            }
            var responses: [(String, JSONValue)] = [
                ("200", ["description": .string(e.answerDescription), "content": .object([(e.answers, .object([]))])]),
                ("304", ["description": "Not modified: the `ETag` given in `If-None-Match` is still current."]),
                ("4XX", ["description": "Bad input or nothing there: the parameter and the rule are named.",
                         "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]]]),
            ]
            if let noContent = e.noContent { responses.insert(("204", ["description": .string(noContent)]), at: 1) }
            let get: JSONValue = ["summary": .string(e.summary), "parameters": .array(parameters), "responses": .object(responses)]
            paths.append((e.path, ["get": get]))
        }
        let document: JSONValue = [
            "openapi": "3.1.0",
            "info": ["title": "PosterWatch", "version": "1", "description": "Reports of illegally placed posters: clusters for maps, search by phone fragment, reports by area."],
            "paths": .object(paths),
            "components": ["schemas": ["Error": error]],
        ]
        return document.text + "\n"
    }()
}

import Interchange
