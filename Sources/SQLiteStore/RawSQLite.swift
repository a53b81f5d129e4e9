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

    /// Inserts through `insert` (of this database) every row `select` (of any database)
    /// yields, column for column: bulk copies between files without a `Row` each.
    func copyRows(from select: Statement, into insert: Statement) throws {
        let from = select.sqliteStatement, to = insert.sqliteStatement
        let columns = sqlite3_column_count(from)
        defer { sqlite3_reset(from) }
        while true {
            switch sqlite3_step(from) {
            case SQLITE_ROW: break
            case SQLITE_DONE: return
            case let code: throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "reading \(select.sql) failed")
            }
            for i in 0..<columns { sqlite3_bind_value(to, i + 1, sqlite3_column_value(from, i)) }
            let code = sqlite3_step(to)
            sqlite3_reset(to)
            guard code == SQLITE_DONE else { throw sqliteError(code, insert.sql) }
        }
    }

    /// The error SQLite reports for a failed step.
    func sqliteError(_ code: Int32, _ sql: String) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)), sql: sql)
    }
}
