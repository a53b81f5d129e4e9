import Geometry
import HTTPTypes
import Hummingbird
import Interchange
import Offloading
import ReportService
import Reprojection

/// `/v1/export`: the whole matching data set for GIS tools, streamed a page at a time.
///
/// Reports are read 2,000 at a time (each page its own short read transaction, by id
/// cursor, or by the ids of a box that holds few) and written as they come, so memory
/// stays bounded whatever the size. With `crs`, positions are reprojected through PROJ
/// and the CRS is named in `Content-Crs` (and, for a FeatureCollection, in a `crs` member
/// that GDAL and QGIS read).
struct ExportRoutes {
    let service: ReportService

    static let pageSize = 2_000

    func register(on router: Router<AppRequestContext>) {
        // HEAD is registered, not generated: a generated one would say `Content-Length: 0`
        // for this streamed body.
        router.get(RouterPath(Endpoint.export.path)) { request, _ in try await answer(request, streaming: true) }
        router.head(RouterPath(Endpoint.export.path)) { request, _ in try await answer(request, streaming: false) }
    }

    /// The export's headers, after every parameter is checked, and its body when `streaming`.
    private func answer(_ request: Request, streaming: Bool) async throws -> Response {
        let query = try QueryParameters(request, endpoint: .export)
        let format = try Self.format(query["format"])
        let filter = try ReportRoutes(service: service).reportFilter(query)
        var headers: HTTPFields = [
            // Read before the first page (see `/v1/changes`).
            .lastSeq: "\(try await service.lastChange())",
            // CSV has no charset of its own; ours is UTF-8.
            .contentType: format == .csv ? format.mediaType + "; charset=utf-8" : format.mediaType,
            .contentDisposition: "attachment; filename=\"posterwatch-reports.\(format.fileExtension)\"",
        ]
        var projected: ProjectedCoordinates?
        if let text = query["crs"] {
            let crs = try CRS(parsing: text)
            headers[.contentCRS] = "<\(crs.uri)>"
            if !crs.isWGS84LonLat {
                let reprojector = try Reprojector(to: crs)
                projected = ProjectedCoordinates(decimals: reprojector.decimals, crsName: crs.urn) {
                    reprojector.project($0)
                }
            }
        }
        guard streaming else { return Response(status: .ok, headers: headers, body: ResponseBody { writer in try await writer.finish(nil) }) }
        let service = self.service
        let body = ResponseBody { [projected] writer in
            var out = ReportWriter(format: format, projected: projected)
            out.begin()
            // A small box is read by its ids (it costs what it holds), the rest by id cursor.
            let ids = try await service.exportIDs(filter)
            var cursor: Int64 = 0
            var position = 0
            while true {
                let (after, from) = (cursor, position)
                let page = try await service.exportPage(filter, among: ids.map { $0[from..<min(from + Self.pageSize, $0.count)] }, after: after, limit: Self.pageSize)
                out.write(contentsOf: page)
                if let ids {
                    position = min(position + Self.pageSize, ids.count)
                    if position == ids.count { break }
                } else {
                    if page.count < Self.pageSize { break }
                    cursor = page.last!.id
                }
                try await writer.write(ByteBuffer(bytes: out.takeOutput()))
            }
            out.end()
            try await writer.write(ByteBuffer(bytes: out.takeOutput()))
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    static func format(_ text: String?) throws(ValidationError) -> InterchangeFormat {
        guard let format = InterchangeFormat(rawValue: text ?? "geojson") else {
            throw ValidationError(field: "format", "must be geojson, geojsonseq or csv, got \"\(text?.prefix(40) ?? "")\"")
        }
        return format
    }
}

extension HTTPField.Name {
    static let contentCRS = Self("Content-Crs")!
}
