import Foundation
import GRDB
import GRDBSQLite
import Geometry
import ReportModel

/// The mapping between a `report` row and a ``Report``.
///
/// Phones are stored as one `;`-separated text of normalized numbers (the form the FTS
/// index and the fallback scan read); times as integer milliseconds since 1970 UTC.
enum ReportRow {
    /// The selected columns, in the order ``decode(_:)`` reads them.
    static let columns = """
        id, longitude, latitude, address, city, district, object_type, balance_holder, \
        violator, phones, comment, status, created_at, updated_at
        """

    static let phoneSeparator: Character = ";"

    /// The zoom of the Web Mercator cells whose Morton order lays out the table.
    static let keyZoom = 16

    /// A report's storage key: its cell's Morton code, then its id (below 2^31).
    static func key(_ c: Coordinate, id: Int64) -> Int64 {
        Int64(bitPattern: Morton.code(of: c, zoom: keyZoom) << 31) | id
    }

    /// The id in a storage key or a recency key (both end in the id's 31 bits).
    static func id(key: Int64) -> Int64 { key & Int64(ReportLimits.maxID) }

    /// Runs a query selecting ``columns`` and decodes every row.
    ///
    /// Rows are read straight from SQLite's column API: this loop is the cost of every
    /// "all reports in the box" answer, and GRDB's generic `Row` costs several times more.
    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Report] {
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(arguments)
        var result: [Report] = []
        try db.forEachRow(statement) { s in
            result.append(decode(s))
            return true
        }
        return result
    }

    /// The report with this public id, or nil.
    static func fetch(_ db: Database, id: Int64) throws -> Report? {
        try fetchAll(db, sql: "SELECT \(columns) FROM report WHERE id = ?", arguments: [id]).first
    }

    /// The report in the current row of a statement selecting ``columns``.
    static func decode(_ s: SQLiteStatement) -> Report {
        Report(
            id: sqlite3_column_int64(s, 0),
            coordinate: Coordinate(longitude: sqlite3_column_double(s, 1), latitude: sqlite3_column_double(s, 2)),
            address: text(s, 3) ?? "", city: text(s, 4) ?? "", district: text(s, 5) ?? "", objectType: text(s, 6) ?? "",
            balanceHolder: text(s, 7) ?? "", violator: text(s, 8), phones: phones(s, 9), comment: text(s, 10),
            status: text(s, 11) ?? "",
            createdAt: date(milliseconds: sqlite3_column_int64(s, 12)), updatedAt: date(milliseconds: sqlite3_column_int64(s, 13)))
    }

    /// A text column's bytes as they lie in the row. `sqlite3_column_blob` hands them over
    /// as they are; `sqlite3_column_text` would first copy each value to add a NUL.
    private static func bytes(_ s: SQLiteStatement, _ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        let start = sqlite3_column_blob(s, column)?.assumingMemoryBound(to: UInt8.self)
        // A NULL pointer is NULL or an empty text: only then is the type asked.
        guard start != nil || sqlite3_column_type(s, column) != SQLITE_NULL else { return nil }
        return UnsafeBufferPointer(start: start, count: Int(sqlite3_column_bytes(s, column)))
    }

    static func text(_ s: SQLiteStatement, _ column: Int32) -> String? {
        bytes(s, column).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func phones(_ s: SQLiteStatement, _ column: Int32) -> [String] {
        guard let buffer = bytes(s, column) else { return [] }
        return buffer.split(separator: UInt8(ascii: ";")).map { String(decoding: UnsafeBufferPointer(rebasing: $0), as: UTF8.self) }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
