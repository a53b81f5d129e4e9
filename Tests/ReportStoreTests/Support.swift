import Foundation
import Generator
import GRDB
import Geometry
import ReportModel
@testable import ReportStore

/// The generator's deterministic PRNG, so failures replay.
typealias TestRandom = SplitMix64

extension SplitMix64 {
    init(_ seed: UInt64) { self.init(state: seed) }
}

/// A fresh store in a temporary directory, removed when the value goes away.
final class TemporaryStore {
    let directory: URL
    let store: ReportStore

    init(tuning: QueryTuning = QueryTuning()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("posterwatch-tests-\(UUID().uuidString)")
        store = try ReportStore(path: directory.appendingPathComponent("test.sqlite").path, tuning: tuning)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

enum Drafts {
    static let reference = try! ReferenceData.bundled()

    /// A valid draft at a position, with phones and time from the generator.
    static func make(_ c: Coordinate, id: Int64? = nil, phones: [String]? = nil, created: Date? = nil,
                     status: String? = nil, using rng: inout TestRandom) -> ReportDraft {
        let type = reference.objectTypes.randomElement(using: &rng)!.code
        let holder = reference.holders(for: type).randomElement(using: &rng)!.code
        return ReportDraft(
            id: id, coordinate: c, address: "вул. Тестова, \(Int.random(in: 1...200, using: &rng))", city: "Київ",
            district: reference.districts.randomElement(using: &rng)!.code, objectType: type, balanceHolder: holder,
            violator: Bool.random(using: &rng) ? "ТОВ «Тест»" : nil,
            phones: phones ?? [randomPhone(using: &rng)],
            comment: nil, status: status ?? reference.statuses.randomElement(using: &rng)!.code,
            createdAt: created ?? Date(timeIntervalSince1970: Double(Int.random(in: 1_600_000_000_000...1_700_000_000_000, using: &rng)) / 1000))
    }

    static func randomPhone(using rng: inout TestRandom) -> String {
        let code = ["50", "63", "66", "67", "68", "73", "93", "95", "97"].randomElement(using: &rng)!
        return "380" + code + String(format: "%07d", Int.random(in: 0..<10_000_000, using: &rng))
    }

    /// Positions that stress the R*Tree's float rounding: clustered within float
    /// precision, on round numbers that boxes will cut exactly, and on the antimeridian.
    static func positions(_ count: Int, using rng: inout TestRandom) -> [Coordinate] {
        (0..<count).map { i in
            switch i % 5 {
            case 0: Coordinate(longitude: .random(in: -180...180, using: &rng), latitude: .random(in: -90...90, using: &rng))
            case 1: Coordinate(longitude: 30.5 + .random(in: -1e-6...1e-6, using: &rng), latitude: 50.45 + .random(in: -1e-6...1e-6, using: &rng))
            case 2: Coordinate(longitude: Double(Int.random(in: -18...18, using: &rng)) * 10, latitude: Double(Int.random(in: -9...9, using: &rng)) * 10)
            case 3: Coordinate(longitude: [180, -180, 179.999999, -179.999999].randomElement(using: &rng)!, latitude: .random(in: -10...10, using: &rng))
            default: Coordinate(longitude: 30.4 + .random(in: 0...0.3, using: &rng), latitude: 50.35 + .random(in: 0...0.2, using: &rng))
            }
        }
    }

    static func records(_ drafts: [ReportDraft]) -> [DraftRecord] {
        drafts.enumerated().map { DraftRecord(location: .line($0.offset + 2), draft: .success($0.element)) }
    }
}

extension ReportStore {
    /// Imports drafts as one batch, the way the CLI does.
    @discardableResult
    func importDrafts(_ drafts: [ReportDraft], options: ImportOptions = ImportOptions()) throws -> ImportSummary {
        var batches = [Drafts.records(drafts)]
        return try importRecords(options: options, next: { batches.popLast() })
    }

    /// Every stored report, by id (the brute-force reference's input).
    func all() throws -> [Report] {
        try pool.read { db in try ReportRow.fetchAll(db, sql: "SELECT \(ReportRow.columns) FROM report ORDER BY id") }
    }

    /// SQLite's own checks of the R*Tree and the full-text index, and the layout's:
    /// every key is the report's cell and id, and the R*Tree holds every key.
    func checkIndexes() throws -> String {
        try pool.write { db in
            try db.execute(sql: "INSERT INTO report_search(report_search, rank) VALUES ('integrity-check', 0)")
            for row in try Row.fetchAll(db, sql: "SELECT key, id, longitude, latitude FROM report") {
                let key: Int64 = row[0]
                if key != ReportRow.key(Coordinate(longitude: row[2], latitude: row[3]), id: row[1]) { return "key \(key) is off" }
            }
            let missing = try Int.fetchOne(db, sql: """
                SELECT (SELECT count(*) FROM report) - (SELECT count(*) FROM report r JOIN report_rtree t ON t.key = r.key
                  AND t.min_lon <= r.longitude AND t.max_lon >= r.longitude AND t.min_lat <= r.latitude AND t.max_lat >= r.latitude)
                  + (SELECT count(*) FROM report_rtree) - (SELECT count(*) FROM report)
                """)
            if missing != 0 { return "the R*Tree and the table differ" }
            let counted = try Int.fetchOne(db, sql: "SELECT (SELECT report_count FROM report_sequence) = (SELECT count(*) FROM report)")
            if counted != 1 { return "the report count is off" }
            return try String.fetchOne(db, sql: "SELECT rtreecheck('report_rtree')") ?? "no answer"
        }
    }
}
