import Foundation
import Generator
import Geometry
import ReportModel

/// Valid report drafts drawn from a seeded generator, so that a failure replays.
public enum Drafts {
    public static let reference = try! ReferenceData.bundled()

    /// A valid draft at a position, with phones and time from the generator.
    public static func make(
        _ c: Coordinate, id: Int64? = nil, phones: [String]? = nil, created: Date? = nil,
        status: String? = nil, using rng: inout SplitMix64
    ) -> ReportDraft {
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

    public static func randomPhone(using rng: inout SplitMix64) -> String {
        let code = ["50", "63", "66", "67", "68", "73", "93", "95", "97"].randomElement(using: &rng)!
        return "380" + code + String(format: "%07d", Int.random(in: 0..<10_000_000, using: &rng))
    }

    /// Positions that stress the R*Tree's float rounding: clustered within float
    /// precision, on round numbers that boxes will cut exactly, and on the antimeridian.
    public static func positions(_ count: Int, using rng: inout SplitMix64) -> [Coordinate] {
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

    /// Drafts as the records of one import batch.
    public static func records(_ drafts: [ReportDraft]) -> [DraftRecord] {
        drafts.enumerated().map { DraftRecord(location: .line($0.offset + 2), draft: .success($0.element)) }
    }
}
