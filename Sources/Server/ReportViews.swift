import Accounts
import ChangeFeed
import Foundation
import HTTPTypes
import Hummingbird
import Interchange
import Offloading
import ReportModel
import ReportService

/// A report as an answer: the interchange Feature, and for supervisors and administrators
/// who filed it and whether it is hidden. The public form never names the filer.
///
/// A report's `ETag` is its version (``Report/version``), so that a tag from any answer
/// (a filing's 201, a GET, a transition) can be sent back in `If-Match`; the staff form
/// has a tag of its own, as its body differs.
struct ReportViews {
    let service: ReportService
    let accounts: AccountService

    /// The filer as staff see them.
    struct Filer: Encodable {
        var id: Int64
        var name, email, phone: String
    }

    /// The answer for `report` as `caller` may see it, with `extra` members (already JSON).
    func response(
        _ report: Report, hidden: HiddenReport? = nil, for caller: Caller?, status: HTTPResponse.Status = .ok, extra: [(String, [UInt8])] = []
    ) async throws -> Response {
        // The filer's account comes from the account service's memory when it can.
        let filer = try await service.filer(of: report.id, for: caller).asyncMap { try await accounts.account(id: $0) } ?? nil
        let photos = try await service.photos(of: report)
        let (headers, bytes) = try rendered(report, hidden: hidden, for: caller, filer: filer, photos: photos, extra: extra)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The headers and body of that answer, its filer (staff see it) and photos given.
    func rendered(
        _ report: Report, hidden: HiddenReport? = nil, for caller: Caller?, filer: Account? = nil, photos: [PhotoRow], extra: [(String, [UInt8])] = []
    ) throws -> (headers: HTTPFields, body: [UInt8]) {
        var members = extra
        let staff = caller?.isStaff == true
        if !photos.isEmpty { members.append(("photos", try Responses.jsonBytes(photos.map { PhotoView($0) }))) }
        if staff {
            members.append(("filer", try Responses.jsonBytes(filer.map { Filer(id: $0.id, name: $0.name, email: $0.email, phone: $0.phone) })))
            if let hidden { members.append(("hidden", try Responses.jsonBytes(HiddenNote(hidden)))) }
        }
        var headers: HTTPFields = [
            .contentType: "application/geo+json", .eTag: Self.tag(report, staff: staff), .vary: "Authorization",
        ]
        if staff { headers[.cacheControl] = "private, no-store" }
        return (headers, Self.feature(report, members: members))
    }

    /// The Feature of a report with top-level members after its own.
    static func feature(_ report: Report, members: [(String, [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = []
        GeoJSON.appendFeature(report, to: &bytes)
        guard !members.isEmpty, bytes.last == UInt8(ascii: "}") else { return bytes + [0x0A] }
        bytes.removeLast()
        for (name, value) in members {
            bytes += Array(",\(GeoJSON.string(name)):".utf8) + value
        }
        return bytes + Array("}\n".utf8)
    }

    /// The strong entity tag of a report's version (`-s`: the staff form).
    static func tag(_ report: Report, staff: Bool) -> String {
        "\"\(report.id)-\(report.version)\(staff ? "-s" : "")\""
    }

    /// The version an `If-Match` value names for report `id`: nil for `*` (any), and a
    /// version no report has for a tag of another report or a weak one, which never match.
    static func version(ifMatch header: String, id: Int64) -> Int64? {
        for item in header.split(separator: ",") {
            let tag = item.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return nil }
            guard tag.hasPrefix("\""), tag.hasSuffix("\""), tag.count >= 2 else { continue }
            let parts = tag.dropFirst().dropLast().split(separator: "-")
            guard parts.count >= 2, Int64(parts[0]) == id, let v = Int64(parts[1]) else { continue }
            return v
        }
        return -1
    }
}

extension AccountService.Identity {
    /// The caller as the report service knows it.
    var caller: Caller {
        Caller(accountID: apiKeyID == nil ? accountID : nil, apiKeyID: apiKeyID, role: role)
    }
}

extension AppRequestContext {
    /// The signed-in caller, if any.
    var caller: Caller? { identity?.caller }
}

extension Optional {
    /// `map` with an asynchronous transform.
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
