import Accounts
import Foundation
import HTTPTypes
import Interchange
import ReportModel
import ReportService

/// Every endpoint of the API: its path, what it answers and the parameters it takes.
///
/// Routes are registered from this table, ``QueryParameters`` refuses any parameter an
/// endpoint does not list here, and `/openapi.json` is written from it: the document
/// cannot drift from the server.
struct Endpoint: Sendable {
    /// Who may call an endpoint.
    enum Access: Sendable, Equatable {
        /// Anyone, with or without a token.
        case anyone
        /// A signed-in account whose role includes this one.
        case role(Role)
        /// A caller whose role includes one of these (an API key's `integration` among them).
        case anyOf([Role])
    }

    /// The path in OpenAPI form, e.g. `/v1/clusters/{id}/leaves`, which is also how
    /// Hummingbird's router writes it (`{name}` captures a segment, `{y}.png` its start).
    var path: String
    var summary: String
    var parameters: [Parameter]
    /// The media types of a successful answer, the usual one first.
    var answers: [String]
    var answerDescription: String
    /// The schema of a successful JSON answer: a component of ``OpenAPI``'s document.
    var answerSchema: String? = nil

    /// What a `204 No Content` means here, for the endpoints that answer one.
    var noContent: String? = nil
    /// What a `200` means where the success is a `201` (a creation that found its thing
    /// already there), with the same answer.
    var alreadyThere: String? = nil

    var method: HTTPRequest.Method = .get
    /// Who may call it; checked in one place (``Router/handle(_:_:)``), before the handler.
    var access: Access = .anyone
    /// The request body's schema (a component of ``OpenAPI``'s document), for endpoints that take one.
    var requestBody: String? = nil
    /// The request body's media type.
    var requestType = "application/json"
    /// The status of a successful answer: 200, 201 (created) or 204 (nothing to say).
    var success: HTTPResponse.Status = .ok
    /// How its errors are answered: our `Error` object, or another standard's (a media
    /// type and, for JSON, a component schema; none: text).
    var errors: (type: String, schema: String?) = ("application/json", "Error")
    /// A rate-limit bucket of its own (sign-ins, token refreshes, registrations); nil: the
    /// writes' bucket for a write, none for a read (``rateClass``).
    var ownRateClass: RateClass? = nil

    /// Which of a client's rate limits a call draws on (``RateLimits``): sign-ins and
    /// registrations their own, every other write the writes'; reads none.
    enum RateClass: String, Sendable, CaseIterable {
        case login, refresh, registration, write
        var plural: String {
            switch self {
            case .login: "sign-ins"
            case .refresh: "token refreshes"
            case .registration: "registrations"
            case .write: "writes"
            }
        }
    }

    /// The rate limit a call draws on: its own bucket when it has one, else the writes'
    /// for a write and none for a read.
    var rateClass: RateClass? { ownRateClass ?? (method == .get ? nil : .write) }

    /// The names of its query parameters.
    var queryNames: [String] { parameters.filter { $0.location == .query }.map(\.name) }

    struct Parameter: Sendable {
        enum Location: String, Sendable { case query, path }
        var name: String
        var location: Location = .query
        var required = false
        var description: String
        /// The JSON Schema of the value: exactly what the server takes, as far as JSON
        /// Schema can say it (the description says the rest).
        var schema: [String: JSONValue]
        /// Whether the value lists status codes (its pattern is made from the served ones).
        var listsStatuses = false
        /// Whether the value lists object type codes, commas between and no spaces (its
        /// pattern is made from the served ones).
        var listsObjectTypes = false
        /// Whether the value is a district code (its enum is made from the served ones).
        var namesDistrict = false
    }
}

/// Regular expressions (ECMA-262, as JSON Schema reads them) of the values the server
/// parses by hand, written to take exactly what the parsers take.
enum Patterns {
    /// A decimal number (`DecimalNumber`), spaces around it allowed.
    static let number = #" *[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)? *"#
    static let bbox = "^" + Array(repeating: number, count: 4).joined(separator: ",") + "$"

    /// An RFC 3339 date-time as `RFC3339.date(from:)` reads it: real calendar days
    /// (29 February in leap years only), seconds up to 60, any fraction, `Z` or an offset.
    static let instant: String = {
        let date = #"(?:[0-9]{4}-(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"#
            + #"|[0-9]{4}-(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"#
            + #"|[0-9]{4}-02-(?:0[1-9]|1[0-9]|2[0-8])"#
            + #"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)"#
        let time = #"[Tt ](?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"#
        return date + time
    }()
    /// An instant, or an interval with at least one end (`..` or nothing for an open one).
    static let datetime = "^(?:\(instant)|\(instant)/(?:\(instant)|\\.\\.)?|(?:\\.\\.)?/\(instant))$"

    /// A comma-separated list of `codes`, nothing around them.
    static func list(_ codes: [String]) -> String {
        let code = "(?:" + codes.joined(separator: "|") + ")"
        return "^\(code)(?:,\(code))*$"
    }

    /// A comma-separated list of `codes`, spaces around each allowed.
    static func statuses(_ codes: [String]) -> String {
        let code = " *(?:" + codes.joined(separator: "|") + ") *"
        return "^\(code)(?:,\(code))*$"
    }

    /// A phone number as ``Phone/normalize(_:field:)`` takes it: separators (space, `-`,
    /// `.`, parentheses) anywhere, `+` before the first digit, and the digits of a
    /// Ukrainian number in one of its written forms, or `+` and 8 to 15 digits (12 when
    /// they start with 380).
    static let phone: String = {
        let s = "[ ().-]*"
        func digits(_ n: String) -> String { "(?:[0-9]\(s)){\(n)}" }
        let ukrainian = "3\(s)8\(s)0\(s)" + digits("9")
        let plus = "\\+\(s)(?:\(ukrainian)|[0-24-9]\(s)\(digits("7,14"))|3\(s)[0-79]\(s)\(digits("6,13"))|3\(s)8\(s)[1-9]\(s)\(digits("5,12")))"
        let local = "(?:\(ukrainian)|8\(s)0\(s)\(digits("9"))|0\(s)\(digits("9"))|[1-9]\(s)\(digits("8")))"
        return "^\(s)(?:\(plus)|\(local))$"
    }()

    /// `EPSG:NNNN` or `OGC:CRS84`, in any case, or their OGC URIs (`CRS(parsing:)`); which
    /// codes PROJ knows no pattern can say.
    static let crs = #"^ *(?:[Ee][Pp][Ss][Gg]:[0-9]{1,9}|[Oo][Gg][Cc]:[Cc][Rr][Ss]84|[Hh][Tt][Tt][Pp]://[Ww][Ww][Ww]\.[Oo][Pp][Ee][Nn][Gg][Ii][Ss]\.[Nn][Ee][Tt]/[Dd][Ee][Ff]/[Cc][Rr][Ss]/(?:[Ee][Pp][Ss][Gg]/0/[0-9]{1,9}|[Oo][Gg][Cc]/1\.3/[Cc][Rr][Ss]84)) *$"#
}

extension Endpoint {
    // Parameters several endpoints share.
    static let bbox = Parameter(
        name: "bbox",
        description: "The area: west,south,east,north in degrees (WGS84), longitudes from -180 to 180, latitudes from -90 to 90, south not north of north. A west edge east of the east edge crosses the antimeridian.",
        schema: ["type": "string", "format": "bbox", "pattern": .string(Patterns.bbox), "example": "30.2,50.3,30.8,50.6"])
    static let status = Parameter(
        name: "status", description: "Only reports with these status codes (see /v1/statuses), comma-separated.",
        schema: ["type": "string", "example": "new,verifying"], listsStatuses: true)
    static let datetime = Parameter(
        name: "datetime",
        description: "Only reports created at this RFC 3339 instant or in this interval (`start/end`, `..` or nothing for an open end), ends included; the end must not be before the start.",
        schema: ["type": "string", "format": "datetime-interval", "pattern": .string(Patterns.datetime), "example": "2026-01-01T00:00:00Z/.."])
    static let clusterID = Parameter(
        name: "id", location: .path, required: true,
        description: "A cluster id, as /v1/clusters gives it (it encodes the zoom and the cell); a number that names no cluster is a 404.",
        schema: ["type": "integer", "minimum": 1, "maximum": 9_007_199_254_740_991, "example": 1_454_998])  // central Kyiv at zoom 8
    static let reportID = Parameter(
        name: "id", location: .path, required: true, description: "The report number.",
        schema: ["type": "integer", "minimum": 1, "maximum": .int(Int(ReportLimits.maxID))])
    static func limit(default value: Int, max: Int) -> Parameter {
        Parameter(name: "limit", description: "How many features to return at most.", schema: ["type": "integer", "minimum": 1, "maximum": .int(max), "default": .int(value)])
    }
    static func clampedLimit(default value: Int, max: Int) -> Parameter {
        Parameter(
            name: "limit", description: "How many features to return at most; larger values are clamped to \(max).",
            schema: ["type": "integer", "minimum": 1, "default": .int(value)])
    }
    static let after = Parameter(
        name: "after", description: "The cursor: only reports with ids above this one (the `next` link sets it).",
        schema: ["type": "integer", "minimum": 0, "maximum": .int(Int(ReportLimits.maxID))])

    static let health = Endpoint(
        path: "/health", summary: "Whether the service is up, how many reports it holds, and how the tile cache is doing.", parameters: [],
        answers: ["application/json"], answerDescription: "The status, the report count and the tile cache's counters.", answerSchema: "Health")
    static let openAPI = Endpoint(
        path: "/openapi.json", summary: "This document.", parameters: [], answers: ["application/json"], answerDescription: "An OpenAPI 3.1 document.",
        answerSchema: "OpenAPIDocument")
    static let clusters = Endpoint(
        path: "/v1/clusters", summary: "The clusters and lone reports of an area at a zoom: what the map shows.",
        parameters: [
            {
                var p = bbox
                p.required = true
                p.description += " At most \(ClusterRoutes.maxCells) grid cells (64 px each) of the zoom may lie in it: a smaller box or a lower zoom otherwise."
                return p
            }(),
            Parameter(name: "zoom", required: true, description: "The map zoom.", schema: ["type": "integer", "minimum": 0, "maximum": 20, "example": 12]),
            status, datetime,
        ],
        answers: ["application/geo+json"], answerDescription: "A FeatureCollection. Clusters carry `cluster: true`, `cluster_id`, `count`, `count_abbrev`, `expansion_zoom`, `statuses` and a `bbox`; lone reports carry their own properties.", answerSchema: "ClusterCollection")
    static let cluster = Endpoint(
        path: "/v1/clusters/{id}", summary: "One cluster.", parameters: [clusterID, status, datetime],
        answers: ["application/geo+json"], answerDescription: "A cluster Feature.", answerSchema: "ClusterFeature")
    static let children = Endpoint(
        path: "/v1/clusters/{id}/children", summary: "What a cluster becomes one zoom deeper.", parameters: [clusterID, status, datetime],
        answers: ["application/geo+json"], answerDescription: "A FeatureCollection of clusters and lone reports.", answerSchema: "ClusterCollection")
    static let leaves = Endpoint(
        path: "/v1/clusters/{id}/leaves", summary: "The reports inside a cluster, paged.",
        parameters: [
            clusterID, limit(default: 100, max: 10_000),
            Parameter(name: "offset", description: "How many reports to skip.", schema: ["type": "integer", "minimum": 0, "maximum": 2_147_483_647, "default": 0]),
            status, datetime,
        ],
        answers: ["application/geo+json"], answerDescription: "A FeatureCollection of reports with `numberMatched`, `numberReturned` and a `next` link until the last page.",
        answerSchema: "ReportCollection")
    static let reports = Endpoint(
        path: "/v1/reports", summary: "The reports of an area in id order, paged by cursor.",
        parameters: [
            bbox, status, datetime, clampedLimit(default: 100, max: ReportRoutes.maxPage), after,
            Parameter(
                name: "assigned",
                description: "By who is assigned to check them: `me` (any signed-in person), `none` or an account's id (supervisors). The answer is then the caller's own (`Cache-Control: private`).",
                schema: ["type": "string", "pattern": "^(me|none|[1-9][0-9]{0,15})$"]),
        ],
        answers: ["application/geo+json"], answerDescription: "A FeatureCollection with `numberMatched`, `numberReturned` and a `next` link until the last page.",
        answerSchema: "ReportCollection")
    static let export = Endpoint(
        path: "/v1/export", summary: "The whole matching data set, streamed in id order (bounded memory, however large).",
        parameters: [
            Parameter(name: "format", description: "geojson (a FeatureCollection), geojsonseq (one Feature per line) or csv.",
                      schema: ["type": "string", "enum": ["geojson", "geojsonseq", "csv"], "default": "geojson"]),
            bbox, status, datetime,
            Parameter(
                name: "crs",
                description: "Reproject the coordinates (through PROJ), e.g. EPSG:3857, EPSG:6384 (UCS-2000 / Ukraine TM zone 10), EPSG:32636; the answer names it in `Content-Crs`. An EPSG code that PROJ does not know is a 400. Without it: WGS84 longitude, latitude.",
                schema: ["type": "string", "format": "crs", "pattern": .string(Patterns.crs), "example": "EPSG:3857"]),
        ],
        answers: ["application/geo+json", "application/geo+json-seq", "text/csv"], answerDescription: "The reports in the chosen format (`application/geo+json`, `application/geo+json-seq` or `text/csv`), as an attachment.", answerSchema: "ReportCollection")
    static let report = Endpoint(
        path: "/v1/reports/{id}", summary: "One report.", parameters: [reportID],
        answers: ["application/geo+json"], answerDescription: "A Feature.", answerSchema: "Report")
    static let search = Endpoint(
        path: "/v1/search", summary: "Reports by a fragment of a phone number, or by report id.",
        parameters: [
            Parameter(
                name: "q", required: true, description: "Digits in any written form: `067 12`, `+38(067)…`, `#1234`; at most 64 characters, at least one digit.",
                schema: ["type": "string", "pattern": "^[^\\u0000]*[0-9][^\\u0000]*$", "maxLength": 64, "example": "067 12"]),
            limit(default: 50, max: ReportRoutes.maxSearch),
        ],
        answers: ["application/geo+json"], answerDescription: "A FeatureCollection, the exact id first, then newest; `numberMatched` says how many matched in all: always for three digits or more (counted in memory), and for one or two up to \(ReportService.defaultSearchCountCap) (`serve` counts no further); past that it is left out and `numberMatchedAtLeast` is \(ReportService.defaultSearchCountCap + 1).",
        answerSchema: "ReportCollection")
    static let districts = Endpoint(
        path: "/v1/districts", summary: "The districts of Kyiv.", parameters: [], answers: ["application/json"],
        answerDescription: "An array of `{code, name_uk, name_en, center}`.", answerSchema: "Districts")
    static let objectTypes = Endpoint(
        path: "/v1/object-types", summary: "What posters are glued to, with the balance holders that fit each.", parameters: [],
        answers: ["application/json"], answerDescription: "An array of `{code, name_uk, name_en, balance_holders}`.", answerSchema: "ObjectTypes")
    static let statuses = Endpoint(
        path: "/v1/statuses", summary: "The statuses of a report; `open` ones still need work.", parameters: [],
        answers: ["application/json"], answerDescription: "An array of `{code, name_uk, name_en, open}`.", answerSchema: "Statuses")
    static let transitions = Endpoint(
        path: "/v1/transitions",
        summary: "The workflow: which status may follow which, and who may make each step (roles, each covering those above it, or `filer`, the account that filed the report).",
        parameters: [], answers: ["application/json"],
        answerDescription: "An array of `{from: [status], to, by: [role or filer], note_required, duplicate_of_required}`, in table order.",
        answerSchema: "Transitions")

    static let tile = Endpoint(
        path: "/v1/tiles/{z}/{x}/{y}.png", summary: "A PNG map tile of the clustered markers: 256 px, or 512 px as `{y}@2x.png`; transparent where there is nothing.",
        parameters: [
            Parameter(name: "z", location: .path, required: true, description: "The zoom (the range is in /v1/tiles.json).", schema: ["type": "integer", "minimum": 0, "maximum": 20, "example": 12]),
            Parameter(name: "x", location: .path, required: true, description: "The column, 0 at 180° W; below 2 to the power z.", schema: ["type": "integer", "minimum": 0, "example": 2394]),
            Parameter(name: "y", location: .path, required: true, description: "The row, 0 at the north, below 2 to the power z; `@2x` after it for a 512-px tile.",
                      schema: ["type": "string", "pattern": "^[0-9]+(@2x)?$", "example": "1385@2x"]),
            status, datetime,
        ],
        answers: ["image/png"], answerDescription: "The tile: clusters as discs with their counts, single reports as dots coloured by status.",
        noContent: "Nothing shows on the tile.")
    static let tileJSON = Endpoint(
        path: "/v1/tiles.json", summary: "The tiles as a TileJSON 3.0.0 document, for map clients.", parameters: [status, datetime],
        answers: ["application/json"], answerDescription: "TileJSON 3.0.0: the URL template (with the filters given), zooms, bounds of the data, attribution.",
        answerSchema: "TileJSON")
    static let mapPage = Endpoint(
        path: "/", summary: "The map page: the tiles on a Leaflet map, search in the visible area, search by phone or id.",
        parameters: [
            Parameter(name: "q", description: "Search for this phone fragment or report id when the page opens (a link to a search).", schema: ["type": "string", "pattern": "^[^\\u0000]*$", "example": "067 12"]),
            Parameter(name: "selftest", description: "Check the page (tiles load, both searches answer; `inspector`: register, file a report with a photo and find it on the map; `supervisor`, with `#login=…&password=…&report=…`: verify and block its phone) and write the outcome into `#selftest`; `make e2e` uses it; the flows that write run only on a server started with `serve --page-self-tests`.", schema: ["type": "string", "example": "1"]),
        ],
        answers: ["text/html"], answerDescription: "An HTML page.")
    static let leafletFile = Endpoint(
        path: "/leaflet/{file}", summary: "Leaflet, as installed by Debian's libjs-leaflet, for the map page.",
        parameters: [Parameter(name: "file", location: .path, required: true, description: "leaflet.js or leaflet.css.", schema: ["type": "string", "enum": ["leaflet.js", "leaflet.css"]])],
        answers: ["application/javascript", "text/css"], answerDescription: "The script or the stylesheet.")
    static let baseMap = Endpoint(
        path: "/v1/basemap.geojson",
        summary: "The map page's offline base layer: the Dnipro, the Desna and the other rivers and lakes around Kyiv from GSHHG 2.3.7 (Wessel & Smith, LGPL-3+, Debian's gmt-gshhg-full), a FeatureCollection of LineStrings (`kind` river, `level` 1 to 4: major to minor) and Polygons (`kind` lake). The page draws it under the clusters, with the districts' names from `/v1/districts`, when the deployment has no `--base-map-url`.",
        parameters: [], answers: ["application/geo+json"], answerDescription: "A GeoJSON FeatureCollection, the same for every request (cached a day).",
        answerSchema: "BaseLayer")
    static let leafletImage = Endpoint(
        path: "/leaflet/images/{file}", summary: "Leaflet's images (layer control, markers).",
        parameters: [Parameter(
            name: "file", location: .path, required: true, description: "An image of Leaflet's; one Leaflet does not have is a 404.",
            schema: ["type": "string", "pattern": "^[A-Za-z0-9-]+\\.png$", "example": "layers.png"])],
        answers: ["image/png"], answerDescription: "The image.")

    // OGC API – Features.
    static let collectionID = Parameter(
        name: "collectionId", location: .path, required: true, description: "The collection: `reports`.", schema: ["type": "string", "enum": ["reports"]])
    static let f = Parameter(name: "f", description: "The format: only GeoJSON is offered.", schema: ["type": "string", "enum": ["json", "geojson"]])
    static let ogcLanding = Endpoint(
        path: "/ogc", summary: "OGC API – Features landing page.", parameters: [], answers: ["application/json"],
        answerDescription: "Links to the API definition, conformance and collections.", answerSchema: "OGCLanding")
    static let ogcConformance = Endpoint(
        path: "/ogc/conformance", summary: "The OGC API – Features conformance classes met.", parameters: [], answers: ["application/json"],
        answerDescription: "`{conformsTo: [...]}`.", answerSchema: "OGCConformance")
    static let ogcCollections = Endpoint(
        path: "/ogc/collections", summary: "The collections (one: reports).", parameters: [], answers: ["application/json"],
        answerDescription: "`{collections, links}`.", answerSchema: "OGCCollections")
    static let ogcCollection = Endpoint(
        path: "/ogc/collections/{collectionId}", summary: "The reports collection: extent and links.", parameters: [collectionID],
        answers: ["application/json"], answerDescription: "A collection description.", answerSchema: "OGCCollection")
    static let ogcItems = Endpoint(
        path: "/ogc/collections/{collectionId}/items", summary: "The reports, paged by `next` links.",
        parameters: [
            collectionID, bbox, datetime, status, clampedLimit(default: 10, max: ReportRoutes.maxPage),
            { var p = after; p.description = "The cursor the `next` link sets."; return p }(), f,
        ],
        answers: ["application/geo+json"], answerDescription: "A FeatureCollection with `numberMatched`, `numberReturned` and `links`.",
        answerSchema: "ReportCollection")
    static let ogcItem = Endpoint(
        path: "/ogc/collections/{collectionId}/items/{featureId}", summary: "One report.",
        parameters: [collectionID, { var p = reportID; p.name = "featureId"; return p }(), f],
        answers: ["application/geo+json"], answerDescription: "A Feature.", answerSchema: "Report")

    /// The whole API, in the order the document lists it.
    static let all: [Endpoint] = [
        clusters, cluster, children, leaves, tile, tileJSON, reports, report, export, search, districts, objectTypes, statuses, transitions,
        ogcLanding, ogcConformance, ogcCollections, ogcCollection, ogcItems, ogcItem, mapPage, baseMap, leafletFile, leafletImage, health, openAPI,
        register, login, refresh, logout, me, updateMe, changePassword, mySessions, endSession, users, updateUser,
        fileReport, nearby, myReports, editReport, transition, hideReport, unhideReport, history, changes, changesStream, myNotifications, readNotifications,
        webhooks, createWebhook, webhook, updateWebhook, deleteWebhook, webhookDeliveries, addPhoto, removePhoto, photoImage, photoThumbnail,
        phone, phoneReports, verifyPhone, blockPhone, unblockPhone, blocklist, blocklistChanges, phoneRanking, stats, about,
    ] + autodialEndpoints + assignmentEndpoints + open311Endpoints
}

