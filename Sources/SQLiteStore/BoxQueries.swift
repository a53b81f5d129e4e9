import GRDB
import GRDBSQLite
import Geometry
import ReportModel

/// Reports inside a bounding box.
///
/// The R*Tree holds 32-bit boxes rounded outward around each report. A report whose
/// float box lies wholly inside the query box is inside for certain, and the R*Tree finds
/// those on its own. Only the few whose float boxes straddle an edge of the query box
/// (within a float's rounding of it) are checked against the exact doubles of the table. A box across the antimeridian is answered as
/// its two parts, which share nothing: longitudes 180 and -180 are distinct stored values.
///
/// All reports of a box need no R*Tree: the table is laid out by the Morton code of each
/// report's zoom-16 cell, so the cells the box touches are a few ranges of the table
/// (``CellCover/keyRanges(_:)``), read in one pass each, every row checked against the
/// box's exact edges. Only the rows of the cells along the rim can fall outside, and
/// those are passed over before they are decoded.
extension SQLiteReports {
    /// Every report in the box, in storage order (by zoom-16 cell, then id).
    public func reports(in box: BoundingBox) throws -> [Report] {
        try pool.read { db in try Self.scan(db, in: box) }
    }

    /// How many reports lie in the box.
    public func count(in box: BoundingBox) throws -> Int {
        try pool.read { db in
            try box.parts.reduce(0) { total, part in
                let inside = try Int.fetchOne(db, sql: "SELECT count(*) FROM report_rtree \(Self.insideWhere)", arguments: Self.boxArguments(part)) ?? 0
                return total + inside + (try Self.edgeKeys(db, in: part).count)
            }
        }
    }

    /// A page of the reports in the box, in ascending id order, starting after the id
    /// `after`: a cursor that stays valid while other reports come and go.
    ///
    /// Two plans give the same answer; a sample decides which is cheaper. The walk reads
    /// ids in order from the unique id index, which holds each report's key: the key's
    /// zoom-16 cell says whether the report is inside, outside, or on the edge of the box,
    /// and only edge cells need the exact position. It keeps those in the box: in a box holding a fair share of all reports it meets `limit` of them
    /// within a few hundred rows. The R*Tree lists the box's reports, whose ids are then
    /// sorted: the way for a box that holds few. The first ``QueryTuning/boxSample`` rows
    /// of the walk estimate the box's share `d` of all reports; the walk goes on when its
    /// expected rows, `(limit - found) / d`, cost less than the R*Tree's `total × d`
    /// candidates (weighted by ``QueryTuning/rtreeToWalkCost``). An R*Tree list that runs
    /// past four times its estimate gives way to the walk after all.
    public func page(in box: BoundingBox, after: Int64? = nil, limit: Int) throws -> [Report] {
        guard limit > 0 else { return [] }
        let tuning = self.tuning
        return try pool.read { db in
            var found: [Int64] = []
            var cursor = after ?? 0
            // The unique id index holds each report's key, whose cell places it.
            let walk = try db.cachedStatement(sql: "SELECT id, key FROM report INDEXED BY report_id WHERE id > ? ORDER BY id")
            let exact = try db.cachedStatement(sql: "SELECT longitude, latitude FROM report WHERE key = ?")
            let cover = box.parts.map { CellCover($0) }
            /// Walks on from `cursor`, at most `budget` rows; how many rows it read, or nil
            /// when it stopped because it found the page or the table ended.
            func walkOn(budget: Int) throws -> Int? {
                var walked = 0
                while true {
                    try walk.setArguments([cursor])
                    var edge: [(id: Int64, key: Int64)] = []
                    var stopped = false
                    try db.forEachRow(walk) { s in
                        walked += 1
                        cursor = sqlite3_column_int64(s, 0)
                        let key = sqlite3_column_int64(s, 1)
                        switch cover.lazy.map({ $0.place(key) }).max()! {
                        case .inside: found.append(cursor)
                        case .edge: edge.append((cursor, key))
                        case .outside: break
                        }
                        stopped = found.count + edge.count == limit || walked == budget
                        return !stopped
                    }
                    // Reports in cells on the box's rim: their exact positions decide.
                    for row in edge {
                        try exact.setArguments([row.key])
                        try db.forEachRow(exact) { s in
                            if box.contains(Coordinate(longitude: sqlite3_column_double(s, 0), latitude: sqlite3_column_double(s, 1))) {
                                found.append(row.id)
                            }
                            return false
                        }
                    }
                    if !edge.isEmpty { found.sort() }
                    if !stopped || found.count == limit { return nil }  // the table ended, or the page is full
                    if walked == budget { return walked }
                    // Some rim reports fell outside: walk on from the last id read.
                }
            }
            guard let sampled = try walkOn(budget: tuning.boxSample) else { return try Self.fetch(db, ids: found) }
            let total = Double(try Self.reportCount(db))
            let share = Double(found.count + 1) / Double(sampled + 2)
            let walkCost = Double(limit - found.count) / share
            let rtreeCost = total * share * tuning.rtreeToWalkCost
            if rtreeCost < walkCost {
                let cap = Int(min(max(4 * total * share, 1_000), Double(Int32.max)))
                let keys = try Self.keys(db, in: box, limit: cap + 1)
                if keys.count <= cap {
                    let ids = keys.lazy.map(ReportRow.id(key:)).filter { $0 > cursor }.sorted()
                    found += ids.prefix(limit - found.count)
                    return try Self.fetch(db, ids: found)
                }
            }
            _ = try walkOn(budget: .max)
            return try Self.fetch(db, ids: found)
        }
    }

    /// The storage keys of the reports in the box, at most `limit`.
    static func keys(_ db: Database, in box: BoundingBox, limit: Int) throws -> [Int64] {
        var keys: [Int64] = []
        let inside = try db.cachedStatement(sql: "SELECT key FROM report_rtree \(insideWhere)")
        for part in box.parts where keys.count < limit {
            try inside.setArguments(boxArguments(part))
            try db.forEachRow(inside) { s in
                keys.append(sqlite3_column_int64(s, 0))
                return keys.count < limit
            }
            keys += try edgeKeys(db, in: part).prefix(limit - keys.count)
        }
        return keys
    }

    /// The R*Tree's candidates that are certainly inside: their float boxes, rounded
    /// outward, lie within the box. R*Tree constraints only, so SQLite's R*Tree module
    /// does all the work. Arguments: ``boxArguments(_:)``.
    static let insideWhere = "WHERE min_lon >= ?1 AND max_lon <= ?3 AND min_lat >= ?2 AND max_lat <= ?4"

    /// The keys of the reports in a box (not crossing the antimeridian) whose float boxes
    /// straddle one of its edges, checked against the table's exact coordinates. Such
    /// candidates lie within a float's rounding of an edge, so there are few of them.
    static func edgeKeys(_ db: Database, in part: BoundingBox) throws -> Set<Int64> {
        // Straddling an edge: meeting a meridian (?5) or a parallel (?5) along the box, and
        // not wholly inside it. R*Tree constraints first, so each is a search of a thin strip.
        let notInside = "NOT (min_lon >= ?1 AND max_lon <= ?3 AND min_lat >= ?2 AND max_lat <= ?4)"
        let meridian = try db.cachedStatement(sql: """
            SELECT key FROM report_rtree WHERE min_lon <= ?5 AND max_lon >= ?5 AND min_lat <= ?4 AND max_lat >= ?2 AND \(notInside)
            """)
        let parallel = try db.cachedStatement(sql: """
            SELECT key FROM report_rtree WHERE min_lat <= ?5 AND max_lat >= ?5 AND min_lon <= ?3 AND max_lon >= ?1 AND \(notInside)
            """)
        let exact = try db.cachedStatement(sql: "SELECT longitude, latitude FROM report WHERE key = ?")
        var keys = Set<Int64>()
        for (strip, edge) in [(meridian, part.west), (meridian, part.east), (parallel, part.south), (parallel, part.north)] {
            try strip.setArguments(boxArguments(part) + [edge])
            var candidates: [Int64] = []
            try db.forEachRow(strip) { s in
                candidates.append(sqlite3_column_int64(s, 0))
                return true
            }
            for key in candidates where !keys.contains(key) {
                try exact.setArguments([key])
                try db.forEachRow(exact) { s in
                    if part.contains(Coordinate(longitude: sqlite3_column_double(s, 0), latitude: sqlite3_column_double(s, 1))) {
                        keys.insert(key)
                    }
                    return false
                }
            }
        }
        return keys
    }

    /// west, south, east, north of a box that does not cross the antimeridian.
    static func boxArguments(_ part: BoundingBox) -> StatementArguments {
        [part.west, part.south, part.east, part.north]
    }

    /// Ids as a JSON array, bound as one value and read by `json_each` (no SQL built from
    /// the ids, however many).
    static func jsonList(_ ids: some Collection<Int64>) -> String {
        "[" + ids.map(String.init).joined(separator: ",") + "]"
    }

    /// The reports with these ids, in the order given.
    static func fetch(_ db: Database, ids: some Collection<Int64>) throws -> [Report] {
        guard !ids.isEmpty else { return [] }
        let reports = try ReportRow.fetchAll(
            db, sql: "SELECT \(ReportRow.columns) FROM report WHERE id IN (SELECT value FROM json_each(?))", arguments: [jsonList(ids)])
        let byID = Dictionary(uniqueKeysWithValues: reports.map { ($0.id, $0) })
        return ids.compactMap { byID[$0] }
    }

    /// The reports in the box, read range by range from the table in key order: the
    /// ranges of the cells the box touches, widened by ``CellCover/margin`` so that no
    /// rounding of the Mercator formulas can leave a report's cell out. SQLite compares
    /// each row's exact position with the box (``filterWhere``) before it reads the rest
    /// of the row, so the rows of rim cells that fall outside cost little.
    static func scan(_ db: Database, in box: BoundingBox, batchSize: Int = DecodingPipeline.batchSize) throws -> [Report] {
        let ranges = CellCover.keyRanges(box.parts.map { CellCover($0, margin: CellCover.margin) })
        let range = try db.cachedStatement(sql: "SELECT \(ReportRow.columns) FROM report WHERE key BETWEEN :from AND :to AND \(filterWhere)")
        var arguments = filterArguments(ReportFilter(box: box))
        arguments += ["from": 0, "to": 0]
        try range.setArguments(arguments)
        // Only the range changes from one read to the next: bound directly.
        let s = range.sqliteStatement
        let from = sqlite3_bind_parameter_index(s, ":from"), to = sqlite3_bind_parameter_index(s, ":to")
        // Rows are copied out in batches that a second thread makes into reports while
        // SQLite steps on (building the reports' strings costs twice the stepping).
        let pipeline = DecodingPipeline()
        var batch = ReportRow.RowBatch(capacity: batchSize)
        do {
            for keys in ranges {
                sqlite3_reset(s)
                sqlite3_bind_int64(s, from, keys.lowerBound)
                sqlite3_bind_int64(s, to, keys.upperBound)
                try db.forEachRow(range) { s in
                    batch.append(s)
                    if batch.count == batchSize {
                        pipeline.submit(batch)
                        batch = ReportRow.RowBatch(capacity: batchSize)
                    }
                    return true
                }
            }
        } catch {
            _ = pipeline.finish()  // the helper thread stops and every batch is freed
            throw error
        }
        pipeline.submit(batch)
        return pipeline.finish()
    }
}

/// The zoom-16 cells a box (not crossing the antimeridian) touches, as storage keys
/// name them: a report in a cell strictly within the range is inside the box, one in a
/// cell outside the range is outside, and one in a cell on the range's rim needs its
/// exact position.
struct CellCover {
    enum Place: Comparable { case outside, edge, inside }

    let x: ClosedRange<UInt32>, y: ClosedRange<UInt32>

    /// The cells x × y.
    init(x: ClosedRange<UInt32>, y: ClosedRange<UInt32>) {
        self.x = x
        self.y = y
    }

    /// The cells of a box, or of the box widened by `margin` degrees on every side (then
    /// a superset whatever the rounding of the Mercator formulas near an edge, but no
    /// longer sound for ``place(_:)``'s inside and outside).
    init(_ part: BoundingBox, margin: Double = 0) {
        // The same cells as ReportRow.key: y grows southwards.
        let nw = Morton.cell(Morton.code(
            of: Coordinate(longitude: max(part.west - margin, -180), latitude: min(part.north + margin, 90)), zoom: ReportRow.keyZoom))
        let se = Morton.cell(Morton.code(
            of: Coordinate(longitude: min(part.east + margin, 180), latitude: max(part.south - margin, -90)), zoom: ReportRow.keyZoom))
        self.init(x: nw.x...se.x, y: nw.y...se.y)
    }

    /// A widening (1e-9°, a tenth of a millimetre) far beyond any rounding of a cell's
    /// edge, and far too thin to add rows but where a box's edge is that close to one.
    static let margin = 1e-9

    /// The Morton codes of the cells, as ascending ranges: the largest squares of the
    /// quadtree that lie wholly inside the rectangle (each square is one range of codes).
    /// Along the rim of a rectangle more than ``rimSquares`` cells long, squares of up to
    /// 1/``rimSquares`` of its longer side are taken whole, so that a box of any size is
    /// a few hundred ranges at most; the cells beyond the rectangle that they add are
    /// that close to it. A rectangle up to `2 × rimSquares - 1` cells long is exact.
    func codeRanges(zoom: Int = ReportRow.keyZoom) -> [ClosedRange<UInt64>] {
        var ranges: [ClosedRange<UInt64>] = []
        let span = Int(max(x.upperBound - x.lowerBound, y.upperBound - y.lowerBound)) + 1
        let wholeRim = span / Self.rimSquares == 0 ? 0 : Int.bitWidth - 1 - (span / Self.rimSquares).leadingZeroBitCount
        /// The square of side 2^level cells whose corner cell is (x0, y0); children in Morton order.
        func visit(level: Int, x0: UInt32, y0: UInt32) {
            let side = UInt32(1) << level
            let x1 = x0 + (side - 1), y1 = y0 + (side - 1)
            guard x0 <= x.upperBound, x1 >= x.lowerBound, y0 <= y.upperBound, y1 >= y.lowerBound else { return }
            let inside = x0 >= x.lowerBound && x1 <= x.upperBound && y0 >= y.lowerBound && y1 <= y.upperBound
            guard inside || level <= wholeRim else {
                let half = side / 2
                for (dx, dy) in [(0, 0), (half, 0), (0, half), (half, half)] { visit(level: level - 1, x0: x0 + dx, y0: y0 + dy) }
                return
            }
            let first = Morton.code(x: x0, y: y0)
            ranges.append(first...(first + (UInt64(1) << (2 * level)) - 1))
        }
        visit(level: zoom, x0: 0, y0: 0)
        return ranges
    }

    /// How finely the rim of a large rectangle is followed (see ``codeRanges(zoom:)``).
    static let rimSquares = 32

    /// The storage keys of the reports in the cells of any of `covers`, as ascending,
    /// disjoint ranges (the two parts of a box across the antimeridian may share a column).
    static func keyRanges(_ covers: [CellCover]) -> [ClosedRange<Int64>] {
        let codes = covers.flatMap { $0.codeRanges() }.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<UInt64>] = []
        for range in codes {
            if let previous = merged.last, range.lowerBound <= previous.upperBound + 1 {
                merged[merged.count - 1] = previous.lowerBound...max(previous.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        let id = UInt64(ReportLimits.maxID)
        return merged.map { Int64(bitPattern: $0.lowerBound << 31)...Int64(bitPattern: $0.upperBound << 31 | id) }
    }

    func place(_ key: Int64) -> Place {
        let cell = Morton.cell(UInt64(key) >> 31)
        guard x.contains(cell.x), y.contains(cell.y) else { return .outside }
        let inner = cell.x > x.lowerBound && cell.x < x.upperBound && cell.y > y.lowerBound && cell.y < y.upperBound
        return inner ? .inside : .edge
    }
}
