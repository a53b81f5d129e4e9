import Foundation
import ReportModel

/// Writes reports one at a time into a byte buffer that the caller drains as it likes,
/// so the same writer serves a file, standard output or an HTTP response body (sync or
/// async) without holding the whole export in memory.
///
/// - ``InterchangeFormat/geojson``: `{"type":"FeatureCollection",<members>,"features":[`,
///   one Feature per line separated by `,`, then `]` and the end members and `}` and LF.
/// - ``InterchangeFormat/geojsonseq``: one Feature per line, each ended by LF (the
///   newline-delimited form; no RS bytes, although the reader accepts RFC 8142 too).
/// - ``InterchangeFormat/csv``: the ``CSV/header`` row, then one row per report.
///
/// ```swift
/// var writer = ReportWriter(format: .geojson)
/// writer.begin(members: [("numberMatched", "12")])
/// for report in reports {
///     writer.write(report)
///     if writer.pendingByteCount >= 1 << 16 { try handle.write(contentsOf: writer.takeOutput()) }
/// }
/// writer.end()
/// try handle.write(contentsOf: writer.takeOutput())
/// ```
public struct ReportWriter: Sendable {
    /// A top-level member of a FeatureCollection: a name, and its value as already-encoded
    /// JSON (e.g. `"12"`, `GeoJSON.string("abc")`, `"[1,2]"`). The value is copied as is.
    public typealias Member = (name: String, json: String)

    public let format: InterchangeFormat
    /// Positions in another CRS, or nil for WGS84 longitude/latitude.
    public let projected: ProjectedCoordinates?
    /// How many reports were written.
    public private(set) var count = 0
    private var output: [UInt8] = []
    private var begun = false
    private var ended = false

    public init(format: InterchangeFormat, projected: ProjectedCoordinates? = nil) {
        self.format = format
        self.projected = projected
        output.reserveCapacity(1 << 16)
    }

    /// Starts the output: the CSV header, or the FeatureCollection's opening with `members`
    /// before `features` (members are ignored in the other formats). ``write(_:)`` and
    /// ``end(members:)`` call it if it was not called.
    public mutating func begin(members: [Member] = []) {
        guard !begun else { return }
        begun = true
        switch format {
        case .geojson:
            ByteOutput.append(#"{"type":"FeatureCollection""#, to: &output)
            if let projected {
                ByteOutput.append(#","crs":{"type":"name","properties":{"name":"#, to: &output)
                ByteOutput.appendJSONString(projected.crsName, to: &output)
                ByteOutput.append("}}", to: &output)
            }
            appendMembers(members)
            ByteOutput.append(#","features":["#, to: &output)
        case .geojsonseq:
            break
        case .csv:
            output.append(contentsOf: (projected == nil ? CSV.header : CSV.projectedHeader).utf8)
        }
    }

    /// Appends one report.
    public mutating func write(_ report: Report) {
        if !begun { begin() }
        precondition(!ended, "ReportWriter.write after end()")
        switch format {
        case .geojson:
            output.append(count == 0 ? 0x0A : UInt8(ascii: ","))
            if count > 0 { output.append(0x0A) }
            GeoJSON.appendFeature(report, projected: projected, to: &output)
        case .geojsonseq:
            GeoJSON.appendFeature(report, projected: projected, to: &output)
            output.append(0x0A)
        case .csv:
            CSV.appendRow(report, projected: projected, to: &output)
        }
        count += 1
    }

    /// Appends each report of a sequence.
    public mutating func write(contentsOf reports: some Sequence<Report>) {
        for report in reports { write(report) }
    }

    /// Finishes the output: closes a FeatureCollection, adding `members` after `features`
    /// (e.g. a `links` array or `numberReturned` known only at the end).
    public mutating func end(members: [Member] = []) {
        if !begun { begin() }
        guard !ended else { return }
        ended = true
        if format == .geojson {
            if count > 0 { output.append(0x0A) }
            output.append(UInt8(ascii: "]"))
            appendMembers(members)
            ByteOutput.append("}\n", to: &output)
        }
    }

    /// The number of bytes written and not yet taken.
    public var pendingByteCount: Int { output.count }

    /// The bytes written since the last call; the buffer starts empty again.
    public mutating func takeOutput() -> [UInt8] {
        var taken: [UInt8] = []
        taken.reserveCapacity(Swift.max(output.count, 1 << 16))
        swap(&taken, &output)
        return taken
    }

    /// The whole output for a few reports, e.g. for tests or small responses.
    public static func encode(
        _ reports: some Sequence<Report>, format: InterchangeFormat, members: [Member] = []
    ) -> String {
        var writer = ReportWriter(format: format)
        writer.begin(members: members)
        writer.write(contentsOf: reports)
        writer.end()
        return String(decoding: writer.takeOutput(), as: UTF8.self)
    }

    private mutating func appendMembers(_ members: [Member]) {
        for member in members {
            output.append(UInt8(ascii: ","))
            ByteOutput.appendJSONString(member.name, to: &output)
            output.append(UInt8(ascii: ":"))
            output.append(contentsOf: member.json.utf8)
        }
    }
}
