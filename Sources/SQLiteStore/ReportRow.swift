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
        var decoder = Decoder()
        var result: [Report] = []
        try db.forEachRow(statement) { s in
            result.append(decoder.decode(s))
            return true
        }
        return result
    }

    /// The report with this public id, or nil.
    static func fetch(_ db: Database, id: Int64) throws -> Report? {
        try fetchAll(db, sql: "SELECT \(columns) FROM report WHERE id = ?", arguments: [id]).first
    }

    /// Makes reports of the rows of a statement selecting ``columns``, one query's rows
    /// after another. The columns whose few values repeat from row to row (city, district,
    /// object type, balance holder, status) are decoded once per distinct value and shared.
    struct Decoder {
        private var city = RepeatedTexts(), district = RepeatedTexts(), objectType = RepeatedTexts()
        private var balanceHolder = RepeatedTexts(), status = RepeatedTexts()

        /// The report in the current row.
        mutating func decode(_ s: SQLiteStatement) -> Report {
            report(
                id: sqlite3_column_int64(s, 0), longitude: sqlite3_column_double(s, 1), latitude: sqlite3_column_double(s, 2),
                created: sqlite3_column_int64(s, 12), updated: sqlite3_column_int64(s, 13)) { bytes(s, $0) }
        }

        /// The report in row `row` of a batch copied out of SQLite.
        mutating func decode(_ batch: RowBatch, row: Int) -> Report {
            batch.bytes.withUnsafeBufferPointer { arena in
                let n = batch.numbers[(5 * row)..<(5 * row + 5)]
                return report(
                    id: n[n.startIndex], longitude: Double(bitPattern: UInt64(bitPattern: n[n.startIndex + 1])),
                    latitude: Double(bitPattern: UInt64(bitPattern: n[n.startIndex + 2])), created: n[n.startIndex + 3], updated: n[n.startIndex + 4]
                ) { column in
                    let span = 2 * (RowBatch.texts * row + Int(column) - RowBatch.firstText)
                    let (start, count) = (Int(batch.spans[span]), Int(batch.spans[span + 1]))
                    return count < 0 ? nil : UnsafeBufferPointer(rebasing: arena[start..<(start + count)])
                }
            }
        }

        /// A report of its numbers and its text columns (3 to 11 of ``columns``) as bytes.
        private mutating func report(
            id: Int64, longitude: Double, latitude: Double, created: Int64, updated: Int64, text: (Int32) -> UnsafeBufferPointer<UInt8>?
        ) -> Report {
            Report(
                id: id, coordinate: Coordinate(longitude: longitude, latitude: latitude),
                address: string(text(3)) ?? "", city: city.string(text(4)), district: district.string(text(5)),
                objectType: objectType.string(text(6)), balanceHolder: balanceHolder.string(text(7)),
                violator: string(text(8)), phones: phones(text(9)), comment: string(text(10)), status: status.string(text(11)),
                createdAt: date(milliseconds: created), updatedAt: date(milliseconds: updated))
        }
    }

    /// Rows of ``columns`` copied out of SQLite as they are stepped, to be made into
    /// reports on another thread: per row its five numbers (id, longitude and latitude
    /// bits, created and updated) and where each text column lies in one byte arena.
    struct RowBatch: Sendable {
        static let firstText = 3, texts = 9
        var numbers: [Int64] = []
        /// Per row and text column, start and length in `bytes` (length -1: NULL).
        var spans: [Int32] = []
        var bytes: [UInt8] = []
        /// How many rows it holds.
        var count: Int { numbers.count / 5 }

        init(capacity: Int) {
            numbers.reserveCapacity(5 * capacity)
            spans.reserveCapacity(2 * Self.texts * capacity)
            bytes.reserveCapacity(256 * capacity)
        }

        /// Copies the current row of `s`.
        mutating func append(_ s: SQLiteStatement) {
            numbers.append(sqlite3_column_int64(s, 0))
            numbers.append(Int64(bitPattern: sqlite3_column_double(s, 1).bitPattern))
            numbers.append(Int64(bitPattern: sqlite3_column_double(s, 2).bitPattern))
            numbers.append(sqlite3_column_int64(s, 12))
            numbers.append(sqlite3_column_int64(s, 13))
            for column in Int32(Self.firstText)..<Int32(Self.firstText + Self.texts) {
                guard let text = ReportRow.bytes(s, column) else {
                    spans.append(0)
                    spans.append(-1)
                    continue
                }
                spans.append(Int32(bytes.count))
                spans.append(Int32(text.count))
                bytes.append(contentsOf: text)
            }
        }
    }

    /// The distinct values met in a column of codes, each decoded once: a short list
    /// searched by length and bytes, cheaper than decoding UTF-8 again. Past
    /// ``capacity`` distinct values, the others are decoded every time.
    struct RepeatedTexts {
        private var known: [(bytes: [UInt8], string: String)] = []
        static let capacity = 64

        /// The text of `buffer` (nil: NULL, read as empty).
        mutating func string(_ buffer: UnsafeBufferPointer<UInt8>?) -> String {
            guard let buffer, let start = buffer.baseAddress else { return "" }
            for entry in known where entry.bytes.count == buffer.count {
                if entry.bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, start, buffer.count) == 0 }) { return entry.string }
            }
            let string = String(decoding: buffer, as: UTF8.self)
            if known.count < Self.capacity { known.append((Array(buffer), string)) }
            return string
        }
    }

    /// A text column's bytes as they lie in the row. `sqlite3_value_blob` hands them over
    /// as they are; `sqlite3_column_text` would first copy each value to add a NUL. The
    /// column's value is fetched once and read through the (cheaper) value API.
    static func bytes(_ s: SQLiteStatement, _ column: Int32) -> UnsafeBufferPointer<UInt8>? {
        let value = sqlite3_column_value(s, column)
        let start = sqlite3_value_blob(value)?.assumingMemoryBound(to: UInt8.self)
        // A NULL pointer is NULL or an empty text: only then is the type asked.
        guard start != nil || sqlite3_value_type(value) != SQLITE_NULL else { return nil }
        return UnsafeBufferPointer(start: start, count: Int(sqlite3_value_bytes(value)))
    }

    static func text(_ s: SQLiteStatement, _ column: Int32) -> String? {
        string(bytes(s, column))
    }

    static func string(_ bytes: UnsafeBufferPointer<UInt8>?) -> String? {
        bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The numbers of a `;`-separated phones text, split without intermediate arrays.
    private static func phones(_ bytes: UnsafeBufferPointer<UInt8>?) -> [String] {
        guard let buffer = bytes, !buffer.isEmpty else { return [] }
        let separator = UInt8(ascii: ";")
        var result: [String] = []
        result.reserveCapacity(buffer.count(where: { $0 == separator }) + 1)
        var start = 0
        for end in buffer.indices where buffer[end] == separator {
            if end > start { result.append(String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self)) }
            start = end + 1
        }
        if start < buffer.count { result.append(String(decoding: UnsafeBufferPointer(rebasing: buffer[start...]), as: UTF8.self)) }
        return result
    }

    static func milliseconds(_ date: Date) -> Int64 { date.milliseconds }

    static func date(milliseconds: Int64) -> Date { Date(milliseconds: milliseconds) }
}
