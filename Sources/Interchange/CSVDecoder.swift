import Foundation
import Geometry
import ReportModel

/// Turns the bytes of one CSV record into a draft, by the columns its header named.
struct CSVDecoder: Sendable {
    /// For each position of the header, the index in ``CSV/columns`` it names, or nil for
    /// a column with an empty name (ignored).
    let columns: [Int?]

    enum Column: Int {
        case id, longitude, latitude, address, city, district, objectType, balanceHolder, violator, phones, comment,
            status, createdAt, updatedAt
    }

    /// Checks a header row: every name known (trimmed, case-insensitive), none twice, every
    /// required column present. Columns with an empty name are ignored.
    init(header: [String]) throws(ValidationError) {
        var columns: [Int?] = []
        var unknown: [String] = []
        var seen = Set<Int>()
        for raw in header {
            let name = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            if name.isEmpty {
                columns.append(nil)
                continue
            }
            guard let index = CSV.columns.firstIndex(of: name) else {
                unknown.append("\"\(raw.prefix(40))\"")
                continue
            }
            guard seen.insert(index).inserted else {
                throw ValidationError(field: "file", "the CSV header names column \(name) twice")
            }
            columns.append(index)
        }
        if !unknown.isEmpty {
            let shown = unknown.prefix(10).joined(separator: ", ") + (unknown.count > 10 ? ", …" : "")
            throw ValidationError(
                field: "file",
                "the CSV header has unknown column\(unknown.count == 1 ? "" : "s") \(shown); the columns are \(CSV.columns.joined(separator: ","))")
        }
        let missing = CSV.columns.enumerated().filter { CSV.requiredColumns.contains($0.element) && !seen.contains($0.offset) }
        if !missing.isEmpty {
            throw ValidationError(
                field: "file",
                "the CSV header lacks required column\(missing.count == 1 ? "" : "s") \(missing.map(\.element).joined(separator: ", "))")
        }
        self.columns = columns
    }

    struct Field {
        var start: Int
        var end: Int
        /// Quoted with doubled quotes inside, to be unescaped.
        var doubled: Bool
    }

    /// Splits a record (without its line end) into fields; a message when it is malformed.
    static func split(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, into fields: inout [Field]) -> String? {
        fields.removeAll(keepingCapacity: true)
        var i = start
        while true {
            if i < end, base[i] == UInt8(ascii: "\"") {
                i += 1
                let fieldStart = i
                var doubled = false
                while true {
                    guard i < end else { return "field \(fields.count + 1) opens a quote that is never closed" }
                    if base[i] == UInt8(ascii: "\"") {
                        if i + 1 < end, base[i + 1] == UInt8(ascii: "\"") {
                            doubled = true
                            i += 2
                            continue
                        }
                        break
                    }
                    i += 1
                }
                fields.append(Field(start: fieldStart, end: i, doubled: doubled))
                i += 1
                if i < end, base[i] != UInt8(ascii: ",") {
                    return "field \(fields.count) has text after its closing quote; double a quote inside a quoted field"
                }
            } else {
                let fieldStart = i
                while i < end, base[i] != UInt8(ascii: ",") { i += 1 }
                fields.append(Field(start: fieldStart, end: i, doubled: false))
            }
            if i >= end { return nil }
            i += 1  // the comma
        }
    }

    /// Buffers reused from one record to the next.
    struct Scratch {
        var fields: [Field] = []
        var byColumn: [Field] = []
        var bytes: [UInt8] = []
    }

    func decode(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, _ scratch: inout Scratch) -> Result<ReportDraft, ValidationError> {
        if let problem = Self.split(base, start, end, into: &scratch.fields) {
            return .failure(ValidationError(field: "line", problem))
        }
        let fields = scratch.fields
        guard fields.count == columns.count else {
            let what = fields.count > columns.count ? "too many fields" : "too few fields"
            return .failure(ValidationError(field: "line", "has \(what): \(fields.count), the header has \(columns.count) columns"))
        }
        let absent = Field(start: 0, end: 0, doubled: false)
        scratch.byColumn.removeAll(keepingCapacity: true)
        scratch.byColumn.append(contentsOf: repeatElement(absent, count: CSV.columns.count))
        for (position, column) in columns.enumerated() {
            if let column { scratch.byColumn[column] = fields[position] }
        }
        let byColumn = scratch.byColumn
        var unescaped = scratch.bytes
        defer { scratch.bytes = unescaped }

        /// The field's bytes, quotes undoubled, optionally without surrounding spaces and tabs.
        func withBytes<T>(_ column: Column, trim: Bool = false, _ body: (UnsafeBufferPointer<UInt8>) throws(ValidationError) -> T) throws(ValidationError) -> T {
            let field = byColumn[column.rawValue]
            var s = field.start, e = field.end
            if trim {
                while s < e, base[s] == 0x20 || base[s] == 0x09 { s += 1 }
                while e > s, base[e - 1] == 0x20 || base[e - 1] == 0x09 { e -= 1 }
            }
            guard field.doubled else { return try body(UnsafeBufferPointer(start: base + s, count: e - s)) }
            unescaped.removeAll(keepingCapacity: true)
            var k = s
            while k < e {
                unescaped.append(base[k])
                k += base[k] == UInt8(ascii: "\"") ? 2 : 1
            }
            let copy = unescaped
            return try copy.withUnsafeBufferPointer { (buffer) throws(ValidationError) -> T in try body(buffer) }
        }
        func string(_ buffer: UnsafeBufferPointer<UInt8>, _ column: Column) throws(ValidationError) -> String {
            guard let text = String(validating: buffer, as: UTF8.self) else {
                throw ValidationError(field: CSV.columns[column.rawValue], "is not valid UTF-8")
            }
            return text
        }
        func text(_ column: Column) throws(ValidationError) -> String {
            try withBytes(column) { (buffer) throws(ValidationError) in try string(buffer, column) }
        }
        func optional(_ column: Column) throws(ValidationError) -> String? {
            let value = try text(column)
            return value.isEmpty ? nil : value
        }
        func shown(_ buffer: UnsafeBufferPointer<UInt8>) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: buffer.prefix(40)), as: UTF8.self)
        }
        func degrees(_ column: Column) throws(ValidationError) -> Double {
            let name = CSV.columns[column.rawValue]
            return try withBytes(column, trim: true) { (buffer) throws(ValidationError) -> Double in
                guard let p = buffer.baseAddress, !buffer.isEmpty else {
                    throw ValidationError(field: name, "is required: a number of degrees")
                }
                let from = p[0] == UInt8(ascii: "+") ? 1 : 0
                if buffer.count > from, from == 0 || p[1] != UInt8(ascii: "-") {
                    var cursor = JSONCursor(p, start: from, end: buffer.count)
                    if let number = try? cursor.parseNumber(), cursor.atEnd, number.value.isFinite { return number.value }
                }
                throw ValidationError(field: name, "must be a number of degrees, got \"\(shown(buffer))\"")
            }
        }
        func date(_ column: Column) throws(ValidationError) -> Date? {
            try withBytes(column, trim: true) { (buffer) throws(ValidationError) -> Date? in
                guard let p = buffer.baseAddress, !buffer.isEmpty else { return nil }
                guard let date = RFC3339.parse(p, buffer.count) else {
                    throw badDate(CSV.columns[column.rawValue], shown(buffer))
                }
                return date
            }
        }

        do throws(ValidationError) {
            let id = try withBytes(.id, trim: true) { (buffer) throws(ValidationError) -> Int64? in
                guard let p = buffer.baseAddress, !buffer.isEmpty else { return nil }
                guard let value = positiveInteger(p, buffer.count) else {
                    throw ValidationError(field: "id", "must be a positive integer, got \"\(shown(buffer))\"")
                }
                return value
            }
            let longitude = try degrees(.longitude)
            let latitude = try degrees(.latitude)
            let address = try text(.address)
            let city = try text(.city)
            let district = try text(.district)
            let objectType = try text(.objectType)
            let balanceHolder = try text(.balanceHolder)
            let violator = try optional(.violator)
            let phones = try withBytes(.phones) { (buffer) throws(ValidationError) -> [String] in
                var list: [String] = []
                var k = 0
                while k < buffer.count {
                    var e = k
                    while e < buffer.count, buffer[e] != UInt8(ascii: ";") { e += 1 }
                    var s = k
                    k = e + 1
                    while s < e, buffer[s] == 0x20 || buffer[s] == 0x09 { s += 1 }
                    while e > s, buffer[e - 1] == 0x20 || buffer[e - 1] == 0x09 { e -= 1 }
                    if s < e { list.append(try string(UnsafeBufferPointer(rebasing: buffer[s..<e]), .phones)) }
                }
                return list
            }
            let comment = try optional(.comment)
            let status = try optional(.status)
            let createdAt = try date(.createdAt)
            let updatedAt = try date(.updatedAt)
            return .success(ReportDraft(
                id: id, coordinate: Coordinate(longitude: longitude, latitude: latitude), address: address, city: city,
                district: district, objectType: objectType, balanceHolder: balanceHolder, violator: violator,
                phones: phones, comment: comment, status: status, createdAt: createdAt, updatedAt: updatedAt))
        } catch {
            return .failure(error)
        }
    }
}
