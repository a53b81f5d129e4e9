import Geometry
import GRDB
import GRDBSQLite
import ReportModel

extension SQLiteReports {
    /// What a map index needs of every report (id, position, status number, creation time
    /// in ms), made into the caller's type by `make`, in the table's order (by place). One
    /// pass of the table with SQLite's column API: the start-up load of the cluster index.
    /// Status numbers are positions in ``ReferenceData/statuses``.
    public func markers<Marker>(_ make: (_ id: Int64, _ coordinate: Coordinate, _ status: Int, _ createdAt: Int64) -> Marker) throws -> [Marker] {
        try markersAndLastChange(make).markers
    }

    /// The same, with the last change they include (read in the same transaction): a
    /// follower of the changes goes on from there.
    public func markersAndLastChange<Marker>(
        _ make: (_ id: Int64, _ coordinate: Coordinate, _ status: Int, _ createdAt: Int64) -> Marker
    ) throws -> (markers: [Marker], lastChange: Int64) {
        try pool.read { db in
            var result: [Marker] = []
            result.reserveCapacity(try Self.reportCount(db))
            try Self.forEachMarker(db, db.makeStatement(sql: "SELECT id, longitude, latitude, status, created_at FROM report"), reference) {
                result.append(make($0, $1, $2, $3))
            }
            return (result, try Self.lastChange(db))
        }
    }

    /// Calls `body` with each marker `statement` selects (id, longitude, latitude, status,
    /// created_at, in the order of ``tallyColumns``).
    static func forEachMarker(
        _ db: Database, _ statement: Statement, _ reference: ReferenceData, _ body: (Int64, Coordinate, Int, Int64) -> Void
    ) throws {
        let decode = RowDecoder(reference)
        try db.forEachRow(statement) { s in
            let m = decode.marker(s)
            body(m.id, m.coordinate, m.status, m.createdAt)
            return true
        }
    }

    /// The reports with these ids, in the order given; ids without a report are left out.
    public func reports(ids: some Collection<Int64>) throws -> [Report] {
        try pool.read { db in try Self.fetch(db, ids: ids) }
    }
}

extension SQLiteReports {
    /// The columns a report's marker and tally marker are read from: the marker's first.
    static let tallyColumns = "id, longitude, latitude, status, created_at, phones, district, object_type"

    /// Every report's map marker (made by `make`, as ``markers(_:)`` makes them) and tally
    /// marker, with the last change they include, all read in one pass of the table: what
    /// the service's index and tally start from, at the same point of the changes.
    public func snapshot<Marker>(
        _ make: (_ id: Int64, _ coordinate: Coordinate, _ status: Int, _ createdAt: Int64) -> Marker
    ) throws -> (markers: [Marker], tally: [TallyMarker], lastChange: Int64) {
        try pool.read { db in
            let count = try Self.reportCount(db)
            var markers: [Marker] = [], tally: [TallyMarker] = []
            markers.reserveCapacity(count)
            tally.reserveCapacity(count)
            let decode = RowDecoder(reference)
            try db.forEachRow(db.makeStatement(sql: "SELECT \(Self.tallyColumns) FROM report")) { s in
                let m = decode.marker(s)
                markers.append(make(m.id, m.coordinate, m.status, m.createdAt))
                if let t = decode.tally(s) { tally.append(t) }
                return true
            }
            return (markers, tally, try Self.lastChange(db))
        }
    }

    /// Calls `body` with the tally marker of each row `statement` selects (``tallyColumns``);
    /// a row with a code the reference data does not know (which only a hand-made row can
    /// have) has none.
    static func forEachTallyMarker(_ db: Database, _ statement: Statement, _ reference: ReferenceData, _ body: (TallyMarker) -> Void) throws {
        let decode = RowDecoder(reference)
        try db.forEachRow(statement) { s in
            if let t = decode.tally(s) { body(t) }
            return true
        }
    }

    /// A row of ``tallyColumns`` read through SQLite's column API, codes to their numbers.
    struct RowDecoder {
        let statuses: [[UInt8]], districts: [[UInt8]], types: [[UInt8]]

        init(_ reference: ReferenceData) {
            statuses = reference.statuses.map { Array($0.code.utf8) }
            districts = reference.districts.map { Array($0.code.utf8) }
            types = reference.objectTypes.map { Array($0.code.utf8) }
        }

        private func text(_ s: OpaquePointer, _ column: Int32) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(start: sqlite3_column_blob(s, column)?.assumingMemoryBound(to: UInt8.self), count: Int(sqlite3_column_bytes(s, column)))
        }

        func marker(_ s: OpaquePointer) -> (id: Int64, coordinate: Coordinate, status: Int, createdAt: Int64) {
            let status = text(s, 3)
            // The status column references the status table, so one code matches.
            return (sqlite3_column_int64(s, 0), Coordinate(longitude: sqlite3_column_double(s, 1), latitude: sqlite3_column_double(s, 2)),
                    statuses.firstIndex { $0.elementsEqual(status) } ?? 0, sqlite3_column_int64(s, 4))
        }

        func tally(_ s: OpaquePointer) -> TallyMarker? {
            let (district, type, status) = (text(s, 6), text(s, 7), text(s, 3))
            guard let d = districts.firstIndex(where: { $0.elementsEqual(district) }), let t = types.firstIndex(where: { $0.elementsEqual(type) }),
                  let st = statuses.firstIndex(where: { $0.elementsEqual(status) })
            else { return nil }
            let phones = text(s, 5).split(separator: UInt8(ascii: ";")).map { String(decoding: $0, as: UTF8.self) }
            return TallyMarker(id: sqlite3_column_int64(s, 0), phones: phones, district: d, objectType: t, status: st, createdAt: sqlite3_column_int64(s, 4))
        }
    }
}

extension WriteTransaction {
    /// The tally markers of those of these reports that are public, as this transaction sees them.
    public func tallyMarkers(ids: some Collection<Int64>) throws -> [TallyMarker] {
        guard !ids.isEmpty else { return [] }
        let statement = try db.cachedStatement(sql: "SELECT \(SQLiteReports.tallyColumns) FROM report WHERE id IN (SELECT value FROM json_each(?))")
        try statement.setArguments([SQLiteReports.jsonList(ids)])
        var result: [TallyMarker] = []
        try SQLiteReports.forEachTallyMarker(db, statement, reference) { result.append($0) }
        return result
    }
}
