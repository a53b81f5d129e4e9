import Foundation
import GRDB
import GRDBSQLite

/// Builds SQLite's R*Tree for all reports at once, writing its node table directly.
///
/// Inserting a million rows into an `rtree` virtual table one by one costs ~9 s, because
/// each insert walks and splits nodes. A tree packed by Sort-Tile-Recursive (Leutenegger
/// et al., 1997) is built from sorted arrays in well under a second and answers box
/// queries at least as well, since its leaves are full and barely overlap.
///
/// The layout written is SQLite's own (`ext/rtree/rtree.c`): node 1 is the root, whose
/// first two bytes hold the tree's depth; every node holds a 2-byte cell count and cells
/// of an 8-byte rowid (here the report's storage key) and four 32-bit floats (min/max
/// longitude, min/max latitude), all big-endian; `_rowid` maps a report to its leaf, `_parent` a node to its parent.
/// Coordinates are rounded outward to floats, as SQLite does. `rtreecheck()` verifies
/// the result in the tests.
enum PackedRTree {
    struct Entry {
        /// A report's storage key in a leaf; a child's node number above.
        var id: Int64
        var minX: Float, maxX: Float, minY: Float, maxY: Float

        /// A report's entry: its point, rounded outward to floats.
        init(key: Int64, longitude x: Double, latitude y: Double) {
            self.init(id: key, minX: down(x), maxX: up(x), minY: down(y), maxY: up(y))
        }

        init(id: Int64, minX: Float, maxX: Float, minY: Float, maxY: Float) {
            self.id = id
            self.minX = minX; self.maxX = maxX; self.minY = minY; self.maxY = maxY
        }
    }

    /// How full a packed node is made. A full leaf splits at its first new entry, and
    /// SQLite then rewrites the `_rowid` row of every entry the split moves: with full
    /// nodes, the filings after an import each split one and wrote half as many pages
    /// again (the write section of BENCHMARKS.md). Box queries read as fast either way.
    static let fill = 0.7

    /// The node size, fixed when the table was created: the root's blob length.
    static func nodeSize(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT length(data) FROM report_rtree_node WHERE nodeno = 1") ?? 1228
    }

    /// The entries of the reports stored in the table, in rising longitude.
    static func entries(_ db: Database) throws -> [Entry] {
        let read = try db.makeStatement(sql: byLongitude(from: "report"))
        var entries: [Entry] = []
        while let e = try next(read, db) { entries.append(e) }
        return entries
    }

    /// The entries of the rows of `table`, in rising longitude (``next(_:_:)`` reads them).
    static func byLongitude(from table: String) -> String {
        "SELECT key, longitude, latitude FROM \(table) ORDER BY longitude"
    }

    /// Packs `count` entries, which `next` hands over in rising longitude (nil after the
    /// last), into nodes of `nodeSize` bytes, ``fill`` full, by Sort-Tile-Recursive from
    /// sorted input: the leaves a vertical slice at a time (each slice sorted by latitude
    /// in memory, some thousands of entries), then the levels above, a node for every
    /// ~35 below, in memory as before. Node numbers: the root is 1, the others from 2 on in
    /// the order they are built.
    static func pack(count: Int, nodeSize: Int, byLongitude next: () throws -> Entry?, into sink: Tables) throws {
        let capacity = max(2, Int(Double((nodeSize - 4) / 24) * fill))
        var nextNode: Int64 = 2
        var level: [Entry] = []
        if count <= capacity {
            while let e = try next() { level.append(e) }
        } else {
            let nodeCount = (count + capacity - 1) / capacity
            let sliceCount = Int(Double(nodeCount).squareRoot().rounded(.up))
            let sliceSize = ((nodeCount + sliceCount - 1) / sliceCount) * capacity
            var slice: [Entry] = []
            slice.reserveCapacity(sliceSize)
            func flush() throws {
                slice.sort { ($0.minY + $0.maxY) < ($1.minY + $1.maxY) }
                var start = 0
                while start < slice.count {
                    let end = min(start + capacity, slice.count)
                    level.append(try emit(slice[start..<end], number: nextNode, depth: 0, root: false, nodeSize: nodeSize, into: sink))
                    nextNode += 1
                    start = end
                }
                slice.removeAll(keepingCapacity: true)
            }
            while let e = try next() {
                slice.append(e)
                if slice.count == sliceSize { try flush() }
            }
            try flush()
        }
        var depth = count <= capacity ? 0 : 1
        while true {
            let groups = level.count <= capacity ? [level.indices] : tile(&level, capacity: capacity)
            let isRoot = groups.count == 1
            var parents: [Entry] = []
            parents.reserveCapacity(groups.count)
            for group in groups {
                parents.append(try emit(level[group], number: isRoot ? 1 : nextNode, depth: depth, root: isRoot, nodeSize: nodeSize, into: sink))
                if !isRoot { nextNode += 1 }
            }
            if isRoot { return }
            level = parents
            depth += 1
        }
    }

    /// Writes one node (its blob, and where each of its entries is), and returns its entry
    /// for the level above: its number and box.
    private static func emit(
        _ entries: ArraySlice<Entry>, number: Int64, depth: Int, root: Bool, nodeSize: Int, into sink: Tables
    ) throws -> Entry {
        var blob = [UInt8](repeating: 0, count: nodeSize)
        if root { put16(&blob, 0, UInt16(depth)) }
        put16(&blob, 2, UInt16(entries.count))
        var box = Entry(id: number, minX: .infinity, maxX: -.infinity, minY: .infinity, maxY: -.infinity)
        for (i, e) in entries.enumerated() {
            let offset = 4 + i * 24
            put64(&blob, offset, UInt64(bitPattern: e.id))
            put32(&blob, offset + 8, e.minX.bitPattern)
            put32(&blob, offset + 12, e.maxX.bitPattern)
            put32(&blob, offset + 16, e.minY.bitPattern)
            put32(&blob, offset + 20, e.maxY.bitPattern)
            box.minX = min(box.minX, e.minX); box.maxX = max(box.maxX, e.maxX)
            box.minY = min(box.minY, e.minY); box.maxY = max(box.maxY, e.maxY)
            if depth == 0 { try sink.leaf(key: e.id, node: number) } else { try sink.parent(node: e.id, parent: number) }
        }
        try sink.node(number, blob)
        return box
    }

    /// The three tables of an R*Tree named `name` in `db`, where a packed tree goes: its
    /// nodes, each report's leaf, each inner node's parent; inserts bound directly, as
    /// they run once per report.
    /// With `leafRuns`, each report's leaf goes there instead, to be inserted in key order
    /// later (``Build/copy(into:)``).
    struct Tables {
        let db: Database
        let nodes: Statement, parents: Statement
        let leaves: Statement?, leafRuns: SortedRuns<Int64>?

        init(_ db: Database, name: String, leafRuns: SortedRuns<Int64>? = nil) throws {
            self.db = db
            self.leafRuns = leafRuns
            nodes = try db.makeStatement(sql: "INSERT INTO \(name)_node(nodeno, data) VALUES (?, ?)")
            leaves = leafRuns == nil ? try db.makeStatement(sql: "INSERT INTO \(name)_rowid(rowid, nodeno) VALUES (?, ?)") : nil
            parents = try db.makeStatement(sql: "INSERT INTO \(name)_parent(nodeno, parentnode) VALUES (?, ?)")
        }

        func node(_ number: Int64, _ blob: [UInt8]) throws { try nodes.execute(arguments: [number, Data(blob)]) }

        func leaf(key: Int64, node: Int64) throws {
            guard let leafRuns else { return try insertPair(db, leaves!, key, node) }
            var record = RecordBytes(capacity: 8)
            record.int(node)
            try leafRuns.append(key, record)
        }
        func parent(node: Int64, parent: Int64) throws { try insertPair(db, parents, node, parent) }
    }

    /// Replaces the content of `report_rtree` with a tree packed from the stored reports
    /// (the leaves' rows go in the order packed, not appended: for a few reports, or after
    /// an import refused a row late).
    static func rebuild(_ db: Database, nodeSize: Int) throws {
        try db.execute(sql: "DELETE FROM report_rtree_node; DELETE FROM report_rtree_rowid; DELETE FROM report_rtree_parent")
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM report") ?? 0
        let read = try db.makeStatement(sql: byLongitude(from: "report"))
        try pack(count: count, nodeSize: nodeSize, byLongitude: { try next(read, db) }, into: Tables(db, name: "report_rtree"))
    }

    /// The next entry `read` (key, longitude, latitude) steps to; nil, and reset, at its end.
    static func next(_ read: Statement, _ db: Database) throws -> Entry? {
        let s = read.sqliteStatement
        switch sqlite3_step(s) {
        case SQLITE_ROW: return Entry(key: sqlite3_column_int64(s, 0), longitude: sqlite3_column_double(s, 1), latitude: sqlite3_column_double(s, 2))
        case SQLITE_DONE:
            sqlite3_reset(s)
            return nil
        case let code:
            sqlite3_reset(s)
            throw db.sqliteError(code, read.sql)
        }
    }

    /// Sort-Tile-Recursive grouping: sort by x into vertical slices of whole nodes, each
    /// slice by y, then cut into nodes of `capacity` entries. Reorders `entries`.
    static func tile(_ entries: inout [Entry], capacity: Int) -> [Range<Int>] {
        let nodeCount = (entries.count + capacity - 1) / capacity
        let sliceCount = Int(Double(nodeCount).squareRoot().rounded(.up))
        let sliceSize = ((nodeCount + sliceCount - 1) / sliceCount) * capacity
        entries.sort { ($0.minX + $0.maxX) < ($1.minX + $1.maxX) }
        var groups: [Range<Int>] = []
        var start = 0
        while start < entries.count {
            let end = min(start + sliceSize, entries.count)
            entries[start..<end].sort { ($0.minY + $0.maxY) < ($1.minY + $1.maxY) }
            var nodeStart = start
            while nodeStart < end {
                let nodeEnd = min(nodeStart + capacity, end)
                groups.append(nodeStart..<nodeEnd)
                nodeStart = nodeEnd
            }
            start = end
        }
        return groups
    }

    /// The largest float not above `value` (SQLite rounds R*Tree minima down).
    static func down(_ value: Double) -> Float {
        let f = Float(value)
        return Double(f) > value ? f.nextDown : f
    }

    /// The smallest float not below `value` (SQLite rounds R*Tree maxima up).
    static func up(_ value: Double) -> Float {
        let f = Float(value)
        return Double(f) < value ? f.nextUp : f
    }

    private static func put16(_ data: inout [UInt8], _ offset: Int, _ value: UInt16) {
        data[offset] = UInt8(value >> 8)
        data[offset + 1] = UInt8(value & 0xFF)
    }

    private static func put32(_ data: inout [UInt8], _ offset: Int, _ value: UInt32) {
        for i in 0..<4 { data[offset + i] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(i))) }
    }

    private static func put64(_ data: inout [UInt8], _ offset: Int, _ value: UInt64) {
        for i in 0..<8 { data[offset + i] = UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64(i))) }
    }

    /// Runs a two-integer insert; bound directly, as it runs once per report.
    fileprivate static func insertPair(_ db: Database, _ statement: Statement, _ a: Int64, _ b: Int64) throws {
        let s = statement.sqliteStatement
        sqlite3_reset(s)
        sqlite3_bind_int64(s, 1, a)
        sqlite3_bind_int64(s, 2, b)
        try db.forEachRow(statement) { _ in true }
    }
}

/// The R*Tree of a bulk load, packed on a second core from the staged points
/// (``ImportStaging``, in rising longitude) into a scratch database beside the target,
/// under the same table names, each report's leaf into sorted runs; then copied in, the
/// leaves' rows in key order (appended to their B-tree). Its memory is a slice of leaves,
/// the levels above them and the runs' budget, whatever the import's size.
extension PackedRTree {
    struct Build {
        let nodes: ImportStaging.Helper
        let leaves: SortedRuns<Int64>

        /// Replaces the content of `report_rtree` with the tree built (waiting for it), and
        /// deletes its scratch database.
        func copy(into db: Database) throws {
            try ImportStaging.copy(try nodes.result(), into: db, [
                ("SELECT nodeno, data FROM report_rtree_node", "report_rtree_node", "report_rtree_node(nodeno, data)", "INSERT"),
                ("SELECT nodeno, parentnode FROM report_rtree_parent", "report_rtree_parent", "report_rtree_parent(nodeno, parentnode)", "INSERT"),
            ])
            try db.execute(sql: "DELETE FROM report_rtree_rowid")
            let insert = try db.makeStatement(sql: "INSERT INTO report_rtree_rowid(rowid, nodeno) VALUES (?, ?)")
            let rows = try leaves.merged()
            while let (key, payload) = try rows.next() {
                var leaf = RecordReader(payload)
                try insertPair(db, insert, key, leaf.int())
            }
        }
    }

    /// Starts packing the points of `staging` with `existing`, the entries of the reports
    /// stored already (in rising longitude).
    static func start(_ staging: ImportStaging, existing: [Entry], nodeSize: Int, beside target: String) throws -> Build {
        let points = try staging.points.merged(), staged = staging.points.count
        let leaves: SortedRuns<Int64> = staging.runs("leaves", budget: staging.points.budget)
        let nodes = staging.buildAside("rtree", beside: target, thread: "posterwatch.rtree") { db in
            try db.execute(sql: """
                CREATE TABLE report_rtree_node (nodeno INTEGER PRIMARY KEY, data BLOB);
                CREATE TABLE report_rtree_parent (nodeno INTEGER, parentnode INTEGER)
                """)
            func next() throws -> Entry? {
                guard let (longitude, payload) = try points.next() else { return nil }
                var point = RecordReader(payload)
                return Entry(key: point.int(), longitude: longitude, latitude: point.double())
            }
            var stored = existing.makeIterator()
            var a = try next(), b = stored.next()
            try pack(count: staged + existing.count, nodeSize: nodeSize, byLongitude: {
                // The two in rising longitude, merged.
                guard let x = a else { defer { b = stored.next() }; return b }
                if let y = b, y.minX + y.maxX < x.minX + x.maxX {
                    b = stored.next()
                    return y
                }
                a = try next()
                return x
            }, into: Tables(db, name: "report_rtree", leafRuns: leaves))
        }
        return Build(nodes: nodes, leaves: leaves)
    }
}
