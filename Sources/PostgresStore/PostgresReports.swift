import Foundation
import Geometry
import Logging
import PostgresNIO
import ReportModel
import StorePorts

/// The reports of a PostgreSQL database with PostGIS: ``ReportStorage`` in SQL with bound
/// parameters only, answering exactly what the SQLite store answers (the conformance suite
/// runs on both).
///
/// Central decisions:
/// - **Exact coordinates, a GiST index as a filter.** The doubles are kept as they came;
///   `position`, the same point as `geometry(Point, 4326)`, carries the GiST index, whose
///   float boxes PostGIS rounds outward. A box is its index candidates checked against the
///   doubles, edges included; one across the antimeridian is its two parts (``SQL/inside(_:)``).
/// - **Search by pg_trgm**: a GIN trigram index over the phones and the id's digits finds a
///   fragment of three or more digits; shorter ones walk the newest-first index. The order,
///   exact id first, then the newest, is the SQLite store's.
/// - **One writer at a time, across every process**: a write transaction first takes the
///   row of `change_counter` (`FOR UPDATE`) and holds it to its commit, and numbers its
///   changes from it. The next writer, in this process or another, waits for that commit,
///   so change numbers follow commit order: a reader that has seen change N never later
///   finds one below N (the change log's contract; a sequence would not give it, since a
///   transaction may take a number and commit after a later one).
/// - **Told of commits**: each write transaction notifies channel `posterwatch_change`;
///   ``nextChange(after:timeout:)`` waits on a connection that LISTENs to it.
public final class PostgresReports: ReportStorage {
    let database: PostgresDatabase
    public let reference: ReferenceData
    let codes: ReferenceCodes
    let writer: PostgresWriter
    let commits: CommitSignal
    let pendingList: PendingListFlusher

    /// `mergingEvery`: how often a replica that has written merges the trigram index's
    /// pending list (``PendingListFlusher``).
    public init(_ database: PostgresDatabase, mergingEvery interval: Duration = PendingListFlusher.defaultInterval) {
        self.database = database
        reference = database.reference
        codes = ReferenceCodes(database.reference)
        writer = PostgresWriter(database)
        commits = CommitSignal(database)
        pendingList = PendingListFlusher(database, interval: interval)
    }

    deinit {
        commits.stop()
        pendingList.stop()
        writer.close()
    }

    /// How many times this replica has merged the trigram index's pending list, and
    /// whether it was refused the rights and left it to the writers.
    public var pendingListMerges: (count: Int, leftToWriters: Bool) { (pendingList.merges, pendingList.leftToWriters) }

    /// PostgreSQL's own figures are its server's (`pg_stat_*`); the process adds none.
    public var gauges: [String: Int] { [:] }

    var logger: Logger { database.logger }

    func rows(_ sql: SQL) async throws -> [PostgresRow] {
        try await database.client.query(sql.query, logger: logger).collect()
    }

    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await database.client.query(query, logger: logger).collect()
    }

    /// Runs reads that must see one point of the data (a page of changes and the last
    /// number) in one repeatable-read transaction.
    func snapshotRead<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await database.client.withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let result = try await body(connection)
                try await connection.query("COMMIT", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Every report's marker and tally entry, read in two halves of the ids at once on two
    /// connections that share one snapshot (exported by the first): each half's rows are
    /// decoded as they arrive, each on a thread (the caller's executor's, which the second
    /// half inherits), so a start waits for about half.
    public func snapshot<Marker>(_ make: MarkerMaker<Marker>) async throws -> (markers: [Marker], tally: [TallyMarker], lastChange: Int64) {
        let (lower, upper, last) = try await snapshotRead { c in
            let exported = try await c.query("SELECT pg_export_snapshot()", logger: logger).collect()[0].decode(String.self)
            // SET TRANSACTION SNAPSHOT takes no parameter; the name is the server's own, checked.
            guard exported.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { throw PostgresSnapshotNameUnexpected() }
            let last = try await Self.counter(c, logger: logger).last
            let (low, high) = try await c.query("SELECT coalesce(min(id), 0), coalesce(max(id), 0) FROM report", logger: logger).collect()[0]
                .decode((Int64, Int64).self)
            let split = low + (high - low) / 2
            async let upper = database.client.withConnection { other in
                try await other.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                try await other.query(PostgresQuery(unsafeSQL: "SET TRANSACTION SNAPSHOT '\(exported)'"), logger: logger)
                let half = try await self.placed(c: other, ids: (split + 1)...Int64.max)
                try await other.query("COMMIT", logger: logger)
                return half
            }
            return (try await placed(c: c, ids: Int64.min...split), try await upper, last)
        }
        var markers: [Marker] = []
        markers.reserveCapacity(lower.places.count + upper.places.count)
        for half in [lower, upper] {
            for p in half.places { markers.append(make(p.id, p.coordinate, p.status, p.createdAt)) }
        }
        return (markers, lower.tally + upper.tally, last)
    }

    /// Where a report is, its status's position and when it was made: a marker's makings.
    struct Place: Sendable {
        var id: Int64, coordinate: Coordinate, status: Int, createdAt: Int64
    }

    /// The places and tally entries of the reports whose ids are in `ids`, decoded as the
    /// rows arrive: a row for each 4,096 ids, each column an array, because a row of its
    /// own for each report cost more to receive and decode than its values (a start's read of
    /// 1M reports: 0.79 of the time in arrays, 0.66 with ``BinaryArrays`` reading them).
    private func placed(c: PostgresConnection, ids: ClosedRange<Int64>) async throws -> (places: [Place], tally: [TallyMarker]) {
        var places: [Place] = [], tally: [TallyMarker] = []
        // The codes come as their positions in the reference data (1 on; 0 for a code it
        // does not know): the database finds them in a short array where this process made
        // three strings a row and looked each up (a sixth of a replica's start). Every
        // aggregate of a group takes its rows in the same order.
        let r = reference
        let rows = try await c.query(
            """
            SELECT array_agg(id), array_agg(longitude), array_agg(latitude),
                array_agg(coalesce(array_position(\(r.statuses.map(\.code))::text[], status), 0)), array_agg(created_at), array_agg(phones),
                array_agg(coalesce(array_position(\(r.districts.map(\.code))::text[], district), 0)),
                array_agg(coalesce(array_position(\(r.objectTypes.map(\.code))::text[], object_type), 0))
            FROM report WHERE id BETWEEN \(ids.lowerBound) AND \(ids.upperBound) GROUP BY id / 4096
            """, logger: logger)
        for try await row in rows {
            var cells = RowCells(row)
            let id = try BinaryArrays.int64s(cells.next()), longitude = try BinaryArrays.doubles(cells.next())
            let latitude = try BinaryArrays.doubles(cells.next()), status = try BinaryArrays.int32s(cells.next())
            let created = try BinaryArrays.int64s(cells.next()), phones = try BinaryArrays.texts(cells.next())
            let district = try BinaryArrays.int32s(cells.next()), type = try BinaryArrays.int32s(cells.next())
            guard [longitude.count, latitude.count, status.count, created.count, phones.count, district.count, type.count].allSatisfy({ $0 == id.count })
            else { throw BinaryArrayUnexpected(column: "report", what: "arrays of different lengths in one group") }
            for k in id.indices {
                places.append(Place(id: id[k], coordinate: Coordinate(longitude: longitude[k], latitude: latitude[k]), status: max(0, Int(status[k]) - 1), createdAt: created[k]))
                if district[k] > 0, type[k] > 0, status[k] > 0 {
                    tally.append(TallyMarker(id: id[k], phones: Rows.phones(phones[k]), district: Int(district[k]) - 1, objectType: Int(type[k]) - 1, status: Int(status[k]) - 1, createdAt: created[k]))
                }
            }
        }
        return (places, tally)
    }

    // MARK: Reports

    public func report(id: Int64) async throws -> Report? {
        try await Rows.reports(rows(Statements.report(id: id))).first
    }

    public func reports(ids: some Collection<Int64>) async throws -> [Report] {
        guard !ids.isEmpty else { return [] }
        var found: [Int64: Report] = [:]
        for try await report in try await database.client.execute(ReportsByIDStatement(ids: Array(ids)), logger: logger) { found[report.id] = report }
        return ids.compactMap { found[$0] }
    }

    public func count(in box: BoundingBox) async throws -> Int {
        var sql = SQL()
        sql.append("SELECT count(*) FROM report WHERE " + sql.inside(box))
        return try await rows(sql)[0].decode(Int.self)
    }

    public func page(in box: BoundingBox, after: Int64?, limit: Int) async throws -> [Report] {
        try await reports(matching: ReportFilter(box: box), after: after ?? 0, limit: limit)
    }

    public func reports(matching filter: ReportFilter, after: Int64, limit: Int) async throws -> [Report] {
        guard limit > 0 else { return [] }
        var sql = SQL("SELECT \(Rows.reportColumns) FROM report WHERE ")
        sql.append("id > \(sql.bind(after)) AND \(sql.matching(filter)) ORDER BY id LIMIT \(sql.bind(limit))")
        return try await Rows.reports(rows(sql))
    }

    public func scan(matching filter: ReportFilter, after: Int64, limit: Int) async throws -> [Report] {
        try await reports(matching: filter, after: after, limit: limit)
    }

    public func ids(in box: BoundingBox, cap: Int) async throws -> [Int64]? {
        var sql = SQL("SELECT id FROM report WHERE ")
        sql.append("\(sql.inside(box)) ORDER BY id LIMIT \(sql.bind(cap + 1))")
        let ids = try await rows(sql).map { try $0.decode(Int64.self) }
        return ids.count > cap ? nil : ids
    }

    public func reports(among ids: some Collection<Int64>, matching filter: ReportFilter) async throws -> [Report] {
        guard !ids.isEmpty else { return [] }
        var sql = SQL("SELECT \(Rows.reportColumns) FROM report WHERE ")
        sql.append("id = ANY(\(sql.bind(Array(ids)))) AND \(sql.matching(filter)) ORDER BY id")
        return try await Rows.reports(rows(sql))
    }

    public func count(matching filter: ReportFilter, ids: [Int64]) async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        var sql = SQL("SELECT count(*) FROM report WHERE ")
        sql.append("id = ANY(\(sql.bind(ids))) AND \(sql.matching(filter))")
        return try await rows(sql)[0].decode(Int.self)
    }

    /// The exact id first, then the newest by the second, then by id, as the SQLite store
    /// orders them. The trigram index answers `LIKE` for three digits or more; the planner
    /// walks the newest-first index for fewer.
    public func search(_ text: String, limit: Int) async throws -> [Report] {
        let digits = try Phone.searchFragment(text)
        guard limit > 0 else { return [] }
        let (result, exact) = try await exactFirst(digits)
        let rest = limit - result.count
        guard rest > 0 else { return result }
        // A short fragment is in one report of twenty or so: walking the newest first finds
        // the first page in a thousand rows (strpos, which no index answers, keeps the
        // planner on that walk). A longer one is rare: its trigrams find its few reports,
        // which are then ordered.
        var sql = SQL("SELECT \(Rows.reportColumns) FROM report WHERE ")
        let fragment = sql.bind(digits)
        sql.append(digits.count <= Self.walkedDigits ? "strpos(search_text, \(fragment)) > 0" : "search_text LIKE '%' || \(fragment) || '%'")
        sql.append(" AND id IS DISTINCT FROM \(sql.bind(exact))::bigint ORDER BY created_at / 1000 DESC, id DESC LIMIT \(sql.bind(rest))")
        return result + (try await Rows.reports(rows(sql)))
    }

    /// A fragment the trigrams find: its matches read once, for the page and the count.
    public func searchWithCount(_ text: String, limit: Int) async throws -> (reports: [Report], matched: Int) {
        let digits = try Phone.searchFragment(text)
        guard digits.count > Self.walkedDigits, limit > 0 else { return (try await search(text, limit: limit), try await searchCount(text)) }
        let (first, exact) = try await exactFirst(digits)
        let rest = limit - first.count
        guard rest > 0 else { return (first, try await searchCount(text)) }
        let rows = try await rows(
            """
            WITH m AS MATERIALIZED (SELECT \(unescaped: Rows.reportColumns) FROM report WHERE search_text LIKE \("%" + digits + "%"))
            SELECT \(unescaped: Rows.reportColumns), (SELECT count(*) FROM m) FROM m
            WHERE id IS DISTINCT FROM \(exact)::bigint ORDER BY created_at / 1000 DESC, id DESC LIMIT \(rest)
            """)
        // The count follows a report's columns, which `Rows.report` reads from the first. No
        // row: no match but the exact id's report, if any.
        let matched = try rows.first.map { try $0.makeRandomAccess()[14].decode(Int.self) } ?? first.count
        return (first + (try Rows.reports(rows)), matched)
    }

    /// The id the digits spell, if they spell one, and its public report (none or one),
    /// which a search answers first.
    private func exactFirst(_ digits: String) async throws -> (reports: [Report], exact: Int64?) {
        let exact = Phone.exactID(digits)
        guard let exact, let report = try await report(id: exact) else { return ([], exact) }
        return ([report], exact)
    }

    /// Fragments up to this many digits walk the newest reports first (a 3-digit one is in
    /// one report of twenty: 0.3 ms for a page; a 4-digit one in one of 1,500, which the
    /// trigrams find in 2 ms and the walk in 80).
    static let walkedDigits = 3

    public func searchCount(_ text: String) async throws -> Int {
        let digits = try Phone.searchFragment(text)
        return try await rows("SELECT count(*) FROM report WHERE search_text LIKE \("%" + digits + "%")")[0].decode(Int.self)
    }

    public func searchCount(_ text: String, cap: Int) async throws -> Int {
        let digits = try Phone.searchFragment(text)
        return try await rows("SELECT count(*) FROM (SELECT 1 FROM report WHERE search_text LIKE \("%" + digits + "%") LIMIT \(cap + 1)) m")[0].decode(Int.self)
    }

    public func createdRange() async throws -> ClosedRange<Date>? {
        let (first, last) = try await rows("SELECT min(created_at), max(created_at) FROM report")[0].decode((Int64?, Int64?).self)
        guard let first, let last else { return nil }
        return Date(milliseconds: first)...Date(milliseconds: last)
    }

    public func statistics() async throws -> StoreStatistics {
        func counts(_ column: String, _ codes: [String]) async throws -> [StoreStatistics.Count] {
            var found: [String: Int] = [:]
            for row in try await rows(PostgresQuery(unsafeSQL: "SELECT \(column), count(*) FROM report GROUP BY \(column)")) {
                let (code, count) = try row.decode((String, Int).self)
                found[code] = count
            }
            return codes.map { StoreStatistics.Count(code: $0, count: found[$0] ?? 0) }
        }
        let (total, west, south, east, north, first, last) = try await rows(
            "SELECT count(*), min(longitude), min(latitude), max(longitude), max(latitude), min(created_at), max(created_at) FROM report"
        )[0].decode((Int, Double?, Double?, Double?, Double?, Int64?, Int64?).self)
        var extent: BoundingBox?
        if let west, let south, let east, let north { extent = try BoundingBox(west: west, south: south, east: east, north: north) }
        var created: ClosedRange<Date>?
        if let first, let last { created = Date(milliseconds: first)...Date(milliseconds: last) }
        return try await StoreStatistics(
            total: total, byStatus: counts("status", reference.statuses.map(\.code)), byDistrict: counts("district", reference.districts.map(\.code)),
            byObjectType: counts("object_type", reference.objectTypes.map(\.code)), extent: extent, created: created)
    }

    // MARK: Hidden reports, filers and history

    public func hidden(id: Int64) async throws -> HiddenReport? {
        try await rows(Statements.hidden(id: id)).first.map(Rows.hidden)
    }

    public func hidden(ids: some Collection<Int64>) async throws -> [Int64: HiddenReport] {
        guard !ids.isEmpty else { return [:] }
        let found = try await rows("SELECT \(unescaped: Rows.hiddenColumns) FROM report_hidden WHERE id = ANY(\(Array(ids)))").map(Rows.hidden)
        return Dictionary(found.map { ($0.report.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    public func filer(of id: Int64) async throws -> Int64? {
        try await rows(Statements.filer(of: id)).first?.decode(Int64.self)
    }

    public func filers(of ids: some Collection<Int64>) async throws -> [Int64: Int64] {
        guard !ids.isEmpty else { return [:] }
        let pairs = try await rows("SELECT report_id, account_id FROM report_filer WHERE report_id = ANY(\(Array(ids)))").map { try $0.decode((Int64, Int64).self) }
        return Dictionary(pairs, uniquingKeysWith: { a, _ in a })
    }

    public func reports(filedBy account: Int64, before: Int64?, limit: Int) async throws -> [Report] {
        try await Rows.reports(rows(
            """
            SELECT \(unescaped: Rows.reportColumns) FROM report r JOIN report_filer f ON f.report_id = r.id
            WHERE f.account_id = \(account) AND f.report_id < \(before ?? Int64.max) ORDER BY f.report_id DESC LIMIT \(limit)
            """))
    }

    public func history(of id: Int64, after: Int64, limit: Int) async throws -> [HistoryEntry] {
        try await rows(
            "SELECT \(unescaped: Rows.historyColumns) FROM report_history WHERE report_id = \(id) AND seq > \(after) ORDER BY seq LIMIT \(Int64(clamping: limit))"
        ).map(Rows.history)
    }

    public func history(seqs: [Int64]) async throws -> [Int64: HistoryEntry] {
        guard !seqs.isEmpty else { return [:] }
        let entries = try await rows("SELECT \(unescaped: Rows.historyColumns) FROM report_history WHERE seq = ANY(\(seqs))").map(Rows.history)
        return Dictionary(uniqueKeysWithValues: entries.map { ($0.seq, $0) })
    }

    // MARK: Idempotency, photos' rows and notifications

    public func storedAnswer(caller: String, key: String) async throws -> StoredAnswer? {
        try await rows(Statements.storedAnswer(caller: caller, key: key)).first.map(Rows.storedAnswer)
    }

    public func photos(of id: Int64) async throws -> [PhotoRow] {
        try await rows(Statements.photos(of: id)).map(Rows.photo)
    }

    public func photos(of ids: [Int64]) async throws -> [Int64: [PhotoRow]] {
        guard !ids.isEmpty else { return [:] }
        return try await rows("SELECT \(unescaped: Rows.photoColumns) FROM report_photo WHERE report_id = ANY(\(ids)) ORDER BY report_id, id")
            .map(Rows.photo).reduce(into: [:]) { $0[$1.reportID, default: []].append($1) }
    }

    public func photoExists(sha256: String, publicOnly: Bool) async throws -> Bool {
        let query: PostgresQuery = publicOnly
            ? "SELECT EXISTS (SELECT 1 FROM report_photo p JOIN report r ON r.id = p.report_id WHERE p.sha256 = \(sha256))"
            : "SELECT EXISTS (SELECT 1 FROM report_photo WHERE sha256 = \(sha256))"
        return try await rows(query)[0].decode(Bool.self)
    }

    public func photoNames() async throws -> Set<String> {
        Set(try await rows("SELECT DISTINCT sha256 FROM report_photo").map { try $0.decode(String.self) })
    }

    public func notifications(of account: Int64, before: Int64?, limit: Int, unreadOnly: Bool) async throws -> (notifications: [StatusNotification], unread: Int) {
        try await snapshotRead { c in
            let upTo = try await c.query(Statements.readUpTo(account), logger: logger).collect().first?.decode(Int64.self) ?? 0
            let notifications = try await c.query(
                Statements.notifications(of: account, before: before, after: unreadOnly ? upTo : 0, limit: limit), logger: logger
            ).collect().map { row in
                let (seq, id, action, at, from, to, note) = try row.decode((Int64, Int64, String, Int64, String?, String?, String?).self)
                return StatusNotification(
                    seq: seq, reportID: id, action: ReportAction(rawValue: action) ?? .transition, at: Date(milliseconds: at), fromStatus: from, toStatus: to,
                    note: note, read: seq <= upTo)
            }
            return (notifications, try await c.query(Statements.unreadCount(of: account, upTo: upTo), logger: logger).collect()[0].decode(Int.self))
        }
    }

    // MARK: The change log

    public func changes(after seq: Int64, limit: Int) async throws -> ChangeRows {
        try await snapshotRead { c in
            let rows = try await c.query(
                Statements.changes(after: seq, limit: limit), logger: logger
            ).collect().map(Rows.change)
            let counter = try await Self.counter(c, logger: logger)
            return ChangeRows(rows: rows, lastSeq: counter.last, prunedThrough: counter.prunedThrough)
        }
    }

    public func changesWithReports(after seq: Int64, limit: Int) async throws -> (changes: ChangeRows, reports: [Int64: Report]) {
        try await snapshotRead { c in
            let rows = try await c.query(
                Statements.changes(after: seq, limit: limit), logger: logger
            ).collect().map(Rows.change)
            let ids = Array(Set(rows.map(\.reportID).filter { $0 > 0 }))
            let reports = try await c.query("SELECT \(unescaped: Rows.reportColumns) FROM report WHERE id = ANY(\(ids))", logger: logger).collect().map(Rows.report)
            let counter = try await Self.counter(c, logger: logger)
            return (ChangeRows(rows: rows, lastSeq: counter.last, prunedThrough: counter.prunedThrough), Dictionary(uniqueKeysWithValues: reports.map { ($0.id, $0) }))
        }
    }

    public func changes(seqs: some Collection<Int64>) async throws -> [ChangeRow] {
        guard !seqs.isEmpty else { return [] }
        return try await rows("SELECT \(unescaped: Rows.changeColumns) FROM report_change WHERE seq = ANY(\(Array(seqs))) ORDER BY seq").map(Rows.change)
    }

    public func lastChange() async throws -> Int64 {
        try await rows("SELECT last FROM change_counter")[0].decode(Int64.self)
    }

    public func changeLogName() async throws -> String {
        guard let row = try await rows("SELECT name FROM change_log_name").first, let name = try? row.decode(String.self), !name.isEmpty else {
            throw ChangeLogUnnamed()
        }
        return name
    }

    /// Waits on the LISTEN connection's news of commits, looking at the last number again
    /// at least every ``CommitSignal/recheck`` (should that connection be lost).
    public func nextChange(after seq: Int64, timeout: Duration) async throws -> Int64 {
        let deadline = ContinuousClock.now + timeout
        while true {
            let generation = commits.generation
            let last = try await lastChange()
            let left = deadline - ContinuousClock.now
            if last > seq || left <= .zero { return last }
            await commits.wait(beyond: generation, timeout: min(left, CommitSignal.recheck))
        }
    }

    static func counter(_ connection: PostgresConnection, logger: Logger) async throws -> (last: Int64, prunedThrough: Int64) {
        try await connection.query("SELECT last, pruned_through FROM change_counter", logger: logger).collect()[0].decode((Int64, Int64).self)
    }

    // MARK: Upkeep

    public func forgetIdempotencyKeys(before cutoff: Date) async throws -> Int {
        try await rows("DELETE FROM idempotency_key WHERE created_at < \(cutoff.milliseconds) RETURNING 1").count
    }

    /// Under the writers' lock (the counter's row), so that the mark and the rows agree.
    public func forgetChanges(before cutoff: Date) async throws -> Int {
        try await database.transaction { c in
            try await c.query("SELECT last FROM change_counter FOR UPDATE", logger: logger)
            guard let through = try await c.query("SELECT max(seq) FROM report_change WHERE at < \(cutoff.milliseconds)", logger: logger)
                .collect()[0].decode(Int64?.self)
            else { return 0 }
            let forgotten = try await c.query("DELETE FROM report_change WHERE seq <= \(through) RETURNING 1", logger: logger).collect().count
            try await c.query("UPDATE change_counter SET pruned_through = greatest(pruned_through, \(through))", logger: logger)
            return forgotten
        }
    }

    public func shutDown() async throws -> Bool {
        commits.stop()
        pendingList.stop()
        writer.close()
        return true
    }
}

/// The server named its exported snapshot in a form not known (hexadecimal and dashes).
struct PostgresSnapshotNameUnexpected: Error, CustomStringConvertible {
    var description: String { "PostgreSQL named an exported snapshot in an unexpected form" }
}
