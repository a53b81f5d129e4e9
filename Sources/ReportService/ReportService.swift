import Clustering
import Foundation
import Geometry
import Offloading
import ReportModel
import StorePorts
import Synchronization
import Tally

/// The reports as the service answers for them: a store (its ports, `StorePorts`) and the
/// cluster index, kept in step.
///
/// The index is built from the store when the service starts. Every write made through
/// the service is one transaction (the report's row, its history row and its change row),
/// shared with the writes that arrive together (``GroupCommit``); once committed it is
/// applied to the index, in commit order, and the next query after a write returns sees
/// it. Writes made to the database by other processes (`posterwatch import`, a second
/// server) reach the index as the service follows the change log (``catchUp()``).
///
/// ```swift
/// let service = try await ReportService(storage: Stores.sqlite(path: "var/posterwatch.sqlite").reports)
/// let filter = try service.filter(statuses: ["new", "verifying"], created: nil)
/// let answer = try await service.clusters(in: box, zoom: 12, filter: filter)
/// ```
public final class ReportService: Sendable {
    /// The store and the index are the service's own: everything outside reads and writes
    /// through the methods below, so no write can reach the index around the store, nor
    /// the store around the index and its observers.
    let storage: any ReportStorage
    let index: ClusterIndex
    /// The numbers of every public report, for rankings by area (kept with the index).
    let tally: ReportTally
    /// The vocabularies of the store (districts, object types, holders, statuses).
    public let reference: ReferenceData
    /// How many reports the index holds.
    public var reportCount: Int { index.count }
    /// The deepest zoom of the clusters.
    public var maxZoom: Int { index.grid.maxZoom }
    /// The status codes in index order (a cluster's `statusCounts[s]` counts `statusCodes[s]`).
    public let statusCodes: [String]
    let observers = WriteObservers()
    /// The cluster index, for reading only (the tiles are drawn from it).
    public var clusterView: ClusterView { ClusterView(index) }
    /// The reads that need no index, shared with one-shot commands.
    public var stored: StoredReports { StoredReports(storage: storage) }
    /// The last change the index is known to include (see ``catchUp()``).
    let followed: FollowedChange
    let commits: GroupCommit
    /// What duplicate hints and the service area are.
    public let intake: IntakeSettings
    /// Idempotency keys whose first request is still running.
    let keysInFlight = Mutex<Set<String>>([])
    /// Where uploaded photos are decoded and encoded, at most this many at once.
    public let photoLanes: Lanes
    /// Whether the index is built (see ``IndexStart``).
    let ready: Atomic<Bool>
    /// Why a saved index was not used, and a background build's trouble.
    let startProblem = Mutex<String?>(nil)
    /// Whether the start read the database's copy of a saved index (``SharedIndexStorage``)
    /// because its own file could not be used.
    public let startedFromSharedIndex: Bool
    /// Whether the start fetched the database's copy and refused it: the copy is then
    /// replaced however near it is (``shareIndex(from:unlessWithin:saved:)``).
    let sharedCopyRefused: Atomic<Bool>
    /// Raised when the index refused a committed write: it is not saved then.
    let diverged = Flag()
    /// A start's background build, cancelled by ``shutDown()``.
    let backgroundBuild = Mutex<Task<Void, Never>?>(nil)
    /// Public rows kept in memory (nil: every read goes to the store).
    let rowCache: RowCache?
    /// Whether the last pass over other processes' changes failed: their writes may then
    /// not have reached the rows kept, which are not used until a pass succeeds.
    let followFailing = Atomic(false)

    /// Opens the service over `storage`, with the index of every stored report built or
    /// read as `start` says. Photos are processed `photoWorkers` at a time (by default
    /// ``defaultPhotoWorkers``).
    public convenience init(
        storage: any ReportStorage, grid: ClusterGrid = .standard, intake: IntakeSettings? = nil, photoWorkers: Int? = nil,
        searchCountCap: Int = ReportService.defaultSearchCountCap, rowCacheSize: Int = 0, start: IndexStart = .build
    ) async throws {
        try await self.init(
            storage: storage, grid: grid, intake: intake, photoWorkers: photoWorkers, searchCountCap: searchCountCap, rowCacheSize: rowCacheSize, start: start,
            buildWaits: nil)
    }

    /// The same; a background build first awaits `buildWaits` (the tests hold it there to
    /// see the service while it builds). Up to `rowCacheSize` public rows are kept in
    /// memory (``RowCache``; 0: none).
    package init(
        storage: any ReportStorage, grid: ClusterGrid = .standard, intake: IntakeSettings? = nil, photoWorkers: Int? = nil,
        searchCountCap: Int = ReportService.defaultSearchCountCap, rowCacheSize: Int = 0, start: IndexStart, buildWaits: (@Sendable () async -> Void)?
    ) async throws {
        self.storage = storage
        self.searchCountCap = searchCountCap
        let reference = storage.reference
        self.reference = reference
        photoLanes = Lanes(width: max(1, photoWorkers ?? Self.defaultPhotoWorkers))
        statusCodes = reference.statuses.map(\.code)
        let index: ClusterIndex, tally: ReportTally, lastChange: Int64
        var building = false, fetched = false, copyRefused = false
        switch start {
        case .build:
            (index, tally, lastChange) = try await Self.build(storage, grid: grid)
        case .saved(let path, let catchUp):
            do {
                (index, tally, lastChange, fetched) = try await SavedIndex.load(path, storage: storage, grid: grid, reference: reference, catchUp: catchUp)
            } catch {
                // Empty until built in the background (below); a write meanwhile reaches the
                // built index through the change log.
                startProblem.withLock { $0 = "the saved index was not used: \(loggable(error))" }
                copyRefused = (error as? SavedIndex.Refused)?.copyRefused ?? false
                building = true
                (index, tally, lastChange) = (try ClusterIndex(grid: grid, statusCount: statusCodes.count, entries: []), Self.tally([], reference), 0)
            }
        }
        ready = Atomic(!building)
        startedFromSharedIndex = fetched
        sharedCopyRefused = Atomic(copyRefused)
        followed = FollowedChange(lastChange)
        let observers = self.observers, diverged = self.diverged
        self.index = index
        self.tally = tally
        self.intake = intake ?? IntakeSettings(reference: reference)
        let rowCache = rowCacheSize > 0 ? RowCache(capacity: rowCacheSize) : nil
        self.rowCache = rowCache
        let followed = self.followed
        commits = GroupCommit(storage: storage) { effects, numbers in
            // Before the writers are answered: a read after a write finds the new row.
            for effect in effects { rowCache?.drop(effect.rowsChanged) }
            let rebuilt = effects.last(where: { $0.replacement != nil })?.replacement
            if let rebuilt {
                index.replaceContents(with: rebuilt.index)
                tally.replaceContents(with: rebuilt.tally)
                rowCache?.dropAll()
                observers.notifyReplaced()
                followed.reset(to: rebuilt.through)
            }
            var refused = false
            for effect in effects where !effect.changes.isEmpty {
                // The rows are committed: an entry the index refuses is a bug of ours. The
                // index is then no longer the rows' and is not saved (``saveIndex(to:)``):
                // the next start builds it from the rows. Meanwhile what was followed
                // stays: the next pass reads these changes again and mends what it can.
                do { try index.apply(effect.changes) } catch {
                    diverged.raise()
                    refused = true
                }
            }
            tally.apply(effects.flatMap(\.phones))
            observers.notify(effects.flatMap(\.touched))
            if !refused { followed.advance(passes: effects.compactMap(\.pass), own: numbers, replaced: rebuilt != nil) }
        }
        if indexReady, case .saved = start {
            // A saved index behind the log (allowed by the start) reads the changes since.
            do { _ = try await followLog(rebuilding: false) } catch {
                startProblem.withLock { $0 = "the saved index could not read the changes made since it was saved: \(error)" }
                ready.store(false, ordering: .releasing)
            }
        }
        if !indexReady {
            backgroundBuild.withLock {
                $0 = Task.detached { [self] in
                    await buildWaits?()
                    await buildInBackground()
                }
            }
        }
    }

    /// The index and tally of every stored report, from the rows, and the last change they include.
    static func build(_ storage: any ReportStorage, grid: ClusterGrid) async throws -> (ClusterIndex, ReportTally, Int64) {
        let reference = storage.reference
        let (markers, tallied, lastChange) = try await Blocking.offPool { try await storage.snapshot(ClusterEntry.init) }
        // The two from the same rows at once, on two threads: a start's wait is the longer.
        let statusCount = reference.statuses.count
        async let builtIndex = Blocking.offPool { try ClusterIndex(grid: grid, statusCount: statusCount, entries: markers) }
        async let builtTally = Blocking.offPool { Self.tally(tallied, reference) }
        return (try await builtIndex, try await builtTally, lastChange)
    }

    func entry(_ report: Report) -> ClusterEntry? {
        ClusterEntry(report, reference: reference)
    }

    /// The tally of these reports.
    package static func tally(_ markers: [TallyMarker], _ reference: ReferenceData) -> ReportTally {
        ReportTally(
            statusCount: reference.statuses.count, districtCount: reference.districts.count, objectTypeCount: reference.objectTypes.count,
            entries: markers.lazy.map { ($0.id, ReportTally.Entry($0)) })
    }

    /// What the tally keeps of a report.
    func tallyEntry(_ report: Report) -> ReportTally.Change {
        guard let status = report.statusNumber(in: reference), let district = reference.districts.firstIndex(where: { $0.code == report.district }),
              let type = reference.objectTypes.firstIndex(where: { $0.code == report.objectType })
        else { return .remove(id: report.id) }
        return .set(
            id: report.id,
            ReportTally.Entry(
                phones: report.phones, district: district, objectType: type, month: Int(CivilCalendar.month(milliseconds: report.createdMilliseconds)),
                status: status, second: ReportTally.Entry.second(report.createdMilliseconds)))
    }

    // MARK: Writes

    /// Calls `observer` after every commit, before its writes return, with the index
    /// entries they touched: the reports added, the old and new versions of those changed,
    /// those deleted or hidden. Commits are serialized, so observers see them one at a
    /// time, in order, after the index holds them (a tile cache drops what they could change).
    public func onWrite(_ observer: @escaping @Sendable (_ touched: [ClusterEntry]) -> Void) {
        observers.list.withLock { $0.append(observer) }
    }

    /// Stores new reports (all or none) and adds them to the index. Drafts are checked
    /// first; the first invalid one throws ``RecordsRejected``.
    @discardableResult
    public func insert(_ drafts: [ReportDraft], now: Date = Date()) throws -> [Report] {
        let checked = try drafts.enumerated().map { (i, draft) in
            do { return try reference.validate(draft) } catch let error as ValidationError {
                throw RecordsRejected(issues: [RecordIssue(location: .feature(i + 1), error: error)], issueCount: 1)
            }
        }
        return try commits.performWaiting { [self] t in
            let reports = try checked.map { try t.insert($0, filer: nil, author: .system, now: now) }
            return (reports, effect(added: reports))
        }
    }

    /// Replaces report `id` (a move, a status change, any edit) in the store and the index.
    @discardableResult
    public func update(id: Int64, with draft: ReportDraft, now: Date = Date()) throws -> Report {
        var draft = try reference.validate(draft)
        draft.id = id
        let checked = draft
        return try commits.performWaiting { [self] t in
            let (before, edited) = try t.edit(id, to: checked, author: .system, now: now)
            try endCampaignsIfPostersGone(before.phones, t, now: now)
            guard let status = checked.status, status != edited.status else { return (edited, effect(before, edited)) }
            let (_, after) = try t.setStatus(id, to: status, note: nil, author: .system, now: now)
            try endCampaignsIfPostersGone(after.phones, t, now: now)
            try endAssignmentIfDone(id, open: reference.isOpen(status), why: "the report is \(status)", t, author: .system, now: now)
            return (after, effect(before, after))
        }
    }

    /// Deletes report `id` from the store and the index (its history stays).
    public func delete(id: Int64, now: Date = Date()) throws {
        try commits.performWaiting { [self] t in
            try endAssignmentIfDone(id, open: false, why: "the report is deleted", t, author: .system, now: now)
            let before = try t.delete(id, author: .system, now: now)
            try endCampaignsIfPostersGone(before.phones, t, now: now)
            return ((), effect(removed: before))
        }
    }

    /// What adding reports does to the index.
    func effect(added reports: [Report]) -> IndexEffect {
        let entries = reports.compactMap(entry)
        return IndexEffect(changes: entries.map { .upsert($0) }, touched: entries, phones: reports.map(tallyEntry))
    }

    /// What changing a report does to the index.
    func effect(_ before: Report, _ after: Report) -> IndexEffect {
        let old = entry(before), new = entry(after)
        return IndexEffect(
            changes: [new.map { .upsert($0) } ?? .remove(id: after.id)], touched: [old, new].compactMap { $0 },
            phones: before.phones == after.phones && before.district == after.district && before.objectType == after.objectType
                && before.status == after.status ? [] : [tallyEntry(after)])
    }

    /// What taking a report out of the public answers does to the index.
    func effect(removed report: Report) -> IndexEffect {
        IndexEffect(changes: [.remove(id: report.id)], touched: [entry(report)].compactMap { $0 }, phones: [.remove(id: report.id)])
    }

    // MARK: Queries

    /// Runs a call of the store (a read, or a maintenance write outside the group commit)
    /// off the cooperative pool, with no further hop when the caller is already off it (as
    /// the server's read handlers are): see `Blocking.offPool`.
    func read<T: Sendable>(_ body: (any ReportStorage) async throws -> T) async throws -> T {
        try await Blocking.offPool { try await body(storage) }
    }

    /// The filter of a list of status codes (nil: all) and a creation-time interval; an
    /// unknown code is an error on `status`.
    public func filter(statuses: [String]?, created: ClosedRange<Int64>?) throws(ValidationError) -> ClusterFilter {
        guard let statuses else { return ClusterFilter(created: created) }
        return ClusterFilter(statusNumbers: try statusNumbers(statuses), created: created)
    }

    /// The numbers of status codes; an unknown code is an error on `status`.
    public func statusNumbers(_ codes: [String]) throws(ValidationError) -> [Int] {
        var numbers: [Int] = []
        for code in codes {
            guard let s = statusCodes.firstIndex(of: code) else {
                throw ValidationError(field: "status", "unknown status \"\(code.prefix(40))\"; expected one of \(statusCodes.joined(separator: ", "))")
            }
            numbers.append(s)
        }
        return numbers
    }

    /// Clusters and lone reports at `zoom` in the box, with the lone reports read from the
    /// store.
    /// With `maxCells`, a box covering more cells than that at `zoom` is an error on `bbox`.
    public func clusters(in box: BoundingBox, zoom: Int, filter: ClusterFilter = .all, maxCells: Int = .max) async throws -> ClusterAnswer {
        try requireIndex()
        try index.grid.checkZoom(zoom)
        let block = index.grid.cells(in: box, zoom: zoom)
        let cells = block.cellCount
        guard cells <= maxCells else {
            throw ValidationError(field: "bbox", "covers \(cells) cells at zoom \(zoom); at most \(maxCells) may be asked at once (a smaller box or a lower zoom)")
        }
        return try await answer(index.clusters(in: block, filter: filter))
    }

    /// What a cluster becomes one zoom deeper, with the lone reports read from the store;
    /// at the deepest zoom, its first `limit` reports.
    public func children(of id: ClusterID, filter: ClusterFilter = .all, limit: Int = .max) async throws -> ClusterAnswer {
        try requireIndex()
        return try await answer(index.children(of: id, filter: filter, limit: limit))
    }

    /// How many reports match, counted by the index (cells wholly inside the box from
    /// their aggregates), with the store deciding only the reports within a centimetre of
    /// the box's edge: exact, and far cheaper than counting rows.
    /// An assignee narrows it through the assigned reports (few beside all): those of the
    /// account, or all of them less the assigned ones. Object types are no index's to
    /// count; a listing by them (Open311's) does not count.
    public func count(_ filter: ReportFilter) async throws -> Int {
        guard filter.objectTypes == nil else { throw ValidationError(field: "service_code", "a listing by object type is not counted") }
        if let assignee = filter.assignee {
            var base = filter
            base.assignee = nil
            switch assignee {
            case .account(let id): return try await read { try await $0.count(matching: filter, ids: try await $0.assignments(of: id).map(\.reportID)) }
            case .unassigned:
                // Two reads and the index, which may be a write apart: never below none.
                let assigned = try await read { try await $0.count(matching: base, ids: try await $0.assignedReports()) }
                return max(0, try await count(base) - assigned)
            }
        }
        let statuses = try self.filter(statuses: filter.statuses, created: filter.created)
        try requireIndex()
        let (certain, nearEdge) = index.count(in: filter.box ?? .world, filter: statuses)
        return nearEdge.isEmpty ? certain : certain + (try await read { try await $0.count(matching: filter, ids: nearEdge) })
    }

    /// A page of a cluster's reports, read from the store.
    /// `listed` counts the index's members of the page (a report deleted meanwhile is
    /// listed but not returned), so the next page starts at `offset + listed`.
    public func leaves(of id: ClusterID, limit: Int, offset: Int, filter: ClusterFilter = .all) async throws -> (total: Int, listed: Int, reports: [Report]) {
        try requireIndex()
        let page = try index.leaves(of: id, limit: limit, offset: offset, filter: filter)
        let ids = page.members.map(\.id)
        return (page.total, page.members.count, try await publicReports(ids: ids))
    }

    /// One cluster, counted under the filter.
    public func cluster(_ id: ClusterID, filter: ClusterFilter = .all) throws -> Cluster {
        try requireIndex()
        return try index.cluster(id, filter: filter)
    }

    /// One report by its number, or nil.
    public func report(id: Int64) async throws -> Report? { try await read { try await $0.report(id: id) } }

    /// The public reports with these ids, in the order given; the others left out.
    public func reports(ids: [Int64]) async throws -> [Report] { try await publicReports(ids: ids) }

    /// The same, those the row cache holds from it and the rest read (and kept).
    func publicReports(ids: [Int64]) async throws -> [Report] {
        // While a start builds the index, other processes' writes are not followed yet; nor
        // while following fails (a report hidden elsewhere would be shown on).
        guard let rowCache, indexReady, !followFailing.load(ordering: .acquiring) else { return try await read { try await $0.reports(ids: ids) } }
        let lookup = rowCache.lookup(ids)
        guard !lookup.missing.isEmpty else { return ids.compactMap { lookup.found[$0] } }
        let read = try await read { try await $0.reports(ids: lookup.missing) }
        rowCache.keep(read, stamps: lookup.stamps)
        var found = lookup.found
        for report in read { found[report.id] = report }
        return ids.compactMap { found[$0] }
    }

    /// How many rows the row cache answered, and how many were read (zeros without one).
    public var rowCacheCounts: (hits: Int, misses: Int) {
        (rowCache?.hits.load(ordering: .relaxed) ?? 0, rowCache?.misses.load(ordering: .relaxed) ?? 0)
    }

    /// Reports by a phone fragment or id (exact id first, then newest), and how many match,
    /// from the tally's memory: the newest matches of three or four digits kept write by
    /// write, those of five or more gathered from the numbers holding them (then the store
    /// reads those rows by id). The count is exact and follows a write as the index does,
    /// just after its commit. When the tally cannot answer (a first page longer than it
    /// keeps, a fragment of one or two digits, or of five and more where ids are too many
    /// to try), the store answers, counting up to ``searchCountCap`` (nil past it: "more").
    public func search(_ text: String, limit: Int) async throws -> (reports: [Report], matched: Int?) {
        let digits = try Phone.searchFragment(text)
        // Until the index is built (a start in the background), the store answers alone.
        let kept = limit > 0 && indexReady ? tally.newestMatches(digits, limit: limit + 1) ?? tally.newestLongMatches(digits, limit: limit + 1) : nil
        guard let (newest, matched) = kept else {
            return try await read { storage in
                if indexReady, let matched = tally.fragmentCount(digits) { return (try await storage.search(text, limit: limit), matched) }
                let counted = try await storage.searchCount(text, cap: searchCountCap)
                return (try await storage.search(text, limit: limit), counted > searchCountCap ? nil : counted)
            }
        }
        // The report whose id the fragment is comes first, when there is one: read with the
        // newest in one read (a round trip fewer for PostgreSQL), the page cut after. An id
        // the tally does not hold is no report's: not read (a read of nothing is never kept,
        // so every such search was a round trip, most searches of six digits and more).
        let exact = Phone.exactID(digits).flatMap { tally.holds(id: $0) ? $0 : nil }
        let found = try await publicReports(ids: (exact.map { [$0] } ?? []) + newest.filter { $0 != exact }.prefix(limit))
        return (Array(found.prefix(limit)), matched)
    }

    /// How far a search of five digits or more counts its matches (a search's answer
    /// then says "more than this").
    public let searchCountCap: Int
    public static let defaultSearchCountCap = 1_000

    /// A page of a filtered listing in id order after the cursor: the store's box paths
    /// when only a box narrows it, the filtered reads otherwise.
    public func page(_ filter: ReportFilter, after: Int64?, limit: Int) async throws -> [Report] {
        try await read { storage in
            // An account's assigned reports are few: read among them.
            if case .account(let id)? = filter.assignee {
                let ids = try await storage.assignments(of: id).map(\.reportID).filter { $0 > after ?? 0 }.sorted()
                return Array(try await storage.reports(among: ids, matching: filter).prefix(limit))
            }
            return filter.isBoxOnly
                ? try await storage.page(in: filter.box ?? .world, after: after, limit: limit)
                : try await storage.reports(matching: filter, after: after ?? 0, limit: limit)
        }
    }

    /// How an export reads a filter: the ids of its box when the box holds at most an
    /// eighth of all reports (read by ``exportPage(_:of:after:limit:)`` a slice at a
    /// time), nil for pages along the id index.
    public func exportIDs(_ filter: ReportFilter) async throws -> [Int64]? {
        guard let box = filter.box, indexReady else { return nil }
        let cap = index.count / 8
        return try await read { try await $0.ids(in: box, cap: cap) }
    }

    /// A page of an export: the matching reports among a slice of ``exportIDs(_:)``, or
    /// (without ids) up to `limit` after the cursor.
    public func exportPage(_ filter: ReportFilter, among ids: ArraySlice<Int64>?, after: Int64, limit: Int) async throws -> [Report] {
        try await read { storage in
            guard let ids else { return try await storage.scan(matching: filter, after: after, limit: limit) }
            return try await storage.reports(among: ids, matching: filter)
        }
    }

    /// The first and last creation times, nil without reports.
    public func createdRange() async throws -> ClosedRange<Date>? { try await read { try await $0.createdRange() } }

    /// The smallest box around every report (from the index, so current and cheap), nil
    /// when there are none. Reports on both sides of the antimeridian give a box from the
    /// westernmost to the easternmost.
    public func extent(filter: ClusterFilter = .all) throws(IndexBuilding) -> BoundingBox? {
        try requireIndex()
        var boxes: [BoundingBox] = []
        for item in (try? index.clusters(in: .world, zoom: 0, filter: filter)) ?? [] {
            switch item {
            case .cluster(let c): boxes.append(c.bounds)
            case .report(let r):
                let lon = WebMercator.longitude(x: r.x), lat = WebMercator.latitude(y: r.y)
                if let box = try? BoundingBox(west: lon, south: lat, east: lon, north: lat) { boxes.append(box) }
            }
        }
        guard !boxes.isEmpty else { return nil }
        return try? BoundingBox(
            west: boxes.map(\.west).min()!, south: boxes.map(\.south).min()!, east: boxes.map(\.east).max()!, north: boxes.map(\.north).max()!)
    }

    private func answer(_ items: [ClusterItem]) async throws -> ClusterAnswer {
        let ids = items.compactMap { item -> Int64? in
            if case .report(let member) = item { return member.id }
            return nil
        }
        let reports = ids.isEmpty ? [] : try await publicReports(ids: ids)
        return ClusterAnswer(items: items, reports: Dictionary(reports.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a }))
    }
}

/// A flag raised once and never lowered.
final class Flag: Sendable {
    private let raised = Atomic(false)
    func raise() { raised.store(true, ordering: .releasing) }
    var isRaised: Bool { raised.load(ordering: .acquiring) }
}

/// Who hears of committed writes.
final class WriteObservers: Sendable {
    let list = Mutex<[@Sendable ([ClusterEntry]) -> Void]>([])
    let replaced = Mutex<[@Sendable () -> Void]>([])

    func notify(_ touched: [ClusterEntry]) {
        guard !touched.isEmpty else { return }
        for observer in list.withLock({ $0 }) { observer(touched) }
    }

    func notifyReplaced() {
        for observer in replaced.withLock({ $0 }) { observer() }
    }
}

extension ClusterEntry {
    /// The index entry of a report, its status numbered by `reference` (nil for an unknown status).
    public init?(_ report: Report, reference: ReferenceData) {
        guard let status = report.statusNumber(in: reference) else { return nil }
        self.init(id: report.id, coordinate: report.coordinate, status: status, createdAt: report.createdMilliseconds)
    }
}

/// Clusters and lone reports, with the lone reports' stored records by id (a report
/// deleted between the two reads is missing from `reports`).
public struct ClusterAnswer: Sendable {
    public var items: [ClusterItem]
    public var reports: [Int64: Report]
}
