import Accounts
import ChangeFeed
import Foundation
import GRDB
import Generator
import Interchange
import Geometry
import ReportModel
@testable import ReportService
import SQLiteStore
import Testing
import TestSupport

@Suite("Phones: records and rankings against a scan of the rows, verification, blocking and what it moves")
struct PhoneTests {
    static let supervisor = Caller(accountID: 7, role: .supervisor)
    static let inspector = Caller(accountID: 8, role: .inspector)

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

    @Test(
        "after 3,000 random inserts, edits, moves, transitions, hides, unhides and deletes, phone records, rankings and summaries equal a scan of the rows; also when a restart reads the index saved halfway",
        arguments: StoreUnderTest.all, [false, true])
    func bruteForce(_ store: StoreUnderTest, restartHalfway: Bool) async throws {
        let (stores, keep) = try await store.open()
        defer { _ = keep }
        let storage = stores.reports
        var service = try await ReportService(storage: storage)
        let folder = try TemporaryDirectory()
        let reference = storage.reference
        var rng = SplitMix64(state: 15)
        let pool = Self.phones(40, using: &rng)
        // One to five numbers, as a report may carry (the tally keeps the first in its record
        // and the others in a block of four, used again once freed).
        func somePhones() -> [String] { Array(Set((0...rng.below(5)).map { _ in pool[rng.below(pool.count)] })) }
        var ids: [Int64] = [], hidden: Set<Int64> = []
        for step in 0..<3_000 {
            if restartHalfway && step == 1_500 {
                let path = folder.path("index")
                #expect(try await service.saveIndex(to: path) == (try await storage.lastChange()))
                service = try await ReportService(storage: storage, start: .saved(path: path))
                #expect(service.indexReady && service.indexStartNote == nil, "\(service.indexStartNote ?? "")")
            }
            let kind = ids.count < 30 ? 0 : rng.below(10)
            let id = ids.isEmpty ? 0 : ids[rng.below(ids.count)]
            if step % 50 == 49 {
                // A phone's step now and then: blocks and unblocks move reports too.
                let number = pool[rng.below(pool.count)]
                let status = try await service.phoneRecord(number, for: Self.supervisor)?.status
                switch status {
                case .blocked?: _ = try await service.unblock(number, note: nil, by: Self.supervisor)
                case .violator?: _ = try await service.block(number, note: nil, by: Self.supervisor)
                case nil: break
                default: _ = try await service.verify(number, outcome: .violator, note: nil, by: Self.supervisor)
                }
            }
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
                    guard let current = try await service.report(id: id), let step = reference.transitions(from: current.status).first(where: { !$0.duplicateOfRequired })
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
        let reports = try await storage.reports(ids: ids.filter { !hidden.contains($0) })
        let stored = try await storage.count(in: .world)
        #expect(reports.count == service.tally.count && reports.count == stored)
        // Search counts of three and four digits come from the tally: the scan's, and the store's own.
        let fragments = (0..<40).map { i -> String in
            let source = i % 2 == 0 ? pool[rng.below(pool.count)] : String(reports[rng.below(reports.count)].id)
            let length = 3 + rng.below(2)
            let start = rng.below(max(1, source.count - length + 1))
            return i % 5 == 4 ? String((0..<length).map { _ in Character(String(rng.below(10))) }) : String(source.dropFirst(start).prefix(length))
        }
        for fragment in fragments where fragment.count >= 3 {
            let scanned = reports.filter { r in r.phones.contains { $0.contains(fragment) } || String(r.id).contains(fragment) }.count
            let counted = try await service.search(fragment, limit: 3).matched
            let stored = try await StoredReports(storage: storage).search(fragment, limit: 3).matched
            #expect(counted == scanned && stored == scanned, "\(fragment): tally \(counted), store \(stored), scan \(scanned)")
        }
        // Every number's record, against the scan.
        for number in pool {
            let carrying = reports.filter { $0.phones.contains(number) }
            guard let record = try await service.phoneRecord(number, for: nil) else {
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
        func check(_ label: String, box: BoundingBox?, created: ClosedRange<Int64>?, statuses: [String]?, district: String?, limit: Int) async throws {
            let chosen = reports.filter { r in
                (box?.contains(r.coordinate) ?? true) && (created?.contains(r.createdMilliseconds) ?? true)
                    && (statuses?.contains(r.status) ?? true) && (district.map { $0 == r.district } ?? true)
            }
            let expected = Self.ranking(chosen, limit: limit, statusCodes: codes)
            let found = try await service.topPhones(box: box, created: created, statuses: statuses, district: district, limit: limit)
            #expect(found.map(\.number) == expected.map(\.number), "\(label)")
            #expect(found.map(\.count) == expected.map(\.count), "\(label)")
            #expect(found.map { Dictionary(uniqueKeysWithValues: $0.statusCounts.map { ($0.code, $0.count) }) } == expected.map(\.byStatus), "\(label)")
        }
        try await check("city-wide", box: nil, created: nil, statuses: nil, district: nil, limit: 50)
        try await check("city-wide top 5", box: nil, created: nil, statuses: nil, district: nil, limit: 5)
        for round in 0..<30 {
            let west = 30.3 + 0.4 * rng.unit(), south = 50.3 + 0.25 * rng.unit()
            let box = try BoundingBox(west: west, south: south, east: west + 0.05 + 0.2 * rng.unit(), north: south + 0.03 + 0.1 * rng.unit())
            let statuses = rng.below(2) == 0 ? nil : Array(codes.shuffled(using: &rng).prefix(1 + rng.below(4)))
            let district = rng.below(3) == 0 ? reference.districts[rng.below(reference.districts.count)].code : nil
            let from = Int64(1_600_000_000_000 + rng.below(100_000_000_000))
            let created = rng.below(2) == 0 ? nil : from...(from + Int64(rng.below(50_000_000_000)))
            let limit = 1 + rng.below(30)
            try await check("round \(round): area", box: box, created: created, statuses: statuses, district: district, limit: limit)
            try await check("round \(round): city-wide", box: nil, created: nil, statuses: statuses, district: district, limit: limit)
            try await check("round \(round): period", box: nil, created: created, statuses: statuses, district: nil, limit: limit)
        }
        // Summaries: every report counted four ways, against the scan.
        func checkSummary(_ label: String, box: BoundingBox?, created: ClosedRange<Int64>?) throws {
            let chosen = reports.filter { r in (box?.contains(r.coordinate) ?? true) && (created?.contains(r.createdMilliseconds) ?? true) }
            let summary = try service.summary(box: box, created: created)
            #expect(summary.total == chosen.count, "\(label)")
            func counts(_ key: (Report) -> String, _ codes: [String]) -> [String] {
                let found = Dictionary(grouping: chosen, by: key).mapValues(\.count)
                return codes.map { "\($0) \(found[$0] ?? 0)" }
            }
            #expect(summary.byStatus.map { "\($0.code) \($0.count)" } == counts(\.status, codes), "\(label)")
            #expect(summary.byDistrict.map { "\($0.code) \($0.count)" } == counts(\.district, reference.districts.map(\.code)), "\(label)")
            #expect(summary.byObjectType.map { "\($0.code) \($0.count)" } == counts(\.objectType, reference.objectTypes.map(\.code)), "\(label)")
            let months = Dictionary(grouping: chosen) { RFC3339.string(from: $0.createdAt).prefix(7) }.mapValues(\.count)
            #expect(summary.byMonth.map { "\($0.month) \($0.count)" } == months.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }, "\(label)")
        }
        try checkSummary("everything", box: nil, created: nil)
        for round in 0..<10 {
            let west = 30.3 + 0.4 * rng.unit(), south = 50.3 + 0.25 * rng.unit()
            let box = try BoundingBox(west: west, south: south, east: west + 0.05 + 0.2 * rng.unit(), north: south + 0.03 + 0.1 * rng.unit())
            let from = Int64(1_600_000_000_000 + rng.below(100_000_000_000))
            try checkSummary("round \(round)", box: rng.below(3) == 0 ? nil : box, created: rng.below(2) == 0 ? nil : from...(from + Int64(rng.below(50_000_000_000))))
        }
        // The tally kept write by write equals one built from the rows.
        let rebuilt = try await ReportService(storage: storage)
        for fragment in fragments where fragment.count >= 3 {
            let (a, b) = (try await rebuilt.search(fragment, limit: 5), try await service.search(fragment, limit: 5))
            #expect(a.matched == b.matched && a.reports.map(\.id) == b.reports.map(\.id), "\(fragment)")
        }
        let (a, b) = (
            try await rebuilt.topPhones(box: nil, created: nil, statuses: nil, district: nil, limit: 1_000),
            try await service.topPhones(box: nil, created: nil, statuses: nil, district: nil, limit: 1_000)
        )
        #expect(a.map(\.number) == b.map(\.number) && a.map(\.count) == b.map(\.count))
        #expect(String(describing: try rebuilt.summary(box: nil, created: nil)) == String(describing: try service.summary(box: nil, created: nil)))
        for number in pool { #expect(try await rebuilt.phoneRecord(number, for: nil) == service.phoneRecord(number, for: nil), "+\(number)") }
    }

    /// A store with reports in `confirmed` (and one in `new`) carrying `a`, `b` or both.
    static func blockingSetup() async throws -> (TemporaryStore, ReportService, a: String, b: String, onlyA: [Int64], both: Int64, fresh: Int64) {
        let temp = try TemporaryStore()
        let service = try await ReportService(storage: temp.store)
        var rng = SplitMix64(state: 3)
        let (a, b) = ("380671111111", "380672222222")
        let onlyA = try service.insert((0..<3).map { _ in Drafts.make(Self.kyiv(using: &rng), phones: [a], status: "confirmed", using: &rng) }).map(\.id)
        let both = try service.insert([Drafts.make(Self.kyiv(using: &rng), phones: [a, b], status: "confirmed", using: &rng)])[0].id
        let fresh = try service.insert([Drafts.make(Self.kyiv(using: &rng), phones: [a], status: "new", using: &rng)])[0].id
        return (temp, service, a, b, onlyA, both, fresh)
    }

    @Test("a number is blocked only once verified as violator; each refusal says why and writes nothing")
    func blockNeedsVerification() async throws {
        let (temp, service, a, _, _, _, _) = try await Self.blockingSetup()
        let changes = try temp.store.lastChange()
        await #expect(throws: PhoneStatusConflict.self) { try await service.block(a, note: nil, by: Self.supervisor) }
        _ = try await service.verify(a, outcome: .notViolator, note: "чужий номер", by: Self.supervisor)
        await #expect(throws: PhoneStatusConflict.self) { try await service.block(a, note: nil, by: Self.supervisor) }
        _ = try await service.verify(a, outcome: .unreachable, note: nil, by: Self.supervisor)
        await #expect(throws: PhoneStatusConflict.self) { try await service.block(a, note: nil, by: Self.supervisor) }
        await #expect(throws: PhoneStatusConflict.self) { try await service.unblock(a, note: nil, by: Self.supervisor) }
        await #expect(throws: PhoneNotFound.self) { try await service.verify("380679999999", outcome: .violator, note: nil, by: Self.supervisor) }
        await #expect(throws: Forbidden.self) { try await service.verify(a, outcome: .violator, note: nil, by: Self.inspector) }
        await #expect(throws: Forbidden.self) { try await service.block(a, note: nil, by: Caller(accountID: 9, apiKeyID: nil, role: .admin).demoted) }
        #expect(try temp.store.lastChange() == changes + 2, "only the two verifications were written")
        _ = try await service.verify(a, outcome: .violator, note: nil, by: Self.supervisor)
        _ = try await service.block(a, note: nil, by: Self.supervisor)
        await #expect(throws: PhoneStatusConflict.self) { try await service.block(a, note: nil, by: Self.supervisor) }
        await #expect(throws: PhoneStatusConflict.self) { try await service.verify(a, outcome: .notViolator, note: nil, by: Self.supervisor) }
        let record = try #require(try await service.phoneRecord(a, for: Self.supervisor))
        #expect(record.history.map(\.action) == [.verified, .verified, .verified, .blocked])
        #expect(record.history.map(\.toStatus) == [.notViolator, .unreachable, .violator, .blocked])
        #expect(record.history[0].note == "чужий номер" && record.history[0].author.accountID == 7)
        let publicRecord = try #require(try await service.phoneRecord(a, for: nil))
        #expect(publicRecord.history.allSatisfy { $0.note == nil && $0.author == .system }, "the public sees no notes nor who")
    }

    @Test("a block moves the confirmed reports whose numbers are now all blocked, with history rows naming it; an unblock moves back only those nobody moved since")
    func blockMovesReports() async throws {
        let (temp, service, a, b, onlyA, both, fresh) = try await Self.blockingSetup()
        _ = try await service.verify(a, outcome: .violator, note: nil, by: Self.supervisor)
        let before = try temp.store.lastChange()
        let blocked = try await service.block(a, note: "оператор підтвердив", by: Self.supervisor)
        #expect(Set(blocked.moved.map(\.id)) == Set(onlyA), "the report that also carries an unblocked number stays")
        #expect(try await service.report(id: both)?.status == "confirmed")
        #expect(try await service.report(id: fresh)?.status == "new")
        for id in onlyA {
            #expect(try await service.report(id: id)?.status == "phone_blocked")
            let last = try #require(try temp.store.history(of: id).last)
            #expect(last.action == .transition && last.toStatus == "phone_blocked" && last.author.accountID == 7)
            #expect(last.note == "phone +\(a) blocked (phone change \(blocked.entry.seq))", "the supervisor's note stays with the phone")
        }
        let rows = try temp.store.changes(after: before, limit: 100).rows
        #expect(rows.map(\.action) == [.phoneBlocked] + onlyA.map { _ in .transition }, "the phone's change first, then each report's")
        #expect(rows[0].phone == a)
        // The index moved too: the clusters count them under their new status.
        let blockedNumber = try #require(service.statusCodes.firstIndex(of: "phone_blocked"))
        #expect(try await service.count(ReportFilter(box: nil, statuses: ["phone_blocked"], created: nil)) == onlyA.count)
        #expect(service.index.entry(id: onlyA[0])?.status == blockedNumber)
        // And the tally: the dashboard and the rankings count them under it.
        #expect(try service.summary(box: nil, created: nil).byStatus.first { $0.code == "phone_blocked" }?.count == onlyA.count)
        #expect(try await service.topPhones(box: nil, created: nil, statuses: ["phone_blocked"], district: nil, limit: 5).map(\.count) == [onlyA.count])

        // Blocking b completes the report carrying both.
        _ = try await service.verify(b, outcome: .violator, note: nil, by: Self.supervisor)
        #expect(try await service.block(b, note: nil, by: Self.supervisor).moved.map(\.id) == [both])

        // A supervisor moves one on (removed), and another away and back by hand.
        _ = try await service.transition(onlyA[0], to: "removed", note: nil, duplicateOf: nil, by: Self.supervisor)
        _ = try await service.transition(onlyA[1], to: "removed", note: nil, duplicateOf: nil, by: Self.supervisor)
        _ = try await service.transition(onlyA[1], to: "confirmed", note: nil, duplicateOf: nil, by: Self.supervisor)
        _ = try await service.transition(onlyA[1], to: "phone_blocked", note: nil, duplicateOf: nil, by: Self.supervisor)
        let unblocked = try await service.unblock(a, note: "помилка", by: Self.supervisor)
        #expect(Set(unblocked.moved.map(\.id)) == [onlyA[2], both], "only those the blocks moved and nobody moved since")
        #expect(try await service.report(id: onlyA[0])?.status == "removed")
        #expect(try await service.report(id: onlyA[1])?.status == "phone_blocked")
        #expect(try await service.report(id: onlyA[2])?.status == "confirmed")
        #expect(try await service.report(id: both)?.status == "confirmed")
        #expect(try await service.phoneRecord(a, for: nil)?.status == .violator)
        #expect(try temp.store.blocklist().map(\.number) == [b])
        // Blocking a again moves back only onlyA[2]: `both` carries b, blocked, and a.
        #expect(Set(try await service.block(a, note: nil, by: Self.supervisor).moved.map(\.id)) == [onlyA[2], both])
    }

    @Test("the blocklist's changes since a sequence number: each number's last change")
    func blocklistChanges() async throws {
        let (temp, service, a, b, _, _, _) = try await Self.blockingSetup()
        let start = try temp.store.lastChange()
        for n in [a, b] { _ = try await service.verify(n, outcome: .violator, note: nil, by: Self.supervisor) }
        _ = try await service.block(a, note: nil, by: Self.supervisor)
        let afterA = try temp.store.lastChange()
        _ = try await service.block(b, note: nil, by: Self.supervisor)
        var changes = try temp.store.blocklistChanges(since: start)
        #expect(changes.added.map(\.number) == [a, b] && changes.removed.isEmpty)
        let last = try temp.store.lastChange()
        #expect(changes.added[0].reportCount == 5 && changes.lastSeq == last)
        _ = try await service.unblock(a, note: nil, by: Self.supervisor)
        changes = try temp.store.blocklistChanges(since: afterA)
        #expect(changes.added.map(\.number) == [b] && changes.removed == [a])
        changes = try temp.store.blocklistChanges(since: start)
        #expect(changes.added.map(\.number) == [b] && changes.removed == [a], "blocked and unblocked since: removed")
        changes = try temp.store.blocklistChanges(since: changes.lastSeq)
        #expect(changes.added.isEmpty && changes.removed.isEmpty)
    }

    @Test("phone changes are in the feed: bare for the public, with the number, its status, who changed it and how many reports moved for staff")
    func phoneChangesInFeed() async throws {
        let (temp, service, a, _, onlyA, _, _) = try await Self.blockingSetup()
        let start = try temp.store.lastChange()
        _ = try await service.verify(a, outcome: .violator, note: "так", by: Self.supervisor)
        _ = try await service.block(a, note: nil, by: Self.supervisor)
        let feed = ChangeFeed(storage: temp.store)
        let staff = try await feed.page(since: start, limit: 100, staff: true).entries
        #expect(staff.map(\.type) == [.phoneVerified, .phoneBlocked] + onlyA.map { _ in .reportStatusChanged })
        #expect(staff[0].phone?.number == a && staff[0].phone?.status == .blocked && staff[0].phone?.change?.note == "так")
        #expect(staff[1].phone?.change?.moved == onlyA.count && staff[1].phone?.change?.author.accountID == 7)
        var out: [UInt8] = []
        try ChangeJSON.append(staff[1], to: &out)
        #expect(String(decoding: out, as: UTF8.self).hasPrefix(#"{"seq":\#(start + 2),"type":"phone.blocked","id":0,"at":"#))
        #expect(String(decoding: out, as: UTF8.self).contains(#","phone":"\#(a)","status":"blocked","change":{"#))
        let publicEntries = try await feed.page(since: start, limit: 100, staff: false).entries
        #expect(publicEntries[1].phone == nil, "which numbers are blocked is for integrations and staff")
        out = []
        try ChangeJSON.append(publicEntries[1], to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"{"seq":\#(start + 2),"type":"phone.blocked","id":0}"#)
    }
}

extension Caller {
    /// The same caller with an inspector's role (an attempt to act above one's role).
    var demoted: Caller { Caller(accountID: author.accountID, apiKeyID: author.apiKeyID, role: .inspector) }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
