import Accounts
import Foundation
import Geometry
import HTTPTypes
import Hummingbird
import Photos
import ReportModel
import ReportService
import StorePorts
import Synchronization

/// Photos of reports: upload (the image as the body), removal, and the stored files,
/// served by their content's hash.
struct PhotoRoutes {
    let service: ReportService
    let files: any PhotoStorage
    /// Uploads past this many at once are answered 503 with `Retry-After`: each waiting
    /// one holds its body (up to 75 MB) while photos are processed one at a time.
    let maxInFlight: Int
    let inFlight = Counter()

    final class Counter: Sendable {
        let value = Atomic(0)
    }

    static let maxUploadBytes = 15 * 1_000_000
    /// An hour, not a year, although a file never changes: hiding a report takes its photos
    /// from every cache that asks again, and a shared cache asks within the hour (the
    /// strong ETag makes that a 304 while the report is public).
    static let cacheControl = "public, max-age=3600"

    func register(on router: Router<AppRequestContext>) {
        router.handle(.addPhoto) { request, _, context, identity in
            let id = try ReportRoutes.reportID(context)
            guard inFlight.value.add(1, ordering: .relaxed).newValue <= maxInFlight else {
                inFlight.value.subtract(1, ordering: .relaxed)
                var busy = APIError(.serviceUnavailable, code: "busy", message: "\(maxInFlight) uploads are being processed; try again shortly")
                busy.headers[.retryAfter] = "5"
                throw busy
            }
            defer { inFlight.value.subtract(1, ordering: .relaxed) }
            try await service.checkMayAddPhotos(to: id, by: identity.caller)  // before reading up to 75 MB
            let (uploads, multipart) = try await Self.uploads(request)
            let added: [(photo: PhotoRow, processed: ProcessedPhoto)]
            do {
                added = try await service.addPhotos(uploads, to: id, by: identity.caller, files: files)
            } catch let error as PhotosRejected {
                throw ValidationErrors(error.refused.map { ValidationError(field: multipart ? "files[\($0.index)]" : "body", $0.reason.reason) })
            }
            guard multipart else {
                var response = try Responses.private(PhotoView(added[0].photo, exif: added[0].processed), status: .created)
                response.headers[.location] = PhotoView.url(added[0].photo.sha256)
                return response
            }
            return try Responses.private(PhotoList(photos: added.map { PhotoView($0.photo, exif: $0.processed) }), status: .created)
        }
        router.handle(.removePhoto) { _, _, context, identity in
            let id = try ReportRoutes.reportID(context)
            let text = context.parameters.get("photo") ?? ""
            guard let photo = Int64(text), photo >= 1 else { throw ValidationError(field: "photo", "must be a photo id, got \"\(text.prefix(40))\"") }
            try await service.removePhoto(photo, of: id, by: identity.caller)
            return Response(status: .noContent)
        }
        for (endpoint, thumbnail) in [(Endpoint.photoImage, false), (.photoThumbnail, true)] {
            router.read(endpoint) { request, _, context in
                let sha = context.parameters.get("sha") ?? ""
                guard PhotoFiles.isName(sha) else { throw ValidationError(field: "sha", "must be 64 lowercase hex digits") }
                let staff = context.caller?.isStaff == true
                guard try await service.photoExists(sha256: sha, publicOnly: !staff), let bytes = try await files.read(sha256: sha, thumbnail: thumbnail) else {
                    throw APIError(.notFound, code: "not_found", message: "there is no photo \(sha)", field: "sha")
                }
                return try Self.serve(Array(bytes), tag: "\"\(sha)\(thumbnail ? "-t" : "")\"", range: request.headers[.range], staff: staff)
            }
        }
    }

    /// The uploads: the body itself (`image/jpeg` or `image/png`, at most 15 MB), or the
    /// files of a `multipart/form-data` body (at most 5, 15 MB each); else 415 or 413.
    /// Whether they came as multipart.
    static func uploads(_ request: Request) async throws -> (files: [[UInt8]], multipart: Bool) {
        let header = request.headers[.contentType] ?? ""
        let type = header.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let boundary = MultipartFiles.boundary(header)
        guard type == "image/jpeg" || type == "image/png" || boundary != nil else {
            throw APIError(
                .unsupportedMediaType, code: "unsupported_media_type",
                message: "send the image itself as image/jpeg or image/png, or files as multipart/form-data with a boundary, not \(type.prefix(60))")
        }
        let limit = boundary == nil ? maxUploadBytes : maxUploadBytes * PhotoRow.maxPerReport + 65_536
        var request = request
        let body: [UInt8]
        do {
            body = Array(buffer: try await request.collectBody(upTo: limit))
        } catch {
            throw APIError(.contentTooLarge, code: "too_large", message: "a photo may be at most \(maxUploadBytes / 1_000_000) MB, and a request at most \(PhotoRow.maxPerReport) of them")
        }
        guard let boundary else { return ([body], false) }
        let files = try MultipartFiles.parse(body, boundary: boundary)
        guard (1...PhotoRow.maxPerReport).contains(files.count) else {
            throw ValidationErrors([ValidationError(field: "files", "must be 1 to \(PhotoRow.maxPerReport) files, got \(files.count)")])
        }
        let large = files.indices.filter { files[$0].count > maxUploadBytes }
        guard large.isEmpty else {
            throw APIError(.contentTooLarge, code: "too_large", message: "files \(large.map(String.init).joined(separator: ", ")) are over \(maxUploadBytes / 1_000_000) MB")
        }
        return (files, true)
    }

    /// The file, whole or the one range asked for (`bytes=a-b`, `a-`, `-n`).
    static func serve(_ bytes: [UInt8], tag: String, range: String?, staff: Bool) throws -> Response {
        var headers: HTTPFields = [.contentType: "image/jpeg", .eTag: tag, .acceptRanges: "bytes"]
        headers[.cacheControl] = staff ? "private, no-store" : cacheControl
        guard let range else { return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))) }
        guard let span = Self.span(range, count: bytes.count) else {
            headers[.contentRange] = "bytes */\(bytes.count)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        headers[.contentRange] = "bytes \(span.lowerBound)-\(span.upperBound)/\(bytes.count)"
        return Response(status: .partialContent, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes[span])))
    }

    /// The bytes one `Range` header asks for, or nil when it asks for none of `count`.
    static func span(_ header: String, count: Int) -> ClosedRange<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(","), count > 0 else { return nil }
        let parts = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2 else { return nil }
        switch (Int(parts[0]), Int(parts[1])) {
        case (let first?, let last?) where first <= last && first < count: return first...min(last, count - 1)
        case (let first?, nil) where parts[1].isEmpty && first < count: return first...(count - 1)
        case (nil, let suffix?) where parts[0].isEmpty && suffix > 0: return max(0, count - suffix)...(count - 1)
        default: return nil
        }
    }
}

/// The photos of a multipart upload.
struct PhotoList: Encodable {
    var photos: [PhotoView]
}

/// A photo as an answer: its URLs and size.
struct PhotoView: Encodable {
    struct Position: Encodable { var longitude, latitude: Double }
    var id: Int64
    var sha256: String
    var url: String
    var thumbnailURL: String
    var width, height, bytes: Int
    var exifPosition: Position?

    init(_ row: PhotoRow, exif: ProcessedPhoto? = nil) {
        (id, sha256, width, height, bytes) = (row.id, row.sha256, row.width, row.height, row.bytes)
        url = Self.url(row.sha256)
        thumbnailURL = "/v1/photos/\(row.sha256)/thumb.jpg"
        if let lon = exif?.exifLongitude, let lat = exif?.exifLatitude { exifPosition = Position(longitude: lon, latitude: lat) }
    }

    static func url(_ sha: String) -> String { "/v1/photos/\(sha).jpg" }

    enum CodingKeys: String, CodingKey {
        case id, sha256, url, thumbnailURL = "thumbnail_url", width, height, bytes, exifPosition = "exif_position"
    }
}
