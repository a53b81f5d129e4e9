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

    /// A packed tree, made apart from the database (a bulk import makes it on a helper
    /// thread while its rows go in) and then written by ``write(_:_:)``.
    struct Layout: Sendable {
        /// Node number and blob; the root is node 1.
        var nodes: [(number: Int64, blob: [UInt8])] = []
        /// Each report's leaf, in key order (appended to `_rowid`'s B-tree, not inserted
        /// all over it).
        var leafOf: [(key: Int64, node: Int64)] = []
        /// Each inner node's parent.
        var parentOf: [(node: Int64, parent: Int64)] = []
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

    /// The entries of the reports stored in the table.
    static func entries(_ db: Database) throws -> [Entry] {
        var entries: [Entry] = []
        let read = try db.makeStatement(sql: "SELECT key, longitude, latitude FROM report")
        try db.forEachRow(read) { s in
            entries.append(Entry(key: sqlite3_column_int64(s, 0), longitude: sqlite3_column_double(s, 1), latitude: sqlite3_column_double(s, 2)))
            return true
        }
        return entries
    }

    /// Packs `entries` (reordering them) into nodes of `nodeSize` bytes, ``fill`` full, level
    /// by level from the leaves up; each level's nodes become the next level's entries. Node
    /// numbers: the root is 1, the others from 2 on in the order they are built.
    static func layout(_ entries: consuming [Entry], nodeSize: Int) -> Layout {
        let capacity = max(2, Int(Double((nodeSize - 4) / 24) * fill))
        var result = Layout()
        result.leafOf.reserveCapacity(entries.count)
        var level = entries
        var depth = 0
        var nextNode: Int64 = 2
        while true {
            let groups = level.count <= capacity ? [level.indices] : tile(&level, capacity: capacity)
            let isRoot = groups.count == 1
            var parents: [Entry] = []
            parents.reserveCapacity(groups.count)
            for group in groups {
                let node: Int64 = isRoot ? 1 : nextNode
                if !isRoot { nextNode += 1 }
                var blob = [UInt8](repeating: 0, count: nodeSize)
                if isRoot { put16(&blob, 0, UInt16(depth)) }
                put16(&blob, 2, UInt16(group.count))
                var box = Entry(id: node, minX: .infinity, maxX: -.infinity, minY: .infinity, maxY: -.infinity)
                for (i, index) in group.enumerated() {
                    let e = level[index]
                    let offset = 4 + i * 24
                    put64(&blob, offset, UInt64(bitPattern: e.id))
                    put32(&blob, offset + 8, e.minX.bitPattern)
                    put32(&blob, offset + 12, e.maxX.bitPattern)
                    put32(&blob, offset + 16, e.minY.bitPattern)
                    put32(&blob, offset + 20, e.maxY.bitPattern)
                    box.minX = min(box.minX, e.minX); box.maxX = max(box.maxX, e.maxX)
                    box.minY = min(box.minY, e.minY); box.maxY = max(box.maxY, e.maxY)
                    if depth == 0 {
                        result.leafOf.append((e.id, node))
                    } else {
                        result.parentOf.append((e.id, node))
                    }
                }
                result.nodes.append((node, blob))
                parents.append(box)
            }
            if depth == 0 { result.leafOf.sort { $0.key < $1.key } }
            if isRoot { return result }
            level = parents
            depth += 1
        }
    }

    /// Replaces the content of `report_rtree` with `layout`.
    static func write(_ layout: Layout, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM report_rtree_node; DELETE FROM report_rtree_rowid; DELETE FROM report_rtree_parent")
        let insertNode = try db.makeStatement(sql: "INSERT INTO report_rtree_node(nodeno, data) VALUES (?, ?)")
        for node in layout.nodes { try insertNode.execute(arguments: [node.number, Data(node.blob)]) }
        let insertRowid = try db.makeStatement(sql: "INSERT INTO report_rtree_rowid(rowid, nodeno) VALUES (?, ?)")
        for pair in layout.leafOf { try insertPair(db, insertRowid, pair.key, pair.node) }
        let insertParent = try db.makeStatement(sql: "INSERT INTO report_rtree_parent(nodeno, parentnode) VALUES (?, ?)")
        for pair in layout.parentOf { try insertPair(db, insertParent, pair.node, pair.parent) }
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
    private static func insertPair(_ db: Database, _ statement: Statement, _ a: Int64, _ b: Int64) throws {
        let s = statement.sqliteStatement
        sqlite3_reset(s)
        sqlite3_bind_int64(s, 1, a)
        sqlite3_bind_int64(s, 2, b)
        try db.forEachRow(statement) { _ in true }
    }
}
