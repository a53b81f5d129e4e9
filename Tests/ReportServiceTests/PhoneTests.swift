import Accounts
import ChangeFeed
import Foundation
import GRDB
import Generator
import Geometry
import ReportModel
@testable import ReportService
import ReportStore
import Testing
import TestSupport

@Suite("Phones: records and rankings against a scan of the rows, verification, blocking and what it moves")
struct PhoneTests {
    static let supervisor = Caller(accountID: 7, role: .supervisor)
    static let inspector = Caller(accountID: 8, role: .inspector)

    /// The public reports, read back whole: what every brute force below counts.
    static func rows(_ store: ReportStore) throws -> [Report] {
        try store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM report") }.chunked(500).flatMap { try store.reports(ids: $0) }
    }

    /// The ranking a scan of `reports` gives: most reports first, equal counts by number.
    static func ranking(_ reports: [Report], limit: Int, statusCodes: [String]) -> [(number: String, count: Int, byStatus: [String: Int])] {
        var counts: [String: [String: Int]] = [:]
        for r in reports {
            for p in r.phones { counts[p, default: [:]][r.status, default: 0] += 1 }
        }
        return counts.map { (number: $0.key, count: $0.value.values.reduce(0, +), byStatus: $0.value) }
            .sorted { ($0.count, $1.number) > ($1.count, $0.number) }.prefix(limit).map { $0 }
    }

    /// A pool of numbers small enough that numbers share reports, and some tie.
    static func phones(_ count: Int, using rng: inout SplitMix64) -> [String] {
        (0..<count).map { _ in Drafts.randomPhone(using: &rng) }
    }

    static func kyiv(using rng: inout SplitMix64) -> Coordinate {
        Coordinate(longitude: 30.3 + 0.5 * rng.unit(), latitude: 50.3 + 0.3 * rng.unit())
    }

    @Test("after 3,000 random inserts, edits, moves, transitions, hides, unhides and deletes, phone records and every ranking equal a scan of the rows")
    func bruteForce() async throws {
        let temp = try TemporaryStore()
        let service = try ReportService(store: temp.store)
        let reference = temp.store.reference
        var rng = SplitMix64(state: 15)
        let pool = Self.phones(40, using: &rng)
        func somePhones() -> [String] { Array(Set((0...rng.below(3)).map { _ in pool[rng.below(pool.count)] })) }
        var ids: [Int64] = [], hidden: Set<Int64> = []
        for step in 0..<3_000 {
            let kind = ids.count < 30 ? 0 : rng.below(10)
            let id = ids.isEmpty ? 0 : ids[rng.below(ids.count)]
            do {
                switch kind {
                case 0, 1, 2:
                    let draft = Drafts.make(Self.kyiv(using: &rng), phones: somePhones(), using: &rng)
                    ids.append(try service.insert([draft])[0].id)
                case 3, 4:
                    let (c, phones) = (Self.kyiv(using: &rng), somePhones())
                    let district = reference.districts[rng.below(reference.districts.count)].code
                    let movesToo = kind == 3
                    _ = try await service.edit(id, by: Self.supervisor, ifMatch: nil) { current in
                        var d = ReportDraft(current)
                        d.phones = phones
                        d.district = district
                        if movesToo { d.coordinate = c }
                        return d
                    }
                case 5, 6:
                    guard let current = try service.report(id: id), let step = reference.transitions(from: current.status).first(where: { !$0.duplicateOfRequired })
                    else { continue }
                    _ = try await service.transition(id, to: step.to, note: "n", duplicateOf: nil, by: Self.supervisor)
                case 7:
                    _ = try await service.hide(id, note: "спам", by: Self.supervisor)
                    hidden.insert(id)
                case 8:
                    guard let back = hidden.randomElement(using: &rng) else { continue }
                    _ = try await service.unhide(back, note: nil, by: Self.supervisor)
                    hidden.remove(back)
                default:
                    guard step % 3 == 0 else { continue }
                    try service.delete(id: id)
                    ids.removeAll { $0 == id }
                    hidden.remove(id)
                }
            } catch is ReportHidden {
            } catch is ReportNotFound {
            }
        }
        let reports = try Self.rows(temp.store)
        #expect(reports.count == service.tally.count)
        // Every number's record, against the scan.
        for number in pool {
            let carrying = reports.filter { $0.phones.contains(number) }
            guard let record = try service.phoneRecord(number, for: nil) else {
                #expect(carrying.isEmpty, "+\(number) is on \(carrying.count) reports but has no record")
                continue
            }
            #expect(record.reportCount == carrying.count, "+\(number)")
            #expect(record.openCount == carrying.filter { reference.isOpen($0.status) }.count)
            #expect(record.statusCounts == Dictionary(grouping: carrying, by: \.status).mapValues(\.count))
            #expect(record.districts.map(\.code).sorted() == Set(carrying.map(\.district)).sorted())
            #expect(record.districts.reduce(0) { $0 + $1.count } == carrying.count)
            #expect(record.firstSeen == carrying.map(\.createdAt).min() && record.lastSeen == carrying.map(\.createdAt).max())
            #expect(record.violators.reduce(0) { $0 + $1.count } == carrying.filter { $0.violator != nil }.count)
        }
        // Rankings: city-wide, by status, by district, by area and period.
        let codes = service.statusCodes
        func check(_ label: String, box: BoundingBox?, created: ClosedRange<Int64>?, statuses: [String]?, district: String?, limit: Int) throws {
            let chosen = reports.filter { r in
                (box?.contains(r.coordinate) ?? true) && (created?.contains(r.createdMilliseconds) ?? true)
                    && (statuses?.contains(r.status) ?? true) && (district.map { $0 == r.district } ?? true)
            }
            let expected = Self.ranking(chosen, limit: limit, statusCodes: codes)
            let found = try service.topPhones(box: box, created: created, statuses: statuses, district: district, limit: limit)
            #expect(found.map(\.number) == expected.map(\.number), "\(label)")
            #expect(found.map(\.count) == expected.map(\.count), "\(label)")
            #expect(found.map { Dictionary(uniqueKeysWithValues: $0.statusCounts.map { ($0.code, $0.count) }) } == expected.map(\.byStatus), "\(label)")
        }
        try check("city-wide", box: nil, created: nil, statuses: nil, district: nil, limit: 50)
        try check("city-wide top 5", box: nil, created: nil, statuses: nil, district: nil, limit: 5)
        for round in 0..<30 {
            let west = 30.3 + 0.4 * rng.unit(), south = 50.3 + 0.25 * rng.unit()
            let box = try BoundingBox(west: west, south: south, east: west + 0.05 + 0.2 * rng.unit(), north: south + 0.03 + 0.1 * rng.unit())
            let statuses = rng.below(2) == 0 ? nil : Array(codes.shuffled(using: &rng).prefix(1 + rng.below(4)))
            let district = rng.below(3) == 0 ? reference.districts[rng.below(reference.districts.count)].code : nil
            let from = Int64(1_600_000_000_000 + rng.below(100_000_000_000))
            let created = rng.below(2) == 0 ? nil : from...(from + Int64(rng.below(50_000_000_000)))
            let limit = 1 + rng.below(30)
            try check("round \(round): area", box: box, created: created, statuses: statuses, district: district, limit: limit)
            try check("round \(round): city-wide", box: nil, created: nil, statuses: statuses, district: district, limit: limit)
            try check("round \(round): period", box: nil, created: created, statuses: statuses, district: nil, limit: limit)
        }
        // The tally kept write by write equals one built from the rows.
        let rebuilt = try ReportService(store: temp.store)
        #expect(try rebuilt.topPhones(box: nil, created: nil, statuses: nil, district: nil, limit: 1_000).map(\.number)
            == (try service.topPhones(box: nil, created: nil, statuses: nil, district: nil, limit: 1_000)).map(\.number))
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
