import Foundation
import GRDB
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

    /// The same columns qualified by a table alias, for joins.
    static func columns(_ alias: String) -> String {
        columns.split(separator: ",").map { "\(alias).\($0.trimmingCharacters(in: .whitespaces))" }.joined(separator: ", ")
    }

    static let phoneSeparator: Character = ";"

    static func decode(_ row: Row) -> Report {
        Report(
            id: row[0],
            coordinate: Coordinate(longitude: row[1], latitude: row[2]),
            address: row[3], city: row[4], district: row[5], objectType: row[6], balanceHolder: row[7],
            violator: row[8],
            phones: (row[9] as String).split(separator: phoneSeparator).map(String.init),
            comment: row[10], status: row[11],
            createdAt: date(milliseconds: row[12]), updatedAt: date(milliseconds: row[13]))
    }

    static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Report] {
        var result: [Report] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        while let row = try rows.next() { result.append(decode(row)) }
        return result
    }

    static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Report? {
        try Row.fetchOne(db, sql: sql, arguments: arguments).map(decode)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
