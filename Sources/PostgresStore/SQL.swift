import Foundation
import Geometry
import PostgresNIO
import ReportModel
import StorePorts

/// A statement put together from pieces: its text, and its values always bound (`$1`,
/// `$2`, …), never spliced into the text. What the filters and boxes of the report reads
/// need, where one literal of `PostgresQuery` cannot say a varying number of conditions.
struct SQL: Sendable {
    private(set) var text: String
    private(set) var binds = PostgresBindings()

    init(_ text: String = "") { self.text = text }

    /// Appends text (never a value: see ``bind(_:)``).
    mutating func append(_ text: String) { self.text += text }

    /// Binds a value and returns its placeholder.
    mutating func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value?) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    var query: PostgresQuery { PostgresQuery(unsafeSQL: text, binds: binds) }

    /// The condition that a report (`report` or an alias's columns) is in the box, edges
    /// included: the GiST index finds the candidates (PostGIS compares float boxes rounded
    /// outward, so it never misses one), and the exact doubles decide. A box across the
    /// antimeridian is its two parts.
    mutating func inside(_ box: BoundingBox) -> String {
        let parts = box.parts.map { part in
            let (w, s, e, n) = (bind(part.west), bind(part.south), bind(part.east), bind(part.north))
            return "(position && ST_MakeEnvelope(\(w), \(s), \(e), \(n), 4326) AND longitude BETWEEN \(w) AND \(e) AND latitude BETWEEN \(s) AND \(n))"
        }
        return "(" + parts.joined(separator: " OR ") + ")"
    }

    /// The conditions of a filter (`TRUE` for none).
    mutating func matching(_ filter: ReportFilter) -> String {
        var conditions = ["TRUE"]
        if let statuses = filter.statuses { conditions.append("status = ANY(\(bind(statuses)))") }
        if let types = filter.objectTypes { conditions.append("object_type = ANY(\(bind(types)))") }
        switch filter.assignee {
        case nil: break
        case .unassigned?: conditions.append("NOT EXISTS (SELECT 1 FROM assignment a WHERE a.report_id = report.id AND a.ended_at IS NULL)")
        case .account(let id)?:
            conditions.append("EXISTS (SELECT 1 FROM assignment a WHERE a.report_id = report.id AND a.ended_at IS NULL AND a.account_id = \(bind(id)))")
        }
        if let created = filter.created { conditions.append("created_at BETWEEN \(bind(created.lowerBound)) AND \(bind(created.upperBound))") }
        if let box = filter.box { conditions.append(inside(box)) }
        return conditions.joined(separator: " AND ")
    }
}

/// A row's cells read in order, each as the type its reader names.
///
/// Why: `PostgresRow.decode` of a tuple type looks up the Swift runtime's generic metadata
/// for every row it decodes (its columns are a parameter pack, which the optimizer does
/// not specialize). A replica's start from a million rows spent 26% of its samples reading
/// them that way, 15% cell by cell; an export of them, 14% less of the server's CPU.
struct RowCells {
    private var cells: PostgresRow.Iterator
    private var read = 0

    init(_ row: PostgresRow) { cells = row.makeIterator() }

    /// The next cell as a `T` (a decoding error names the reader's line, as
    /// `PostgresRow.decode` did).
    mutating func next<T: PostgresDecodable>(_: T.Type = T.self, file: String = #fileID, line: Int = #line) throws -> T {
        try next(file: file, line: line).decode(T.self, file: file, line: line)
    }

    /// The next cell as it came (for ``BinaryArrays``).
    mutating func next(file: String = #fileID, line: Int = #line) throws -> PostgresCell {
        guard let cell = cells.next() else { throw RowTooShort(cells: read, file: file, line: line) }
        read += 1
        return cell
    }
}

/// A row with fewer cells than its reader takes: a statement out of step with its reader.
struct RowTooShort: Error, CustomStringConvertible {
    let cells: Int, file: String, line: Int
    var description: String { "a row of \(cells) cells, read for more at \(file):\(line)" }
}

/// Rows read from PostgreSQL made into the model's values. The statements select the
/// columns in the order each function reads them.
enum Rows {
    /// A report's columns, in the order ``report(_:)`` reads them.
    static let reportColumns = """
        id, longitude, latitude, address, city, district, object_type, balance_holder, \
        violator, phones, comment, status, created_at, updated_at
        """

    static func report(_ row: PostgresRow) throws -> Report {
        var c = RowCells(row)
        let id = try c.next(Int64.self), longitude = try c.next(Double.self), latitude = try c.next(Double.self)
        let address = try c.next(String.self), city = try c.next(String.self), district = try c.next(String.self)
        let type = try c.next(String.self), holder = try c.next(String.self), violator = try c.next(String?.self)
        let phones = try c.next(String.self), comment = try c.next(String?.self), status = try c.next(String.self)
        let created = try c.next(Int64.self), updated = try c.next(Int64.self)
        return Report(
            id: id, coordinate: Coordinate(longitude: longitude, latitude: latitude), address: address, city: city, district: district,
            objectType: type, balanceHolder: holder, violator: violator, phones: Rows.phones(phones),
            comment: comment, status: status, createdAt: Date(milliseconds: created), updatedAt: Date(milliseconds: updated))
    }

    static func reports(_ rows: [PostgresRow]) throws -> [Report] { try rows.map(report) }

    /// Phones as the table keeps them: one `;`-separated text.
    static func phoneText(_ phones: [String]) -> String { phones.joined(separator: ";") }

    /// The phones of a table's text (``phoneText(_:)`` read back), split by its bytes: a
    /// split by characters finds grapheme boundaries first, once a report at a start.
    static func phones(_ text: String) -> [String] { text.utf8.split(separator: UInt8(ascii: ";")).map { String(Substring($0)) } }

    /// A hidden report's columns: a report's, then when and why it was hidden.
    static let hiddenColumns = reportColumns + ", hidden_at, hide_note"

    static func hidden(_ row: PostgresRow) throws -> HiddenReport {
        let cells = row.makeRandomAccess()
        return HiddenReport(
            report: try report(row), note: try cells[15].decode(String.self), hiddenAt: Date(milliseconds: try cells[14].decode(Int64.self)))
    }

    static let historyColumns = "seq, report_id, at, account_id, api_key_id, action, from_status, to_status, note, changes"

    static func history(_ row: PostgresRow) throws -> HistoryEntry {
        let (seq, id, at, account, key, action, from, to, note, changes) = try row.decode(
            (Int64, Int64, Int64, Int64?, Int64?, String, String?, String?, String?, String?).self)
        return HistoryEntry(
            seq: seq, reportID: id, at: Date(milliseconds: at), author: Author(accountID: account, apiKeyID: key),
            action: ReportAction(rawValue: action) ?? .edited, fromStatus: from, toStatus: to, note: note,
            changes: try changes.map { try JSONDecoder().decode([FieldChange].self, from: Data($0.utf8)) } ?? [])
    }

    static let phoneHistoryColumns = "seq, number, at, account_id, api_key_id, action, from_status, to_status, note, moved"

    static func phoneHistory(_ row: PostgresRow) throws -> PhoneHistoryEntry {
        let (seq, number, at, account, key, action, from, to, note, moved) = try row.decode(
            (Int64, String, Int64, Int64?, Int64?, String, String, String, String?, Int).self)
        return PhoneHistoryEntry(
            seq: seq, number: number, at: Date(milliseconds: at), author: Author(accountID: account, apiKeyID: key),
            action: PhoneAction(rawValue: action) ?? .verified, fromStatus: PhoneStatus(rawValue: from) ?? .unverified,
            toStatus: PhoneStatus(rawValue: to) ?? .unverified, note: note, moved: moved)
    }

    static let changeColumns = "seq, action, report_id, at, history_seq, phone"

    static func change(_ row: PostgresRow) throws -> ChangeRow {
        var c = RowCells(row)
        let seq = try c.next(Int64.self), action = try c.next(String.self), id = try c.next(Int64.self)
        let at = try c.next(Int64.self), history = try c.next(Int64?.self), phone = try c.next(String?.self)
        return ChangeRow(seq: seq, action: ReportAction(rawValue: action) ?? .edited, reportID: id, at: Date(milliseconds: at), historySeq: history, phone: phone)
    }

    static let photoColumns = "id, report_id, sha256, width, height, bytes, created_at"

    static func photo(_ row: PostgresRow) throws -> PhotoRow {
        let (id, report, sha, width, height, bytes, created) = try row.decode((Int64, Int64, String, Int, Int, Int, Int64).self)
        return PhotoRow(id: id, reportID: report, sha256: sha, width: width, height: height, bytes: bytes, createdAt: Date(milliseconds: created))
    }

    static func storedAnswer(_ row: PostgresRow) throws -> StoredAnswer {
        let (fingerprint, status, headers, answer) = try row.decode((Data, Int, String, Data).self)
        return StoredAnswer(
            fingerprint: fingerprint,
            reply: StoredAnswer.Reply(status: status, headers: try JSONDecoder().decode([String: String].self, from: Data(headers.utf8)), body: answer))
    }

    /// The markers' columns: id, position, status, creation time.
    static let markerColumns = "id, longitude, latitude, status, created_at"

    static func marker<Marker>(_ row: PostgresRow, _ statuses: [String: Int], _ make: MarkerMaker<Marker>) throws -> Marker {
        var c = RowCells(row)
        let id = try c.next(Int64.self), longitude = try c.next(Double.self), latitude = try c.next(Double.self)
        let status = try c.next(String.self), created = try c.next(Int64.self)
        return make(id, Coordinate(longitude: longitude, latitude: latitude), statuses[status] ?? 0, created)
    }

    /// The tally's columns.
    static let tallyColumns = "id, phones, district, object_type, status, created_at"

    /// A tally marker; nil for a row with a code the reference data does not know.
    static func tally(_ row: PostgresRow, _ codes: ReferenceCodes) throws -> TallyMarker? {
        var c = RowCells(row)
        let id = try c.next(Int64.self), phones = try c.next(String.self), district = try c.next(String.self)
        let type = try c.next(String.self), status = try c.next(String.self), created = try c.next(Int64.self)
        guard let d = codes.districts[district], let t = codes.objectTypes[type], let s = codes.statuses[status] else { return nil }
        return TallyMarker(id: id, phones: Rows.phones(phones), district: d, objectType: t, status: s, createdAt: created)
    }
}

/// The positions of the reference data's codes, as markers number them.
struct ReferenceCodes: Sendable {
    let statuses: [String: Int], districts: [String: Int], objectTypes: [String: Int]

    init(_ reference: ReferenceData) {
        func positions(_ codes: [String]) -> [String: Int] {
            Dictionary(codes.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        }
        statuses = positions(reference.statuses.map(\.code))
        districts = positions(reference.districts.map(\.code))
        objectTypes = positions(reference.objectTypes.map(\.code))
    }
}
