import PostgresNIO
import ReportModel
import Geometry

/// Statements prepared once per connection and run by name: those on the hot paths, where
/// parsing and planning the text again cost the database more than running it.

/// A number's newest reports (a filing's duplicate hints, one per number).
struct HoldersStatement: PostgresPreparedStatement {
    static let name = "posterwatch_holders"
    static let sql = "SELECT report_id, longitude, latitude, status FROM report_phone WHERE phone = $1 ORDER BY report_id DESC LIMIT $2"
    typealias Row = PhoneHolder

    var phone: String
    var limit: Int

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(phone)
        bindings.append(Int64(limit))
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> PhoneHolder {
        var c = RowCells(row)
        let id = try c.next(Int64.self), longitude = try c.next(Double.self), latitude = try c.next(Double.self), status = try c.next(String.self)
        return PhoneHolder(reportID: id, coordinate: Coordinate(longitude: longitude, latitude: latitude), status: status)
    }
}

/// Reports by id (a search's page from the tally, a filing's hints, Open311's lists).
struct ReportsByIDStatement: PostgresPreparedStatement {
    static let name = "posterwatch_reports_by_id"
    static let sql = "SELECT \(Rows.reportColumns) FROM report WHERE id = ANY($1)"
    typealias Row = Report

    var ids: [Int64]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(ids)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Report { try Rows.report(row) }
}
