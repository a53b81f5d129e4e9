import Geometry

/// A coordinate reference system named the way clients name one: an EPSG code or
/// OGC's CRS84 (WGS84 longitude/latitude).
///
/// Parsing only checks the spelling; whether PROJ knows the code is decided when a
/// ``Reprojector`` is made for it. Both errors name the field `crs`, so an export
/// request answers 400 either way.
///
/// Accepted forms (prefixes are case-insensitive, spaces around the text are ignored):
/// - `EPSG:3857`, `epsg:3857`
/// - `http://www.opengis.net/def/crs/EPSG/0/3857`
/// - `OGC:CRS84`, `http://www.opengis.net/def/crs/OGC/1.3/CRS84`
///
/// ```swift
/// let crs = try CRS(parsing: "http://www.opengis.net/def/crs/EPSG/0/6384")
/// crs.identifier      // "EPSG:6384"
/// crs.uri             // "http://www.opengis.net/def/crs/EPSG/0/6384"  (for Content-Crs)
/// crs.isWGS84LonLat   // false: coordinates go through PROJ
/// ```
public struct CRS: Sendable, Hashable, CustomStringConvertible {
    /// The EPSG code, or nil for OGC CRS84.
    public let epsgCode: Int?

    /// OGC CRS84: WGS84 with longitude first, as GeoJSON has it.
    public static let crs84 = CRS(code: nil)
    /// EPSG:4326, WGS84 in degrees (written longitude first here, like CRS84).
    public static let wgs84 = CRS(code: 4326)
    /// EPSG:3857, Web Mercator in metres.
    public static let webMercator = CRS(code: 3857)

    private init(code: Int?) {
        epsgCode = code
    }

    /// The CRS with EPSG code `code`, which must be from 1 to 999,999,999.
    public init(epsg code: Int) throws(ValidationError) {
        guard (1...999_999_999).contains(code) else {
            throw ValidationError(field: "crs", "the EPSG code must be from 1 to 999999999, got \(code)")
        }
        self.init(code: code)
    }

    /// Parses one of the accepted forms (see the type's documentation). Anything else is
    /// a ``ValidationError`` on `field` (`crs` unless told).
    public init(parsing text: Substring, field: String = "crs") throws(ValidationError) {
        var trimmed = text
        while trimmed.first == " " { trimmed.removeFirst() }
        while trimmed.last == " " { trimmed.removeLast() }
        let lower = trimmed.lowercased()
        if lower == "ogc:crs84" || lower == "http://www.opengis.net/def/crs/ogc/1.3/crs84" {
            self.init(code: nil)
            return
        }
        for prefix in ["epsg:", "http://www.opengis.net/def/crs/epsg/0/"] where lower.hasPrefix(prefix) {
            let digits = lower.dropFirst(prefix.count)
            guard (1...9).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }), let code = Int(digits), code > 0 else {
                throw ValidationError(
                    field: field,
                    "the EPSG code must be 1 to 9 digits and not 0, got \"\(trimmed.dropFirst(prefix.count).prefix(40))\" in \"\(trimmed.prefix(80))\"")
            }
            self.init(code: code)
            return
        }
        throw ValidationError(
            field: field,
            "must be EPSG:NNNN, http://www.opengis.net/def/crs/EPSG/0/NNNN, OGC:CRS84 or http://www.opengis.net/def/crs/OGC/1.3/CRS84; got \"\(trimmed.prefix(80))\"")
    }

    public init(parsing text: String, field: String = "crs") throws(ValidationError) {
        try self.init(parsing: text[...], field: field)
    }

    /// The short canonical name: `EPSG:NNNN` (no leading zeros), or `OGC:CRS84`.
    public var identifier: String {
        epsgCode.map { "EPSG:\($0)" } ?? "OGC:CRS84"
    }

    /// The OGC URI, as OGC API Features puts it in `Content-Crs` (inside `<…>`) and in links.
    public var uri: String {
        epsgCode.map { "http://www.opengis.net/def/crs/EPSG/0/\($0)" } ?? "http://www.opengis.net/def/crs/OGC/1.3/CRS84"
    }

    /// The OGC URN (`urn:ogc:def:crs:EPSG::6384`), as GeoJSON's `crs` member names it
    /// for GDAL and QGIS.
    public var urn: String {
        "urn:ogc:def:crs:" + identifier.replacingOccurrences(of: ":", with: "::")
    }

    /// Whether this is WGS84 longitude/latitude (CRS84 or EPSG:4326): the stored
    /// coordinates need no transformation at all.
    public var isWGS84LonLat: Bool {
        epsgCode == nil || epsgCode == 4326
    }

    public var description: String { identifier }
}
