import GRDB
import GRDBSQLite

/// Stepping GRDB statements through SQLite's C API, for the loops that run once per
/// report (decoding rows, walking ids, packing the R*Tree), where GRDB's generic `Row`
/// would cost several times more.
extension Database {
    /// Steps a statement whose arguments are set, calling `row` on each row until it
    /// returns false or the rows end; the statement is reset afterwards.
    func forEachRow(_ statement: Statement, _ row: (SQLiteStatement) throws -> Bool) throws {
        let s = statement.sqliteStatement
        defer { sqlite3_reset(s) }
        while true {
            switch sqlite3_step(s) {
            case SQLITE_ROW: if try !row(s) { return }
            case SQLITE_DONE: return
            case let code: throw sqliteError(code, statement.sql)
            }
        }
    }

    /// The error SQLite reports for a failed step.
    func sqliteError(_ code: Int32, _ sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)), sql: sql)
    }
}
