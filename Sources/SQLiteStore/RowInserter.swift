import Foundation
import Geometry
import GRDB
import GRDBSQLite
import ReportModel

/// Inserts report rows through one prepared statement, binding values directly: the
/// per-row cost of a million-row import is dominated by this loop. It also hands out the
/// public ids of drafts that come without one, from the stored sequence.
struct RowInserter {
    let db: Database
    let statement: Statement
    let initialStatus: String
    /// The texts of the row being inserted, and where each lies: (parameter, start, count).
    private var arena: [UInt8] = []
    private var spans: [(column: Int32, start: Int, count: Int)] = []

    /// The columns a report row is inserted with, in the order of the statement's parameters.
    static let columns = """
        key, id, longitude, latitude, address, city, district, object_type, balance_holder, \
        violator, phones, comment, status, created_at, updated_at
        """

    /// An inserter into the report table of `db`.
    init(_ db: Database, initialStatus: String) throws {
        self.db = db
        self.initialStatus = initialStatus
        statement = try db.makeStatement(sql: "INSERT INTO report (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    }

    /// A draft's status and times (milliseconds), with the defaults: the initial status,
    /// times `now`, the update at the creation.
    func values(_ d: borrowing ReportDraft, now: Date) -> (status: String, created: Int64, updated: Int64) {
        let created = ReportRow.milliseconds(d.createdAt ?? now)
        return (d.status ?? initialStatus, created, d.updatedAt.map(ReportRow.milliseconds) ?? created)
    }

    /// The highest id stored or handed out in `db` (its report table and sequence).
    static func lastID(in db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT max((SELECT last_id FROM report_sequence), ifnull(max(id), 0)) FROM report") ?? 0
    }

    static func phoneText(_ phones: [String]) -> String { phones.joined(separator: String(ReportRow.phoneSeparator)) }

    /// Inserts a draft with its id and key; defaults as ``values(_:now:)``. A taken id is
    /// the rule the draft broke.
    mutating func insert(_ d: borrowing ReportDraft, key: Int64, now: Date) throws -> Result<Int64, ValidationError> {
        let (status, created, updated) = values(d, now: now)
        // The texts go end to end into one reused buffer and are bound from there without
        // a copy each (SQLite's own copy would be nine allocations per row).
        arena.removeAll(keepingCapacity: true)
        spans.removeAll(keepingCapacity: true)
        func add(_ column: Int32, _ text: String?) {
            guard let text else { return }  // unbound parameters are NULL
            spans.append((column, arena.count, text.utf8.count))
            arena.append(contentsOf: text.utf8)
        }
        add(5, d.address)
        add(6, d.city)
        add(7, d.district)
        add(8, d.objectType)
        add(9, d.balanceHolder)
        add(10, d.violator)
        let phonesStart = arena.count
        for (i, phone) in d.phones.enumerated() {
            if i > 0 { arena.append(ReportRow.phoneSeparator.asciiValue!) }
            arena.append(contentsOf: phone.utf8)
        }
        spans.append((11, phonesStart, arena.count - phonesStart))
        add(12, d.comment)
        add(13, status)

        let s = statement.sqliteStatement
        sqlite3_bind_int64(s, 1, key)
        sqlite3_bind_int64(s, 2, d.id!)
        sqlite3_bind_double(s, 3, d.coordinate.longitude)
        sqlite3_bind_double(s, 4, d.coordinate.latitude)
        sqlite3_bind_int64(s, 14, created)
        sqlite3_bind_int64(s, 15, updated)
        let (code, extended, error) = arena.withUnsafeBufferPointer { bytes in
            for (column, start, count) in spans {
                // SQLITE_STATIC (nil): the bytes stay put until the bindings are cleared below.
                // (The arena is never empty, as the address is not: no text binds as NULL.)
                _ = sqlite3_bind_text(s, column, bytes.baseAddress.map { UnsafeRawPointer($0 + start).assumingMemoryBound(to: CChar.self) }, Int32(count), nil)
            }
            return step()
        }
        return try outcome(code, extended, error, id: d.id!)
    }

    /// Inserts every row of ``ImportStaging``'s, in key order. `inserted` hears of each id
    /// stored, `refuse` of each row the table refuses (with its record's location).
    mutating func insertAll(
        from rows: SortedRuns<Int64>.Merge, inserted: (Int64) -> Void, refuse: (RecordLocation, ValidationError) -> Void
    ) throws -> Int {
        let s = statement.sqliteStatement
        var count = 0
        while let (key, payload) = try rows.next() {
            // The payload holds the parameters after the key in their order (``ImportStaging/stage``).
            var row = RecordReader(payload)
            sqlite3_bind_int64(s, 1, key)
            let id = row.int()
            sqlite3_bind_int64(s, 2, id)
            sqlite3_bind_double(s, 3, row.double())
            sqlite3_bind_double(s, 4, row.double())
            for column: Int32 in 5...13 { Self.bind(s, column, row.text()) }
            sqlite3_bind_int64(s, 14, row.int())
            sqlite3_bind_int64(s, 15, row.int())
            let (code, extended, error) = step()
            switch try outcome(code, extended, error, id: id) {
            case .success(let id):
                count += 1
                inserted(id)
            case .failure(let rule): refuse(ImportStaging.location(row.int()), rule)
            }
        }
        return count
    }

    /// Binds a text without a copy (SQLITE_STATIC: it must stay put until the statement
    /// is reset), or NULL.
    static func bind(_ s: OpaquePointer, _ column: Int32, _ text: UnsafeRawBufferPointer?) {
        guard let text else {
            sqlite3_bind_null(s, column)
            return
        }
        // An empty text still needs a pointer, or it binds as NULL.
        let start = text.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
        sqlite3_bind_text(s, column, start.assumingMemoryBound(to: CChar.self), Int32(text.count), nil)
    }

    /// Runs the bound statement, then clears it; the codes of a failure.
    private func step() -> (Int32, Int32?, DatabaseError?) {
        let s = statement.sqliteStatement
        let code = sqlite3_step(s)
        let failure = code == SQLITE_DONE ? nil : (sqlite3_extended_errcode(db.sqliteConnection), db.sqliteError(code, statement.sql))
        sqlite3_reset(s)
        sqlite3_clear_bindings(s)
        return (code, failure?.0, failure?.1)
    }

    /// A step's outcome for the report `id`: inserted, the rule the row broke, or (thrown) an error of the database.
    private func outcome(_ code: Int32, _ extended: Int32?, _ error: DatabaseError?, id: Int64) throws -> Result<Int64, ValidationError> {
        guard let extended, let error else { return .success(id) }
        if extended == ResultCode.SQLITE_CONSTRAINT_UNIQUE.rawValue || extended == ResultCode.SQLITE_CONSTRAINT_PRIMARYKEY.rawValue {
            return .failure(ValidationError(field: "id", "report \(id) already exists"))
        }
        if code == SQLITE_CONSTRAINT {
            // A rule of the schema that validation should have caught: still the record's fault.
            return .failure(ValidationError(field: "report", "breaks a rule of the database: \(error.message ?? "constraint failed")"))
        }
        throw error
    }

    /// Records the highest id handed out, so that no number is given twice, even after
    /// the report that had it is deleted.
    func finish(lastID: Int64) throws {
        try db.execute(sql: "UPDATE report_sequence SET last_id = max(last_id, ?)", arguments: [lastID])
    }
}
