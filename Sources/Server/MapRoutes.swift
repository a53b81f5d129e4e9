import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Interchange
import Synchronization
import Tiles

/// The map page at `/` and the Leaflet files it loads, served from where Debian's
/// `libjs-leaflet` installs them: nothing comes from the internet.
struct MapRoutes {
    /// The page with its configuration: the base map, when the deployment has one, and
    /// the marker colours and sizes of the tiles (one style for tiles and page). Built,
    /// and its tag hashed, once.
    let page: Response
    let leaflet: LeafletFiles
    /// The offline base layer (`scripts/basemap.sh` writes it), built into the binary.
    let baseMap: Response = {
        var response = Responses.body(Array(PackageResources.basemap_geojson), type: "application/geo+json")
        response.headers[.cacheControl] = LeafletFiles.cacheControl
        return response
    }()

    init(configuration: ServerConfiguration, statusCodes: [String], style: TileStyle) {
        var statusColors: [(String, JSONValue)] = []
        for (code, color) in zip(statusCodes, style.statusColors.colors) { statusColors.append((code, .string(color.css))) }
        let baseMap: JSONValue = configuration.baseMapURL.map { url in
            ["url": .string(url), "attribution": .string(configuration.baseMapAttribution ?? "")]
        } ?? .null
        let settings: JSONValue = [
            "baseMap": baseMap,
            "statusColors": .object(statusColors),
            "fallbackColor": .string(style.statusColors.fallback.css),
            "clusterColors": [.string(style.fewColor.css), .string(style.manyColor.css), .string(style.veryManyColor.css)],
            "manyFrom": .int(style.manyFrom), "veryManyFrom": .int(style.veryManyFrom),
            "clusterRadius": .number(style.clusterRadius), "radiusPerDecade": .number(style.radiusPerDecade),
            "maxClusterRadius": .number(style.maxClusterRadius),
            "selfTests": .bool(configuration.pageSelfTests),
        ]
        // `<` escaped, so no value can close the script element.
        let json = settings.text.replacingOccurrences(of: "<", with: "\\u003c")
        let html = String(decoding: PackageResources.map_html, as: UTF8.self).replacingOccurrences(of: "/*CONFIG*/null", with: json)
        var page = Responses.body(Array(html.utf8), type: "text/html; charset=utf-8")
        page.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy(html: html, baseMapURL: configuration.baseMapURL)
        page.headers[.referrerPolicy] = "no-referrer"
        self.page = page
        leaflet = LeafletFiles(directory: configuration.leafletDirectory)
    }

    /// The page's policy: scripts only from this server and the page's own inline script,
    /// allowed by its hash (so an injected script never runs); pictures from here, the
    /// base map's server and the page's own previews; requests only to this server; no
    /// framing. Inline styles stay allowed: the page colours markers with them.
    static func contentSecurityPolicy(html: String, baseMapURL: String?) -> String {
        let inline = html.components(separatedBy: "<script>").dropFirst().map { $0.components(separatedBy: "</script>")[0] }
        let hashes = inline.map { "'sha256-" + Data(SHA256.hash(data: Data($0.utf8))).base64EncodedString() + "'" }
        let tiles = baseMapURL.flatMap(origin).map { " " + $0 } ?? ""
        return ["default-src 'none'", "script-src 'self' " + hashes.joined(separator: " "), "style-src 'self' 'unsafe-inline'",
                "img-src 'self' data: blob:" + tiles, "connect-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"]
            .joined(separator: "; ")
    }

    func register(on router: Router<AppRequestContext>) {
        router.get(RouterPath(Endpoint.mapPage.path)) { request, _ in
            _ = try QueryParameters(request, endpoint: .mapPage)
            return page
        }
        router.read(.baseMap) { _, _, _ in baseMap }
        router.read(.leafletFile) { _, _, context in try leaflet.response(context.parameters.get("file") ?? "") }
        router.read(.leafletImage) { _, _, context in try leaflet.response("images/" + (context.parameters.get("file") ?? "")) }
    }
}

/// Leaflet's script, stylesheet and images, read once from its install directory (and
/// their tags hashed once).
final class LeafletFiles: Sendable {
    let directory: String
    private let loaded = Mutex<[String: Response]>([:])
    /// Leaflet is versioned by its package, so browsers may keep it a day.
    static let cacheControl = "public, max-age=86400"

    init(directory: String) { self.directory = directory }

    /// The answer for `name` (`leaflet.js`, `leaflet.css` or `images/NAME.png`); anything
    /// else, or a file not installed, is a 404 that says what to install.
    func response(_ name: String) throws -> Response {
        let image = name.hasPrefix("images/")
        let base = image ? name.dropFirst(7) : name[...]
        let allowed = image
            ? base.hasSuffix(".png") && base.dropLast(4).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") } && base.count > 4
            : ["leaflet.js", "leaflet.css"].contains(base)
        guard allowed else {
            throw APIError(.notFound, code: "not_found", message: "no Leaflet file \"\(name.prefix(60))\" is served", field: "file")
        }
        if let response = loaded.withLock({ $0[name] }) { return response }
        guard let data = FileManager.default.contents(atPath: directory + "/" + name) else {
            if FileManager.default.fileExists(atPath: directory + "/leaflet.js") {
                throw APIError(.notFound, code: "not_found", message: "Leaflet has no file \"\(name.prefix(60))\"", field: "file")
            }
            throw APIError(
                .notFound, code: "not_installed",
                message: "\(name) is not in \(directory): install Debian's libjs-leaflet (make run does) or give serve --leaflet-dir", field: "file")
        }
        let type = image ? "image/png" : name.hasSuffix(".js") ? "application/javascript; charset=utf-8" : "text/css; charset=utf-8"
        var response = Responses.body(Array(data), type: type)
        response.headers[.cacheControl] = Self.cacheControl
        loaded.withLock { $0[name] = response }
        return response
    }
}

extension Color {
    /// `#rrggbb`, or `#rrggbbaa` when not opaque.
    var css: String {
        let text = description
        return alpha == 255 ? String(text.dropLast(2)) : text
    }
}

extension HTTPField.Name {
    static let referrerPolicy = Self("Referrer-Policy")!
}
