import Foundation
import Hummingbird
import ReportModel
import ReportService

/// What the service says about itself, in Ukrainian and English: read from an editable
/// file (`data/about.json`), so that a city changes it without a build.
public struct AboutText: Codable, Sendable, Hashable {
    public struct Section: Codable, Sendable, Hashable {
        public var title: String
        public var purpose: String
        public var legalBasis: [String]
        public var handling: String
        public var contacts: [Contact]

        enum CodingKeys: String, CodingKey { case title, purpose, legalBasis = "legal_basis", handling, contacts }
    }

    public struct Contact: Codable, Sendable, Hashable {
        public var name: String
        public var phone: String?
        public var email: String?
        public var address: String?
        public var hours: String?
    }

    public var uk: Section
    public var en: Section

    /// Reads the file; an error says what is wrong with it and where.
    public static func load(_ path: String) throws -> AboutText {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw AboutFileUnreadable(path: path, reason: "cannot be read")
        }
        do { return try JSONDecoder().decode(AboutText.self, from: data) } catch let DecodingError.keyNotFound(key, context) {
            throw AboutFileUnreadable(path: path, reason: "lacks \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))")
        } catch let DecodingError.typeMismatch(_, context) {
            throw AboutFileUnreadable(path: path, reason: "has the wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))")
        } catch {
            throw AboutFileUnreadable(path: path, reason: "is not the JSON expected ({uk: {title, purpose, legal_basis, handling, contacts}, en: …})")
        }
    }
}

/// An about file that cannot serve.
public struct AboutFileUnreadable: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path) \(reason)" }
}

/// The software's version, as `/v1/about` names it.
public enum ServiceVersion {
    public static let current = "0.15.0"
}

/// `GET /v1/about`: the configured text, the statuses a report goes through, in order,
/// the software version and the data's counts now.
struct AboutRoutes {
    let service: ReportService
    let text: AboutText?

    func register(on router: Router<AppRequestContext>) {
        router.read(.about) { _, _, _ in
            let summary = try service.summary(box: nil, created: nil)
            let counts = About.Counts(
                reports: summary.total,
                openReports: zip(summary.byStatus, service.reference.statuses).reduce(0) { $0 + ($1.1.open ? $1.0.count : 0) },
                blockedNumbers: try await service.blockedCount())
            return try Responses.json(About(
                uk: text?.uk, en: text?.en, statuses: service.reference.statuses.map(About.Status.init), version: ServiceVersion.current, counts: counts))
        }
    }
}

struct About: Encodable {
    struct Status: Encodable {
        var code: String
        var nameUk: String
        var nameEn: String
        var open: Bool

        init(_ s: ReferenceData.Status) { (code, nameUk, nameEn, open) = (s.code, s.nameUk, s.nameEn, s.open) }
        enum CodingKeys: String, CodingKey { case code, nameUk = "name_uk", nameEn = "name_en", open }
    }
    struct Counts: Encodable {
        var reports: Int
        var openReports: Int
        var blockedNumbers: Int
        enum CodingKeys: String, CodingKey { case reports, openReports = "open_reports", blockedNumbers = "blocked_numbers" }
    }

    var uk: AboutText.Section?
    var en: AboutText.Section?
    var statuses: [Status]
    var version: String
    var counts: Counts

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uk, forKey: .uk)  // null when no text is configured
        try c.encode(en, forKey: .en)
        try c.encode(statuses, forKey: .statuses)
        try c.encode(version, forKey: .version)
        try c.encode(counts, forKey: .counts)
    }
    enum CodingKeys: String, CodingKey { case uk, en, statuses, version, counts }
}
