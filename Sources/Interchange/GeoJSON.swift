import Foundation
import Geometry
import ReportModel

/// Reports as RFC 7946 GeoJSON Features.
///
/// A report is a Feature whose top-level `id` is the report number, whose geometry is a
/// Point `[longitude, latitude]` and whose `properties` hold the other fields in snake_case.
/// Absent optional fields are written as `null`. Coordinates have at most 6 decimals,
/// trailing zeros dropped (`30.5`, not `30.500000`); times are RFC 3339 in UTC (``RFC3339``).
///
/// ```swift
/// GeoJSON.feature(report)
/// // {"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[30.5234,50.4501]},
/// //  "properties":{"address":"вул. Хрещатик, 22",…,"phones":["380671234567"],…}}  (one line)
/// ```
public enum GeoJSON {
    /// One compact Feature on one line, without a trailing newline.
    public static func feature(_ report: Report) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        appendFeature(report, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``feature(_:)`` as UTF-8, the fast path of ``ReportWriter``; with
    /// `projected`, the geometry is in that CRS.
    public static func appendFeature(_ report: Report, projected: ProjectedCoordinates? = nil, to out: inout [UInt8]) {
        ByteOutput.append(#"{"type":"Feature","id":"#, to: &out)
        ByteOutput.appendInteger(report.id, to: &out)
        if appendPosition(report.coordinate, projected: projected, before: #","geometry":{"type":"Point","coordinates":["#, separator: UInt8(ascii: ","), to: &out) {
            ByteOutput.append(#"]},"properties":{"address":"#, to: &out)
        } else {
            // No position in that CRS: a Feature without geometry (RFC 7946 §3.2).
            ByteOutput.append(#","geometry":null,"properties":{"address":"#, to: &out)
        }
        ByteOutput.appendJSONString(report.address, to: &out)
        ByteOutput.append(#","city":"#, to: &out)
        ByteOutput.appendJSONString(report.city, to: &out)
        ByteOutput.append(#","district":"#, to: &out)
        ByteOutput.appendJSONString(report.district, to: &out)
        ByteOutput.append(#","object_type":"#, to: &out)
        ByteOutput.appendJSONString(report.objectType, to: &out)
        ByteOutput.append(#","balance_holder":"#, to: &out)
        ByteOutput.appendJSONString(report.balanceHolder, to: &out)
        ByteOutput.append(#","violator":"#, to: &out)
        appendOptional(report.violator, to: &out)
        ByteOutput.append(#","phones":["#, to: &out)
        for (k, phone) in report.phones.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            ByteOutput.appendJSONString(Phone.written(phone), to: &out)
        }
        ByteOutput.append(#"],"comment":"#, to: &out)
        appendOptional(report.comment, to: &out)
        ByteOutput.append(#","status":"#, to: &out)
        ByteOutput.appendJSONString(report.status, to: &out)
        ByteOutput.append(#","created_at":""#, to: &out)
        RFC3339.append(report.createdAt, to: &out)
        ByteOutput.append(#"","updated_at":""#, to: &out)
        RFC3339.append(report.updatedAt, to: &out)
        ByteOutput.append(#""}}"#, to: &out)
    }

    /// A JSON string literal, quotes included, escaped per RFC 8259; e.g. to build the
    /// extra members of ``ReportWriter/begin(members:)``.
    public static func string(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        ByteOutput.appendJSONString(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Degrees as written in coordinates: at most 6 decimals, trailing zeros dropped.
    public static func degrees(_ value: Double) -> String {
        var bytes: [UInt8] = []
        ByteOutput.appendDegrees(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `before`, then the two numbers of a position: degrees (longitude first), or the
    /// projected x and y. Writes nothing and returns false when the CRS has no position
    /// for `c` (PROJ answers NaN or infinity there).
    @discardableResult
    static func appendPosition(
        _ c: Coordinate, projected: ProjectedCoordinates?, before: StaticString = "", separator: UInt8, to out: inout [UInt8]
    ) -> Bool {
        guard let projected else {
            ByteOutput.append(before, to: &out)
            ByteOutput.appendDegrees(c.longitude, to: &out)
            out.append(separator)
            ByteOutput.appendDegrees(c.latitude, to: &out)
            return true
        }
        let p = projected.project(c)
        guard p.x.isFinite, p.y.isFinite else { return false }
        ByteOutput.append(before, to: &out)
        ByteOutput.appendDecimal(p.x, decimals: projected.decimals, to: &out)
        out.append(separator)
        ByteOutput.appendDecimal(p.y, decimals: projected.decimals, to: &out)
        return true
    }

    private static func appendOptional(_ value: String?, to out: inout [UInt8]) {
        if let value {
            ByteOutput.appendJSONString(value, to: &out)
        } else {
            ByteOutput.append("null", to: &out)
        }
    }
}

/// Reports as RFC 4180 CSV: a header row of ``columns``, then one row per report.
///
/// Fields are quoted when they contain `,` `"` CR or LF (quotes doubled); rows end with
/// CRLF; `phones` are joined with `;` (normalized phones never contain one); absent
/// optional fields are empty. Coordinates and
/// times are written as in ``GeoJSON``.
///
/// ```swift
/// CSV.header   // "id,longitude,latitude,address,…,updated_at\r\n"
/// CSV.row(report)
/// // 7,30.5234,50.4501,"вул. Хрещатик, 22",Київ,…,380671234567;380501234567,,new,…\r\n
/// ```
public enum CSV {
    /// The columns in the order they are written. Reading finds them by name, in any order.
    public static let columns = [
        "id", "longitude", "latitude", "address", "city", "district", "object_type", "balance_holder", "violator",
        "phones", "comment", "status", "created_at", "updated_at",
    ]

    /// The columns a file must have: the others may be left out.
    public static let requiredColumns: Set<String> = [
        "longitude", "latitude", "address", "city", "district", "object_type", "balance_holder", "phones",
    ]

    /// The header row, with its CRLF.
    public static var header: String { columns.joined(separator: ",") + "\r\n" }

    /// One row, with its CRLF.
    public static func row(_ report: Report) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        appendRow(report, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The header row when positions are projected: `x` and `y` instead of `longitude` and `latitude`.
    public static var projectedHeader: String { (["id", "x", "y"] + columns.dropFirst(3)).joined(separator: ",") + "\r\n" }

    /// Appends ``row(_:)`` as UTF-8; with `projected`, the position is in that CRS.
    public static func appendRow(_ report: Report, projected: ProjectedCoordinates? = nil, to out: inout [UInt8]) {
        let comma = UInt8(ascii: ",")
        ByteOutput.appendInteger(report.id, to: &out)
        out.append(comma)
        // An unprojectable position leaves both fields empty.
        if !GeoJSON.appendPosition(report.coordinate, projected: projected, separator: comma, to: &out) { out.append(comma) }
        out.append(comma)
        ByteOutput.appendCSVField(report.address, to: &out)
        out.append(comma)
        ByteOutput.appendCSVField(report.city, to: &out)
        out.append(comma)
        ByteOutput.appendCSVField(report.district, to: &out)
        out.append(comma)
        ByteOutput.appendCSVField(report.objectType, to: &out)
        out.append(comma)
        ByteOutput.appendCSVField(report.balanceHolder, to: &out)
        out.append(comma)
        if let violator = report.violator { ByteOutput.appendCSVField(violator, to: &out) }
        out.append(comma)
        ByteOutput.appendCSVField(report.phones.lazy.map(Phone.written).joined(separator: ";"), to: &out)
        out.append(comma)
        if let comment = report.comment { ByteOutput.appendCSVField(comment, to: &out) }
        out.append(comma)
        ByteOutput.appendCSVField(report.status, to: &out)
        out.append(comma)
        RFC3339.append(report.createdAt, to: &out)
        out.append(comma)
        RFC3339.append(report.updatedAt, to: &out)
        out.append(0x0D)
        out.append(0x0A)
    }
}

/// Positions written in another CRS than WGS84 longitude/latitude: how to compute them,
/// to how many decimals, and the CRS's name for a FeatureCollection's `crs` member (the
/// 2008 GeoJSON form, which GDAL and QGIS read; RFC 7946 itself knows only WGS84).
public struct ProjectedCoordinates: Sendable {
    public var project: @Sendable (Coordinate) -> (x: Double, y: Double)
    public var decimals: Int
    /// E.g. `urn:ogc:def:crs:EPSG::3857`.
    public var crsName: String

    public init(decimals: Int, crsName: String, project: @escaping @Sendable (Coordinate) -> (x: Double, y: Double)) {
        self.project = project
        self.decimals = min(max(decimals, 0), 9)
        self.crsName = crsName
    }
}
