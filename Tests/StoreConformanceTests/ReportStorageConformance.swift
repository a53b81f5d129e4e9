import Foundation
import Generator
import Geometry
import Offloading
import ReportModel
import ReportService
import StorePorts
import Testing
import TestSupport

/// What every store of reports must do (``ReportReads``, ``ReportWrites``, ``ChangeLog``),
/// checked against a brute-force model of the rows the test wrote: box queries, filters,
/// search, the write transaction's all or nothing, idempotency answers and the change log.
@Suite("Store conformance: reports, the write transaction and the change log")
struct ReportStorageConformance {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    struct Boom: Error {}

    /// `count` valid drafts at one spot in Kyiv.
    static func drafts(_ count: Int, for storage: any ReportStorage, seed: UInt64) throws -> [ReportDraft] {
        var rng = SplitMix64(state: seed)
        return try (0..<count).map { _ in try storage.reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng)) }
    }

    /// What the test wrote, as a brute force sees it.
    struct Model {
        /// The public reports, by id.
        var reports: [Int64: Report] = [:]
        var hidden: Set<Int64> = []
        var deleted: Set<Int64> = []

        /// The public reports the filter takes, in id order.
        func matching(_ filter: ReportFilter) -> [Report] {
            reports.values.filter { r in
                (filter.box?.contains(r.coordinate) ?? true) && (filter.statuses?.contains(r.status) ?? true)
                    && (filter.objectTypes?.contains(r.objectType) ?? true)
                    && (filter.created?.contains(r.createdMilliseconds) ?? true)
            }.sorted { $0.id < $1.id }
        }
    }

    /// The outcome of one write, which must have succeeded.
    static func one<T>(_ storage: any ReportStorage, _ write: @escaping (any ReportTransaction) throws -> T) throws -> T {
        try storage.commit([write])[0].get()
    }

    /// `count` reports at positions that stress box queries (float rounding, round edges,
    /// the antimeridian), each with phones and a time of its own; a tenth hidden and a
    /// tenth deleted, through the port's transaction steps.
    static func seed(_ storage: any ReportStorage, count: Int, seed: UInt64) throws -> Model {
        var rng = SplitMix64(state: seed)
        let drafts = try Drafts.positions(count, using: &rng).map { try storage.reference.validate(Drafts.make($0, using: &rng)) }
        let inserted = try one(storage) { t in try drafts.map { try t.insert($0, filer: nil, author: .system, now: Self.t0) } }
        var model = Model(reports: Dictionary(uniqueKeysWithValues: inserted.map { ($0.id, $0) }))
        let ids = inserted.map(\.id)
        for (i, id) in ids.enumerated() where i % 10 == 3 {
            _ = try one(storage) { t in try t.hide(id, note: "спам", author: .system, now: Self.t0) }
            model.reports[id] = nil
            model.hidden.insert(id)
        }
        for (i, id) in ids.enumerated() where i % 10 == 7 {
            _ = try one(storage) { t in try t.delete(id, author: .system, now: Self.t0) }
            model.reports[id] = nil
            model.deleted.insert(id)
        }
        return model
    }

    /// Boxes of every kind: random, across the antimeridian, degenerate, on round edges,
    /// tiny around a report, the world.
    static func boxes(_ model: Model, using rng: inout SplitMix64) throws -> [BoundingBox] {
        var boxes: [BoundingBox] = [.world, try BoundingBox(west: 170, south: -20, east: -170, north: 20)]
        boxes.append(try BoundingBox(west: 30.5 - 1e-6, south: 50.45 - 1e-6, east: 30.5 + 1e-6, north: 50.45 + 1e-6))
        boxes.append(try BoundingBox(west: -20, south: -10, east: 20, north: 30))  // edges on the round positions
        boxes.append(try BoundingBox(west: 180, south: -10, east: 180, north: 10))
        for _ in 0..<20 {
            let w = rng.uniform(-180, 180), e = rng.uniform(-180, 180), s = rng.uniform(-90, 80)
            boxes.append(try BoundingBox(west: w, south: s, east: e, north: min(90, s + rng.uniform(0, 60))))
        }
        for report in model.reports.values.sorted(by: { $0.id < $1.id }).prefix(5) {
            let c = report.coordinate
            boxes.append(try BoundingBox(west: c.longitude, south: c.latitude, east: c.longitude, north: c.latitude))
        }
        return boxes
    }

    /// Every page of a cursor-paged read, `limit` at a time.
    static func allPages(limit: Int, _ page: (_ after: Int64) async throws -> [Report]) async throws -> [Int64] {
        var ids: [Int64] = [], after: Int64 = 0
        while true {
            let got = try await page(after)
            ids += got.map(\.id)
            guard got.count == limit, let last = got.last else { return ids }
            after = last.id
        }
    }

    @Test("boxes, pages and filters answer exactly what a brute force over the public rows answers", arguments: StoreUnderTest.all)
    func boxesAndFilters(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        let model = try Self.seed(storage, count: 600, seed: 41)
        var rng = SplitMix64(state: 42)
        let statuses = storage.reference.statuses.map(\.code), types = storage.reference.objectTypes.map(\.code)
        for box in try Self.boxes(model, using: &rng) {
            let inBox = model.matching(ReportFilter(box: box)).map(\.id)
            #expect(try await storage.count(in: box) == inBox.count, "count in \(box)")
            #expect(try await Self.allPages(limit: 7) { try await storage.page(in: box, after: $0, limit: 7) } == inBox, "pages of \(box)")
            #expect(try await storage.ids(in: box, cap: inBox.count) == inBox, "ids of \(box)")
            if !inBox.isEmpty { #expect(try await storage.ids(in: box, cap: inBox.count - 1) == nil, "ids of \(box) past the cap") }

            let low = Int64(rng.uniform(1_600_000_000_000, 1_700_000_000_000))
            var filter = ReportFilter(box: box, statuses: Array(statuses.shuffled(using: &rng).prefix(3)), created: low...(low + 40_000_000_000))
            if rng.below(2) == 0 { filter.objectTypes = Array(types.shuffled(using: &rng).prefix(2)) }
            let matching = model.matching(filter).map(\.id)
            #expect(try await Self.allPages(limit: 5) { try await storage.reports(matching: filter, after: $0, limit: 5) } == matching, "filter \(filter)")
            #expect(try await Self.allPages(limit: 5) { try await storage.scan(matching: filter, after: $0, limit: 5) } == matching, "scan \(filter)")
            let among = inBox.filter { _ in rng.below(2) == 0 } + Array(model.hidden.prefix(3)) + Array(model.deleted.prefix(3))
            #expect(try await storage.reports(among: among.sorted(), matching: filter).map(\.id) == matching.filter(among.contains), "among, \(filter)")
            #expect(try await storage.count(matching: filter, ids: among) == matching.filter(among.contains).count, "count among, \(filter)")
        }
        let all = model.reports.keys.sorted()
        #expect(try await storage.reports(ids: all.reversed() + [999_999]).map(\.id) == all.reversed(), "by ids, in the order asked, public only")
        for id in model.hidden.union(model.deleted) { #expect(try await storage.report(id: id) == nil) }
        let created = model.reports.values.map(\.createdAt)
        #expect(try await storage.createdRange() == created.min()!...created.max()!)
        _ = keep
    }

    @Test("search finds a fragment of a phone's digits or of the id, the exact id first, then the newest; counts agree", arguments: StoreUnderTest.all)
    func search(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        let model = try Self.seed(storage, count: 300, seed: 43)
        func second(_ r: Report) -> Int64 { Int64(r.createdAt.timeIntervalSince1970.rounded(.down)) }
        func expected(_ digits: String) -> [Int64] {
            let exact = digits.first == "0" ? nil : Int64(digits)
            let head = model.reports.values.filter { $0.id == exact }
            let rest = model.reports.values.filter { r in r.id != exact && (r.phones.contains { $0.contains(digits) } || String(r.id).contains(digits)) }
                .sorted { (second($0), $0.id) > (second($1), $1.id) }
            return (head + rest).map(\.id)
        }
        var rng = SplitMix64(state: 44)
        var queries = ["1", "7", "12", "067", "380", "5", "99999999", "123"]
        for _ in 0..<30 {
            let phone = rng.pick(Array(model.reports.values)).phones[0]
            let length = rng.int(1...12)
            queries.append(String(phone.dropFirst(rng.int(0...(12 - length))).prefix(length)))
        }
        // Whole ids and their parts: the exact id first, found once.
        for report in model.reports.values.sorted(by: { $0.id < $1.id }).shuffled(using: &rng).prefix(5) { queries += [String(report.id), String(String(report.id).dropFirst())] }
        for q in queries {
            let want = expected(q)
            for limit in [1, 20, 1_000] {
                #expect(try await storage.search(q, limit: limit).map(\.id) == Array(want.prefix(limit)), "q=\(q) limit=\(limit)")
                let both = try await storage.searchWithCount(q, limit: limit)
                #expect(both.reports.map(\.id) == Array(want.prefix(limit)) && both.matched == want.count, "both at once: q=\(q) limit=\(limit)")
            }
            #expect(try await storage.searchCount(q) == want.count, "q=\(q)")
            for cap in [0, 1, want.count, want.count + 5] {
                #expect(try await storage.searchCount(q, cap: cap) == min(want.count, cap + 1), "q=\(q) counted up to \(cap)")
            }
        }
        // The service: three digits or more from its tally, counted exactly; one or two from
        // the store, counted up to its cap and "more" past it.
        let capped = try await ReportService(storage: storage, searchCountCap: 1)
        var past = 0
        for q in queries + ["1", "7", "12", "50"] {
            let want = expected(q)
            let (found, matched) = try await capped.search(q, limit: 20)
            let short = (try Phone.searchFragment(q)).count < 3
            #expect(found.map(\.id) == Array(want.prefix(20)) && matched == (short && want.count > 1 ? nil : want.count), "q=\(q): \(want.count)")
            if matched == nil { past += 1 }
        }
        #expect(past > 0, "some short fragments matched past the cap")
        _ = keep
    }

    @Test("the photos of many reports in one read are each report's, in the order added, as one report's read gives them", arguments: StoreUnderTest.all)
    func photosOfMany(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        let ids = try Self.one(storage) { t in try Self.drafts(4, for: storage, seed: 47).map { try t.insert($0, filer: nil, author: .system, now: Self.t0).id } }
        let names = (0..<4).map { String(repeating: String($0), count: 64) }
        _ = try Self.one(storage) { t in
            for (report, name) in [(ids[0], names[0]), (ids[2], names[1]), (ids[0], names[2]), (ids[2], names[3])] {
                _ = try t.addPhoto(to: report, sha256: name, width: 4, height: 3, bytes: 64, author: .system, now: Self.t0)
            }
        }
        let many = try await storage.photos(of: ids + [999_999])
        #expect(many.keys.sorted() == [ids[0], ids[2]])
        for id in ids { #expect(many[id] ?? [] == (try await storage.photos(of: id)), "report \(id)") }
        #expect(many[ids[0]]?.map(\.sha256) == [names[0], names[2]])
        #expect(try await storage.photos(of: [Int64]()).isEmpty)
        _ = keep
    }

    @Test("a commit is all or nothing per write: a write that fails leaves no row, change or answer behind, and the others commit", arguments: StoreUnderTest.all)
    func allOrNothing(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        let drafts = try Self.drafts(4, for: storage, seed: 45)
        let filer = try await stores.accounts.createAccount(AccountStorageConformance.new(1), now: Self.t0).id
        let before = try await storage.lastChange()
        let answer = StoredAnswer(fingerprint: Data([1, 2, 3]), reply: .init(status: 201, headers: ["Location": "/v1/reports/1"], body: Data("{}".utf8)))
        let writes: [(any ReportTransaction) throws -> Int64] = [
            { t in try t.insert(drafts[0], filer: filer, author: .system, now: Self.t0).id },
            { t in
                // Fails after writing: its row, change and answer go with it.
                _ = try t.insert(drafts[1], filer: nil, author: .system, now: Self.t0)
                try t.store(answer, caller: "account:1", key: "lost", now: Self.t0)
                throw Boom()
            },
            { _ in throw Boom() },  // fails before writing
            { t in
                let report = try t.insert(drafts[2], filer: nil, author: .system, now: Self.t0)
                try t.store(answer, caller: "account:1", key: "kept", now: Self.t0)
                return report.id
            },
        ]
        let outcomes = storage.commit(writes)
        let kept = outcomes.compactMap { try? $0.get() }
        try #require(kept.count == 2 && outcomes.filter { (try? $0.get()) == nil }.count == 2)
        #expect(try await storage.reports(ids: kept).map(\.id) == kept)
        #expect(try await storage.count(in: .world) == 2, "the failed write's report is gone")
        let changes = try await storage.changes(after: before, limit: 100)
        #expect(changes.rows.map(\.reportID) == kept && changes.rows.allSatisfy { $0.action == .filed } && changes.lastSeq == changes.rows.last?.seq)
        #expect(try await storage.storedAnswer(caller: "account:1", key: "kept") == answer)
        #expect(try await storage.storedAnswer(caller: "account:1", key: "lost") == nil)
        #expect(try await storage.storedAnswer(caller: "account:2", key: "kept") == nil, "an answer is the caller's own")
        #expect(try await storage.filer(of: kept[0]) == filer)
        #expect(try await storage.filer(of: kept[1]) == nil)
        #expect(try await storage.history(of: kept[0], after: 0, limit: 1_000).map(\.action) == [.filed])

        // Keys are forgotten by age; the reports stay.
        #expect(try await storage.forgetIdempotencyKeys(before: Self.t0) == 0)
        #expect(try await storage.forgetIdempotencyKeys(before: Self.t0 + 1) == 1)
        #expect(try await storage.storedAnswer(caller: "account:1", key: "kept") == nil)
        _ = keep
    }

    @Test("an import into an empty store and then into one with reports: every row as given, text with tabs, newlines, carriage returns, backslashes and any script intact, doubles to the bit; each number's reports found; nothing of an import refused", arguments: StoreUnderTest.all)
    func importRoundTrip(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        var rng = SplitMix64(state: 47)
        // Control characters only where a field takes them (a comment's lines); backslashes, `\N` and `\.` anywhere.
        let awkward = ["back\\slash \\N", "emoji 🪧 і ґ є", "\\.", "a \\t that is not a tab"]
        let multiline = ["line\nbreak", "cr\r\nlf", "a\tb", "\\\n\\"]
        let phones = (0..<6).map { _ in Drafts.randomPhone(using: &rng) }
        func batch(_ ids: ClosedRange<Int64>) throws -> [DraftRecord] {
            try ids.map { id in
                var draft = Drafts.make(Drafts.positions(1, using: &rng)[0], id: id, phones: [phones[Int(id) % 6], phones[(Int(id) + 1) % 6]], using: &rng)
                draft.comment = multiline[Int(id) % multiline.count]
                draft.violator = id % 3 == 0 ? nil : awkward[(Int(id) + 2) % awkward.count]
                draft.address = "вул. " + awkward[(Int(id) + 4) % awkward.count]
                return DraftRecord(location: .line(Int(id)), draft: .success(try storage.reference.validate(draft)))
            }
        }
        let first = try batch(1...60), second = try batch(61...90)
        var options = ImportOptions()
        options.keepsIDs = true
        for records in [first, second] {
            var pending = [records]
            let summary = try await storage.importRecords(options: options, now: Self.t0, next: { pending.popLast() }, progress: { _ in })
            #expect(summary.imported == records.count && summary.skipped == 0)
        }
        let given = try (first + second).map { try $0.draft.get() }
        let stored = try await storage.reports(ids: given.map { $0.id! })
        #expect(stored.count == given.count)
        for (report, draft) in zip(stored, given) {
            #expect(report.id == draft.id && report.address == draft.address && report.violator == draft.violator && report.comment == draft.comment, "\(report.id)")
            #expect(report.coordinate.longitude.bitPattern == draft.coordinate.longitude.bitPattern && report.coordinate.latitude.bitPattern == draft.coordinate.latitude.bitPattern)
            #expect(report.phones == draft.phones && report.status == draft.status && report.createdAt == draft.createdAt)
        }
        for phone in phones {
            let holding = given.filter { $0.phones.contains(phone) }.map { $0.id! }.sorted(by: >)
            #expect(try await storage.holders(of: phone, limit: 1_000).map(\.reportID) == holding, "+\(phone) after both imports")
            #expect(try await storage.reports(carrying: phone, after: 0, limit: 1_000).matched == holding.count)
        }
        _ = keep
    }

    @Test("filings the store itself refuses when it writes them (a row its rules reject, an id already taken) fail alone among many in one commit; the others commit in order, each with its history, change and phones, and a read in the same commit sees the filings before it", arguments: StoreUnderTest.all)
    func refusedFilingsAmongMany(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        var drafts = try Self.drafts(6, for: storage, seed: 46)
        drafts[1].address = String(repeating: "a", count: 300)  // past the table's rule, which validation would have caught
        let before = try await storage.lastChange()
        let writes: [(any ReportTransaction) throws -> Int64] = [
            { t in try t.insert(drafts[0], filer: nil, author: .system, now: Self.t0).id },
            { t in try t.insert(drafts[1], filer: nil, author: .system, now: Self.t0).id },
            { t in try t.insert(drafts[2], filer: nil, author: .system, now: Self.t0).id },
            { t in
                var taken = drafts[3]
                taken.id = 1  // the first write's
                return try t.insert(taken, filer: nil, author: .system, now: Self.t0).id
            },
            { t in
                let id = try t.insert(drafts[4], filer: nil, author: .system, now: Self.t0).id
                // Read back in the same transaction: the filings so far are there.
                guard try t.report(id)?.address == drafts[4].address, try t.report(1) != nil else { throw Boom() }
                return id
            },
            { t in try t.insert(drafts[5], filer: nil, author: .system, now: Self.t0).id },
        ]
        let outcomes = storage.commit(writes)
        #expect(outcomes.map { (try? $0.get()) != nil } == [true, false, true, false, true, true])
        if case .failure(let error) = outcomes[3] { #expect(error is ValidationError, "a taken id is the filer's mistake, said so: \(error)") }
        let kept = outcomes.compactMap { try? $0.get() }
        #expect(kept == kept.sorted() && Set(kept).count == 4)
        #expect(try await storage.reports(ids: kept).map(\.address) == [0, 2, 4, 5].map { drafts[$0].address })
        #expect(try await storage.count(in: .world) == 4)
        let changes = try await storage.changes(after: before, limit: 100)
        #expect(changes.rows.map(\.reportID) == kept && changes.rows.map(\.seq) == Array(before + 1...before + 4), "numbered without gaps, in order")
        for (id, i) in zip(kept, [0, 2, 4, 5]) {
            #expect(try await storage.history(of: id, after: 0, limit: 1_000).map(\.action) == [.filed])
            for phone in drafts[i].phones {
                #expect(try await storage.holders(of: phone, limit: 50).contains { $0.reportID == id }, "report \(id) holds \(phone)")
            }
        }
        _ = keep
    }

    @Test("two replicas filing with one idempotency key at once: one files, the other replays its answer; another body is refused", arguments: StoreUnderTest.all)
    func idempotencyAcrossReplicas(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        // Two services on one database: two replicas, each with its own keys in flight and its own group commit.
        let (a, b) = (try await ReportService(storage: storage), try await ReportService(storage: storage))
        let draft = try Self.drafts(1, for: storage, seed: 48)[0]
        let caller = Caller(accountID: nil, role: .supervisor)
        let answer: @Sendable (Filing) throws -> StoredAnswer.Reply = { StoredAnswer.Reply(status: 201, headers: [:], body: Data("\($0.report.id)".utf8)) }
        for round in 0..<20 {
            let key = "key \(round)"
            async let first = a.file(draft, by: caller, key: key, body: Data("body".utf8), answer: answer)
            async let second = b.file(draft, by: caller, key: key, body: Data("body".utf8), answer: answer)
            var filed: [StoredAnswer.Reply] = [], replayed: [StoredAnswer.Reply] = []
            for outcome in [try await first, try await second] {
                switch outcome {
                case .first(let reply): filed.append(reply)
                case .replayed(let reply): replayed.append(reply)
                }
            }
            #expect(filed.count == 1 && replayed == filed, "round \(round): \(filed) \(replayed)")
        }
        #expect(try await storage.count(in: .world) == 20, "one report a key")
        await #expect(throws: IdempotencyKeyReused.self) { try await b.file(draft, by: caller, key: "key 0", body: Data("other".utf8), answer: answer) }
        _ = keep
    }

    @Test("every change of a report writes its history and its numbered change; hidden reports are staff's, deleted ones gone, history kept", arguments: StoreUnderTest.all)
    func changesAndHistory(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        var rng = SplitMix64(state: 46)
        let draft = try storage.reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), status: "new", using: &rng))
        let filer = try await stores.accounts.createAccount(AccountStorageConformance.new(1), now: Self.t0).id
        let filed = try Self.one(storage) { t in try t.insert(draft, filer: filer, author: Author(accountID: filer, apiKeyID: nil), now: Self.t0) }
        let id = filed.id
        var edited = draft
        edited.comment = "уточнено"
        let (_, after) = try Self.one(storage) { t in try t.edit(id, to: edited, author: .system, now: Self.t0 + 1) }
        #expect(after.comment == "уточнено" && after.updatedAt > filed.updatedAt)
        _ = try Self.one(storage) { t in try t.setStatus(id, to: "verifying", note: "перевіряємо", author: .system, now: Self.t0 + 2) }
        // The filer's read mark: never back, never past the newest change.
        let newest = try await storage.changes(after: 0, limit: 100).lastSeq
        #expect(try Self.one(storage) { t in try t.markNotificationsRead(of: filer, upTo: Int64(1) << 53) } == (newest, 0))
        #expect(try Self.one(storage) { t in try t.markNotificationsRead(of: filer, upTo: 0) }.readUpTo == newest)
        _ = try Self.one(storage) { t in try t.hide(id, note: "спам", author: .system, now: Self.t0 + 3) }
        #expect(try await storage.report(id: id) == nil)
        #expect(try await storage.hidden(id: id)?.note == "спам")
        #expect(try await storage.hidden(ids: [id, 999]).keys.sorted() == [id])
        #expect(try await storage.filers(of: [id]) == [id: filer])
        #expect(try await storage.reports(filedBy: filer, before: nil, limit: 10).isEmpty, "a hidden report is left out of its filer's list")
        _ = try Self.one(storage) { t in try t.unhide(id, note: nil, author: .system, now: Self.t0 + 4) }
        #expect(try await storage.reports(filedBy: filer, before: nil, limit: 10).map(\.id) == [id])
        _ = try Self.one(storage) { t in try t.delete(id, author: .system, now: Self.t0 + 5) }
        #expect(try await storage.report(id: id) == nil)
        #expect(try await storage.hidden(id: id) == nil)
        #expect(try Self.one(storage) { t in try t.report(id) } == nil, "the transaction sees it gone too")

        let history = try await storage.history(of: id, after: 0, limit: 1_000)
        #expect(history.map(\.action) == [.filed, .edited, .transition, .hidden, .unhidden, .deleted], "the history outlives the report")
        #expect(history[1].changes.map(\.field) == ["comment"] && history[2].fromStatus == "new" && history[2].toStatus == "verifying")
        // In pages: after a row's number, at most so many.
        #expect(try await storage.history(of: id, after: history[1].seq, limit: 2).map(\.seq) == history[2...3].map(\.seq))
        #expect(try await storage.history(of: id, after: history[5].seq, limit: 2).isEmpty)
        #expect(try await storage.history(of: id, after: 0, limit: 1).map(\.seq) == [history[0].seq])
        let changes = try await storage.changes(after: 0, limit: 100).rows
        #expect(changes.map(\.action) == history.map(\.action) && changes.allSatisfy { $0.reportID == id })
        #expect(Set(changes.compactMap(\.historySeq)) == Set(history.map(\.seq)), "each change names its history row")
        #expect(try await storage.history(seqs: history.map(\.seq)).count == history.count)
        #expect(try await storage.changes(seqs: [changes[1].seq, changes[3].seq, 999]).map(\.seq) == [changes[1].seq, changes[3].seq])
        _ = keep
    }

    @Test("the change log: numbered in commit order while a writer writes; a page's reports are current; forgetting keeps the last number", arguments: StoreUnderTest.all)
    func changeLog(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        let reference = storage.reference
        var rng = SplitMix64(state: 48)
        let writer = Task.detached { () throws -> [Int64] in
            var rng = SplitMix64(state: 47)
            var ids: [Int64] = []
            for _ in 0..<200 {
                let draft = try reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), status: "new", using: &rng))
                ids.append(try Self.one(storage) { t in try t.insert(draft, filer: nil, author: .system, now: Self.t0).id })
            }
            return ids
        }
        // A follower in small pages while the writer writes: each change once, in order.
        var seen: [Int64] = [], last: Int64 = 0
        while seen.count < 200 {
            let page = try await storage.changes(after: last, limit: 3)
            for row in page.rows {
                #expect(row.seq > last)
                seen.append(row.seq)
                last = row.seq
            }
            #expect(page.lastSeq >= last)
            if page.rows.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
        }
        let ids = try await writer.value
        #expect(seen == Array(seen.sorted()) && Set(seen).count == 200)
        let (page, reports) = try await storage.changesWithReports(after: 0, limit: 1_000)
        #expect(page.rows.map(\.reportID) == ids && Set(reports.keys) == Set(ids))

        _ = try Self.one(storage) { t in try t.hide(ids[0], note: "спам", author: .system, now: Self.t0) }
        let (_, now) = try await storage.changesWithReports(after: 0, limit: 1)
        #expect(now.isEmpty, "a page's reports are current: the hidden one is not public now")
        let lastSeq = try await storage.lastChange()
        #expect(try await storage.forgetChanges(before: Self.t0 + 1) == 201)
        let after = try await storage.changes(after: 0, limit: 10)
        #expect(after.rows.isEmpty && after.lastSeq == lastSeq && after.prunedThrough == lastSeq)
        #expect(try await storage.lastChange() == lastSeq, "the last number never goes back")

        // Waiting for the next change: nothing comes, the wait ends with the last number;
        // a write comes, the waiter wakes with it (its timeout far beyond any test's length).
        #expect(try await storage.nextChange(after: lastSeq, timeout: .milliseconds(100)) == lastSeq)
        #expect(try await storage.nextChange(after: lastSeq - 1, timeout: .seconds(3_600)) == lastSeq, "a change already past returns at once")
        let waiter = Task { try await storage.nextChange(after: lastSeq, timeout: .seconds(3_600)) }
        let draft = try reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), status: "new", using: &rng))
        _ = try Self.one(storage) { t in try t.insert(draft, filer: nil, author: .system, now: Self.t0) }
        #expect(try await waiter.value == lastSeq + 1)
        _ = keep
    }

    @Test("each transaction's change numbers are its own while three replicas write at once: they follow on from the last committed, and hold exactly its writes' changes, none of a write undone", arguments: StoreUnderTest.all)
    func changeNumbers(_ store: StoreUnderTest) async throws {
        let (replicas, keep) = try await store.replicas(3)
        let reference = replicas[0].reference
        let start = try await replicas[0].lastChange()
        // What one replica committed: the numbers, and the reports its changes must name.
        typealias Commit = (numbers: ChangeNumbers?, named: [Int64])
        let commits = try await withThrowingTaskGroup(of: [Commit].self) { group in
            for (n, storage) in replicas.enumerated() {
                group.addTask {
                    try await Blocking.offPool {
                        var rng = SplitMix64(state: 60 + UInt64(n))
                        var mine: [Int64] = [], commits: [Commit] = []
                        for round in 0..<40 {
                            let drafts = try (0..<3).map { _ in try reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), status: "new", using: &rng)) }
                            var writes: [(any ReportTransaction) throws -> [Int64]] = [
                                { t in [try t.insert(drafts[0], filer: nil, author: .system, now: Self.t0).id] },
                                { t in
                                    // Undone after writing: none of its changes is the transaction's.
                                    _ = try t.insert(drafts[1], filer: nil, author: .system, now: Self.t0)
                                    throw Boom()
                                },
                            ]
                            if let earlier = mine.last, round % 2 == 1 {
                                writes.append { t in
                                    _ = try t.setStatus(earlier, to: "verifying", note: nil, author: .system, now: Self.t0)
                                    return [earlier, try t.insert(drafts[2], filer: nil, author: .system, now: Self.t0).id]
                                }
                            }
                            if round % 10 == 9 { writes = [{ _ in throw Boom() }] }  // a transaction that writes nothing
                            let committed = storage.commitNumbered(writes)
                            let named = committed.outcomes.compactMap { try? $0.get() }.flatMap { $0 }
                            mine += named
                            commits.append((committed.numbers, named))
                        }
                        return commits
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let log = try await replicas[0].changes(after: start, limit: 10_000).rows
        #expect(log.count == commits.map(\.named.count).reduce(0, +), "every change is one of the commits' writes")
        for commit in commits {
            guard let numbers = commit.numbers else {
                #expect(commit.named.isEmpty, "a transaction that wrote gives its numbers")
                continue
            }
            let own = log.filter { $0.seq > numbers.after && $0.seq <= numbers.through }
            #expect(own.map(\.reportID).sorted() == commit.named.sorted(), "the changes numbered \(numbers) are its writes': \(own.map(\.reportID)) for \(commit.named)")
        }
        // Commit order: each transaction's numbers follow on from the one committed before it.
        let ranges = commits.compactMap(\.numbers).sorted { $0.after < $1.after }
        #expect(ranges.first?.after == start && ranges.last?.through == log.last?.seq)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.through == $1.after }, "\(ranges)")
        _ = keep
    }

    @Test("the change log's name: made with the database, kept through writes, another database's differs", arguments: StoreUnderTest.all)
    func changeLogName(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let (others, keepOthers) = try await store.open()
        let name = try await stores.reports.changeLogName()
        #expect(name.count == 32 && name.allSatisfy(\.isHexDigit), "128 random bits: \(name)")
        _ = try Self.seed(stores.reports, count: 5, seed: 50)
        #expect(try await stores.reports.changeLogName() == name)
        #expect(try await others.reports.changeLogName() != name)
        _ = (keep, keepOthers)
    }

    @Test("phones: a number's record, its reports in pages, its holders and statuses agree with a brute force; a block moves the confirmed reports it stops and an unblock moves them back; the blocklist and its changes follow", arguments: StoreUnderTest.all)
    func phones(_ store: StoreUnderTest) async throws {
        let (stores, keep) = try await store.open()
        let storage = stores.reports
        var model = try Self.seed(storage, count: 300, seed: 49)
        // Numbers shared by several reports: the first phone of every tenth report is given
        // to its next two as well.
        var rng = SplitMix64(state: 50)
        let ids = model.reports.keys.sorted()
        for (i, id) in ids.enumerated() where i % 10 == 0 && i + 2 < ids.count {
            for (k, other) in ids[(i + 1)...(i + 2)].enumerated() {
                var draft = ReportDraft(model.reports[other]!)
                // The first carries the number alone (a block stops it), the second with its own.
                draft.phones = [model.reports[id]!.phones[0]] + (k == 0 ? [] : draft.phones.prefix(1))
                let (_, after) = try Self.one(storage) { t in try t.edit(other, to: storage.reference.validate(draft), author: .system, now: Self.t0 + 1) }
                model.reports[other] = after
            }
        }
        func carrying(_ number: String) -> [Report] { model.reports.values.filter { $0.phones.contains(number) }.sorted { $0.id < $1.id } }
        let numbers = Array(Set(model.reports.values.flatMap(\.phones))).sorted()
        for number in numbers.shuffled(using: &rng).prefix(40) + [ids.first.map { model.reports[$0]!.phones[0] }!] {
            let want = carrying(number)
            let record = try await storage.phoneRecord(number)
            #expect(record?.reportCount == want.count && record?.statusCounts == Dictionary(grouping: want, by: \.status).mapValues(\.count), "record of \(number)")
            #expect(try await Self.allPages(limit: 2) { try await storage.reports(carrying: number, after: $0, limit: 2).reports } == want.map(\.id))
            #expect(try await storage.reports(carrying: number, after: 0, limit: 1).matched == want.count)
            #expect(try await storage.holders(of: number, limit: 100).map(\.reportID) == want.map(\.id).reversed())
        }
        #expect(try await storage.phoneRecord("380000000000") == nil, "a number nobody carries and nobody verified has no record")

        // Through the service: confirm the reports of a shared number, verify it, block it.
        let service = try await ReportService(storage: storage)
        let boss = Caller(accountID: nil, role: .supervisor)
        let shared = model.reports[ids[0]]!.phones[0]
        let holders = carrying(shared)
        // The lone carrier confirmed (whatever its status was), as a supervisor would.
        _ = try Self.one(storage) { t in try t.setStatus(ids[1], to: "confirmed", note: nil, author: .system, now: Self.t0 + 2) }
        let confirmed = try await storage.reports(ids: holders.map(\.id)).filter { $0.status == "confirmed" }
        _ = try await service.verify(shared, outcome: .violator, note: "так", by: boss)
        let blocked = try await service.block(shared, note: "операторам", by: boss)
        let stopped = confirmed.filter { $0.phones.allSatisfy { $0 == shared } }.map(\.id)
        #expect(!stopped.isEmpty && blocked.moved.map(\.id).sorted() == stopped.sorted(), "the confirmed reports whose every number is blocked move")
        #expect(try await storage.phoneStatuses([shared, "380000000000"]) == [shared: .blocked, "380000000000": .unverified])
        let blocklist = try await storage.blocklist()
        #expect(blocklist.map(\.number) == [shared] && blocklist.first?.reportCount == holders.count)
        #expect(try await storage.blockedCount() == 1)
        #expect(try await storage.blocklistChanges(since: 0).added.map(\.number) == [shared])
        let unblocked = try await service.unblock(shared, note: "зняли", by: boss)
        #expect(unblocked.moved.map(\.id).sorted() == stopped.sorted(), "an unblock moves back what the block moved")
        let changes = try await storage.blocklistChanges(since: 0)
        #expect(changes.added.isEmpty && changes.removed == [shared])
        #expect(try await storage.phoneRecord(shared)?.history.map(\.action) == [.verified, .blocked, .unblocked])
        // A record holds the newest of its changes: nothing else bounds a supervisor's steps.
        for step in 0..<PhoneRecord.maxHistory {
            _ = try await service.verify(shared, outcome: step % 2 == 0 ? .notViolator : .violator, note: "крок \(step)", by: boss)
        }
        let steps = try #require(try await storage.phoneRecord(shared)?.history)
        #expect(steps.count == PhoneRecord.maxHistory && steps.first?.note == "крок 0" && steps.last?.note == "крок \(PhoneRecord.maxHistory - 1)")
        #expect(steps.map(\.seq) == steps.map(\.seq).sorted(), "oldest first")
        #expect(try Self.one(storage) { t in try t.knows(phone: model.reports[ids[3]]!.phones[0]) })
        #expect(try Self.one(storage) { t in try t.knows(phone: "380000000001") } == false)
        _ = keep
    }
}
