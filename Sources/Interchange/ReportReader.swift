import Dispatch
import Foundation
import Geometry
import ReportModel

/// Records read from an input, with how far into it the reader has got.
///
/// ```swift
/// while let batch = try reader.next() {
///     imported += batch.records.count
///     print("\(batch.bytesRead * 100 / reader.totalBytes)%")
/// }
/// ```
public struct ReportBatch: Sendable, Hashable {
    /// Drafts and per-record errors, in file order.
    public var records: [DraftRecord]
    /// Bytes of the input consumed so far (cumulative), for a progress bar against
    /// ``ReportReader/totalBytes``.
    public var bytesRead: Int

    public init(records: [DraftRecord], bytesRead: Int) {
        self.records = records
        self.bytesRead = bytesRead
    }
}

/// Reads reports from a GeoJSON FeatureCollection, a GeoJSON text sequence or a CSV file,
/// in batches of drafts, without holding more than one batch of parsed records.
///
/// Every record becomes a ``DraftRecord``: a draft, or the structural rule it broke
/// (not JSON, not a Feature, no Point, a missing or mistyped property, a bad id or date, a
/// CSV row with the wrong number of fields…) with its location: `.line(n)` in CSV and
/// text sequences (the line where the record starts), `.feature(n)` in a FeatureCollection.
/// Codes and phone numbers are passed through as written: ``ReferenceData/validate(_:)``
/// checks them. Empty `violator`, `comment` and `status` become nil.
///
/// - GeoJSON: the Feature's `id` may be a positive integer or a string of digits. Unknown
///   members and properties are ignored (GIS tools add their own), but must be valid JSON.
///   A third coordinate (altitude) is accepted and dropped. `phones` must be an array of
///   strings. When a record breaks several rules, the first in the order `type`, `id`,
///   `geometry`, `properties`, then the properties in vocabulary order is reported.
/// - Text sequences: one Feature per line (blank lines skipped, CRLF accepted), or
///   RFC 8142 when the file starts with RS (0x1E); then a Feature may span lines.
/// - CSV: RFC 4180 with a header row; header names are matched ignoring case and
///   surrounding spaces, in any order; columns with an empty name are ignored; blank rows
///   and rows of empty fields are skipped; `phones` is `;`-separated.
///
/// Only problems with the file as a whole are thrown, as a ``ValidationError`` with the
/// field `file`: it cannot be read, its top level is not a FeatureCollection, its CSV
/// header is bad, or a FeatureCollection's `features` array breaks so that the features
/// after the break cannot be told apart (brackets that do not match, an unterminated
/// string, a missing comma, the end of the file): the records before the break are
/// returned first, then ``next()`` throws. A feature whose own text is invalid JSON but
/// whose brackets balance is a record error (field `feature`) and reading goes on.
///
/// The file is memory-mapped. Batches are decoded on the caller's thread, or split over
/// ``parallelism`` threads if asked; one thread parses 500,000+ Features per second.
///
/// ```swift
/// var reader = try ReportReader(url: URL(fileURLWithPath: "reports.geojsonl"))
/// var drafts: [ReportDraft] = []
/// while let batch = try reader.next() {
///     for record in batch.records {
///         switch record.draft {
///         case .success(let draft): drafts.append(draft)
///         case .failure(let error): print("\(record.location): \(error)")
///         }
///     }
///     progress(Double(batch.bytesRead) / Double(reader.totalBytes))
/// }
/// ```
public struct ReportReader: Sendable {
    /// The format being read (given, or detected from the path and first bytes).
    public let format: InterchangeFormat
    /// How many records a batch holds at most.
    public var batchSize: Int
    /// How many threads decode a batch (default 1: the caller's thread only). More threads
    /// pay off only on otherwise idle cores: each thread costs some extra CPU time, so an
    /// importer that inserts on another thread should leave it at 1.
    public var parallelism = 1

    private let source: ByteSource
    private var position: Int
    /// Where the pages of the input given back so far end (see ``ByteSource/giveBack(from:to:)``).
    private var givenBack = 0
    /// The 1-based line number at `position`.
    private var line = 1
    /// Records so far (features of a collection, including broken ones).
    private var recordCount = 0
    private var mode: Mode
    private var pendingError: ValidationError? = nil
    private var finished = false

    private enum Mode: Sendable {
        /// One JSON text per line.
        case lines
        /// RFC 8142: each JSON text after an RS byte.
        case recordSeparated
        case csv(CSVDecoder)
        /// Inside a FeatureCollection's features array; `first` until an element was read.
        case collection(first: Bool)
    }

    /// The size of the input in bytes.
    public var totalBytes: Int { source.count }

    /// Bytes consumed so far.
    public var bytesRead: Int { finished ? source.count : position }

    /// Opens a file (memory-mapped when it is a regular file), detecting its format from
    /// its extension and first bytes unless `format` is given. Throws for an unreadable file
    /// and for a bad header (not a FeatureCollection, bad CSV columns).
    public init(url: URL, format: InterchangeFormat? = nil, batchSize: Int = 10_000) throws(ValidationError) {
        let source = try ByteSource(path: url.path)
        try self.init(source: source, path: url.path, format: format, batchSize: batchSize)
    }

    /// Reads bytes in memory, e.g. an uploaded body. Without `format`, the bytes are sniffed
    /// (and `path`, if given, is checked for an extension first).
    public init(data: some Collection<UInt8>, format: InterchangeFormat? = nil, path: String = "", batchSize: Int = 10_000) throws(ValidationError) {
        try self.init(source: ByteSource(bytes: data), path: path, format: format, batchSize: batchSize)
    }

    private init(source: ByteSource, path: String, format: InterchangeFormat?, batchSize: Int) throws(ValidationError) {
        self.source = source
        self.batchSize = Swift.max(1, batchSize)
        let detected =
            format
            ?? InterchangeFormat.detect(
                path: path, prefix: UnsafeBufferPointer(start: source.base, count: Swift.min(source.count, 4096)))
        self.format = detected
        let base = source.base
        let count = source.count
        var start = 0
        if count >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { start = 3 }
        position = start
        switch detected {
        case .geojsonseq:
            var k = start
            while k < count, isJSONSpace(base[k]) { k += 1 }
            mode = k < count && base[k] == 0x1E ? .recordSeparated : .lines
        case .csv:
            mode = .lines  // replaced below
            var first = start
            while first < count, isJSONSpace(base[first]) { first += 1 }
            if first < count, base[first] == UInt8(ascii: "{") || base[first] == UInt8(ascii: "[") || base[first] == 0x1E {
                let shown = base[first] == 0x1E ? "an RS byte" : "'\(Character(Unicode.Scalar(base[first])))'"
                throw ValidationError(field: "file", "is not CSV: it starts with \(shown) like JSON; name GeoJSON files .geojson (a FeatureCollection) or .geojsonl (one Feature per line)")
            }
            // Blank lines before the header are skipped.
            var headerStart = start
            var linesBefore = 0
            while let blank = Self.nextCSVRecord(base, headerStart, count), blank.start == blank.end, blank.next < count {
                headerStart = blank.next
                linesBefore += blank.lines
            }
            guard let header = Self.nextCSVRecord(base, headerStart, count), header.end > header.start else {
                throw ValidationError(field: "file", "is empty; a CSV file starts with a header row: \(CSV.columns.joined(separator: ","))")
            }
            var fields: [CSVDecoder.Field] = []
            if let problem = CSVDecoder.split(base, header.start, header.end, into: &fields) {
                throw ValidationError(field: "file", "the CSV header is malformed: \(problem)")
            }
            var names: [String] = []
            for field in fields {
                var bytes = Array(UnsafeBufferPointer(start: base + field.start, count: field.end - field.start))
                if field.doubled { bytes = Self.undoubled(bytes) }
                guard let name = String(validating: bytes, as: UTF8.self) else {
                    throw ValidationError(field: "file", "the CSV header is not valid UTF-8")
                }
                names.append(name)
            }
            mode = .csv(try CSVDecoder(header: names))
            position = header.next
            line = 1 + linesBefore + header.lines
        case .geojson:
            mode = .collection(first: true)
            try openCollection()
        }
    }

    /// The next batch of up to ``batchSize`` records, or nil at the end of the input.
    public mutating func next() throws(ValidationError) -> ReportBatch? {
        if let error = pendingError {
            pendingError = nil
            finished = true
            throw error
        }
        guard !finished else { return nil }
        var spans: [Span] = []
        spans.reserveCapacity(Swift.min(batchSize, 1 << 16))
        let decoder: Decoder
        switch mode {
        case .lines:
            scanLines(&spans)
            decoder = .feature(FeatureDecoder(syntaxField: "line"))
        case .recordSeparated:
            scanRecordSeparated(&spans)
            decoder = .feature(FeatureDecoder(syntaxField: "line"))
        case .csv(let csv):
            scanCSV(&spans)
            decoder = .csv(csv)
        case .collection:
            do {
                try scanCollection(&spans)
            } catch {
                pendingError = error
            }
            decoder = .feature(FeatureDecoder(syntaxField: "feature"))
        }
        if spans.isEmpty {
            if let error = pendingError {
                pendingError = nil
                finished = true
                throw error
            }
            finished = true
            return nil
        }
        let records = decode(spans, decoder)
        givenBack = source.giveBack(from: givenBack, to: spans[0].start)
        return ReportBatch(records: records, bytesRead: bytesRead)
    }

    // MARK: Finding records

    private struct Span {
        var start: Int
        var end: Int
        var location: RecordLocation
    }

    private mutating func scanLines(_ spans: inout [Span]) {
        let base = source.base, count = source.count
        while spans.count < batchSize, position < count {
            var start = position
            let newline = memchr(base + start, 0x0A, count - start).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? count
            let lineNumber = line
            position = Swift.min(newline + 1, count)
            line += 1
            while start < newline, isJSONSpace(base[start]) || base[start] == 0x1E { start += 1 }
            var end = newline
            while end > start, isJSONSpace(base[end - 1]) { end -= 1 }
            if start < end { spans.append(Span(start: start, end: end, location: .line(lineNumber))) }
        }
    }

    private mutating func scanRecordSeparated(_ spans: inout [Span]) {
        let base = source.base, count = source.count
        while spans.count < batchSize, position < count {
            // `position` is at an RS, or at the start of the file.
            let lineNumber = line
            let start = position
            var end = position + 1
            if let rs = memchr(base + end, 0x1E, count - end) {
                end = UnsafePointer(rs.assumingMemoryBound(to: UInt8.self)) - base
            } else {
                end = count
            }
            var k = start
            while k < end {
                guard let lf = memchr(base + k, 0x0A, end - k) else { break }
                k = UnsafePointer(lf.assumingMemoryBound(to: UInt8.self)) - base + 1
                line += 1
            }
            position = end
            var s = start
            while s < end, isJSONSpace(base[s]) || base[s] == 0x1E { s += 1 }
            var e = end
            while e > s, isJSONSpace(base[e - 1]) { e -= 1 }
            if s < e {
                // The record's line: the one holding its RS.
                var recordLine = lineNumber
                var j = start
                while j < s {
                    if base[j] == 0x0A { recordLine += 1 }
                    j += 1
                }
                spans.append(Span(start: s, end: e, location: .line(recordLine)))
            }
        }
    }

    /// The next CSV record from `start`: its bytes without the line end, where the one after
    /// it starts, and how many line ends it spans. Nil at the end of the input.
    private static func nextCSVRecord(_ base: UnsafePointer<UInt8>, _ start: Int, _ count: Int) -> (start: Int, end: Int, next: Int, lines: Int)? {
        guard start < count else { return nil }
        var i = start
        var lines = 0
        var quoted = false
        var fieldStart = true
        while i < count {
            let b = base[i]
            if quoted {
                if b == UInt8(ascii: "\"") {
                    if i + 1 < count, base[i + 1] == UInt8(ascii: "\"") {
                        i += 2
                        continue
                    }
                    quoted = false
                } else if b == 0x0A {
                    lines += 1
                }
                i += 1
                continue
            }
            switch b {
            case 0x0A:
                let end = i > start && base[i - 1] == 0x0D ? i - 1 : i
                return (start, end, i + 1, lines + 1)
            case UInt8(ascii: ","):
                fieldStart = true
            case UInt8(ascii: "\"") where fieldStart:
                quoted = true
                fieldStart = false
            default:
                fieldStart = false
            }
            i += 1
        }
        let end = !quoted && count > start && base[count - 1] == 0x0D ? count - 1 : count
        return (start, end, count, lines)
    }

    private static func undoubled(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var k = 0
        while k < bytes.count {
            out.append(bytes[k])
            k += bytes[k] == UInt8(ascii: "\"") ? 2 : 1
        }
        return out
    }

    private mutating func scanCSV(_ spans: inout [Span]) {
        let base = source.base, count = source.count
        while spans.count < batchSize, let record = Self.nextCSVRecord(base, position, count) {
            let lineNumber = line
            position = record.next
            line += record.lines
            // Blank rows, and rows of empty fields only (as spreadsheets leave), are skipped.
            var blank = true
            for k in record.start..<record.end {
                let b = base[k]
                if b != UInt8(ascii: ",") && b != 0x20 && b != 0x09 && b != 0x0D {
                    blank = false
                    break
                }
            }
            if !blank { spans.append(Span(start: record.start, end: record.end, location: .line(lineNumber))) }
        }
    }

    // MARK: FeatureCollection

    private func fileError(_ message: String, at offset: Int) -> ValidationError {
        var lineNumber = 1
        let limit = Swift.min(offset, source.count)
        var k = 0
        while k < limit {
            guard let lf = memchr(source.base + k, 0x0A, limit - k) else { break }
            k = UnsafePointer(lf.assumingMemoryBound(to: UInt8.self)) - source.base + 1
            lineNumber += 1
        }
        return ValidationError(field: "file", "\(message) (line \(lineNumber))")
    }

    /// Reads the collection's members up to its `features` array and leaves `position` in it.
    private mutating func openCollection() throws(ValidationError) {
        let base = source.base, count = source.count
        var cursor = JSONCursor(base, start: position, end: count)
        cursor.skipSpace()
        guard !cursor.atEnd else {
            throw ValidationError(field: "file", "is empty; expected a GeoJSON FeatureCollection")
        }
        guard cursor.peek() == UInt8(ascii: "{") else {
            let kind = cursor.kindOfValue()
            throw fileError("is not a GeoJSON FeatureCollection: the top-level JSON value is \(kind), not an object", at: cursor.i)
        }
        cursor.i += 1
        var type: String? = nil
        do {
            guard try cursor.firstMember() else {
                throw fileError("is not a GeoJSON FeatureCollection: the top-level object is empty", at: cursor.i)
            }
            repeat {
                let name = try cursor.memberName()
                let key = try cursor.decodeString(name.start, name.end, name.escaped)
                if key == "type" {
                    guard cursor.peek() == UInt8(ascii: "\"") else {
                        throw fileError("is not a GeoJSON FeatureCollection: its type is \(cursor.kindOfValue())", at: cursor.i)
                    }
                    type = try cursor.parseString()
                    try Self.checkType(type, fileError: { fileError($0, at: cursor.i) })
                } else if key == "features" {
                    guard cursor.peek() == UInt8(ascii: "[") else {
                        throw fileError("features must be an array, got \(cursor.kindOfValue())", at: cursor.i)
                    }
                    if type == nil {
                        // Unusual member order: find the type after the array before reading it.
                        var probe = self
                        probe.position = cursor.i + 1
                        var spans: [Span] = []
                        probe.batchSize = Int.max
                        try probe.scanCollection(&spans, decodeTrailer: false)
                        var rest = JSONCursor(base, start: probe.position, end: count)
                        while try rest.nextMember() {
                            let restName = try rest.memberName()
                            if try rest.decodeString(restName.start, restName.end, restName.escaped) == "type",
                                rest.peek() == UInt8(ascii: "\"")
                            {
                                type = try rest.parseString()
                            } else {
                                try rest.skipValue(depth: 1)
                            }
                        }
                        try Self.checkType(type, fileError: { fileError($0, at: rest.i) })
                    }
                    position = cursor.i + 1
                    return
                } else {
                    try cursor.skipValue(depth: 1)
                }
            } while try cursor.nextMember()
        } catch let error as JSONSyntaxError {
            throw fileError("is not valid JSON: \(error.message)", at: error.offset)
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError(field: "file", "\(error)")
        }
        try Self.checkType(type, fileError: { fileError($0, at: cursor.i) })
        throw fileError("is a FeatureCollection without a features array", at: cursor.i)
    }

    private static func checkType(_ type: String?, fileError: (String) -> ValidationError) throws(ValidationError) {
        switch type {
        case "FeatureCollection": return
        case nil: throw fileError("is not a GeoJSON FeatureCollection: the top-level object has no type")
        case "Feature":
            throw fileError("holds a single Feature, not a FeatureCollection; write one Feature per line in a .geojsonl file to import a sequence")
        case let other?: throw fileError("is not a GeoJSON FeatureCollection: its type is \"\(other.prefix(40))\"")
        }
    }

    /// Finds the features of the next batch (without decoding them). At the array's end,
    /// checks the rest of the document (`decodeTrailer`) and marks the reader finished.
    private mutating func scanCollection(_ spans: inout [Span], decodeTrailer: Bool = true) throws(ValidationError) {
        guard case .collection(var first) = mode else { return }
        defer { mode = .collection(first: first) }
        let base = source.base, count = source.count
        var stack: [UInt8] = []
        while spans.count < batchSize {
            var i = position
            while i < count, isJSONSpace(base[i]) { i += 1 }
            guard i < count else { throw fileError("ends inside the features array after feature \(recordCount)", at: i) }
            if base[i] == UInt8(ascii: "]") {
                if !first { throw fileError("the features array has a ',' after its last feature", at: i) }
                position = i + 1
                if decodeTrailer { try closeCollection() }
                return
            }
            let start = i
            i = try elementEnd(from: i, stack: &stack)
            first = false
            recordCount += 1
            spans.append(Span(start: start, end: i, location: .feature(recordCount)))
            while i < count, isJSONSpace(base[i]) { i += 1 }
            guard i < count else { throw fileError("ends inside the features array after feature \(recordCount)", at: i) }
            if base[i] == UInt8(ascii: ",") {
                position = i + 1
                continue
            }
            guard base[i] == UInt8(ascii: "]") else {
                throw fileError("the features array is broken after feature \(recordCount): expected ',' or ']'", at: i)
            }
            position = i + 1
            if decodeTrailer { try closeCollection() }
            return
        }
    }

    /// The end of the array element starting at `start`, found by matching brackets outside
    /// strings (the element itself is validated when it is decoded).
    private func elementEnd(from start: Int, stack: inout [UInt8]) throws(ValidationError) -> Int {
        let base = source.base, count = source.count
        var i = start
        switch base[start] {
        case UInt8(ascii: "\""):
            guard let after = Self.stringEnd(base, start + 1, count) else {
                throw fileError("ends inside a string in feature \(recordCount + 1)", at: count)
            }
            return after
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            break
        default:  // a number, literal or garbage: up to the next separator
            while i < count, !Self.endsScalar(base[i]) { i += 1 }
            return i
        }
        stack.removeAll(keepingCapacity: true)
        while i < count {
            let b = base[i]
            switch b {
            case UInt8(ascii: "\""):
                guard let after = Self.stringEnd(base, i + 1, count) else {
                    throw fileError("ends inside a string in feature \(recordCount + 1)", at: count)
                }
                i = after
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                stack.append(b)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                let open = stack.popLast()
                guard open == (b == UInt8(ascii: "}") ? UInt8(ascii: "{") : UInt8(ascii: "[")) else {
                    throw fileError("the brackets of feature \(recordCount + 1) do not match", at: i)
                }
                if stack.isEmpty { return i + 1 }
            default:
                break
            }
            i += 1
        }
        throw fileError("ends inside feature \(recordCount + 1)", at: i)
    }

    /// From just inside a string, the offset after its closing quote (nil if it never
    /// closes). Eight bytes at a time while none is a quote or a backslash.
    @inline(__always)
    private static func stringEnd(_ base: UnsafePointer<UInt8>, _ from: Int, _ count: Int) -> Int? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = ones &* UInt64(UInt8(ascii: "\""))
        let backslashes = ones &* UInt64(UInt8(ascii: "\\"))
        var i = from
        while true {
            while i + 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let q = word ^ quotes, b = word ^ backslashes
                if ((q &- ones) & ~q | (b &- ones) & ~b) & highs != 0 { break }
                i += 8
            }
            guard i < count else { return nil }
            let c = base[i]
            if c == UInt8(ascii: "\"") { return i + 1 }
            i += c == UInt8(ascii: "\\") ? 2 : 1
        }
    }

    @inline(__always)
    private static func endsScalar(_ b: UInt8) -> Bool {
        b == UInt8(ascii: ",") || b == UInt8(ascii: "]") || b == UInt8(ascii: "}") || isJSONSpace(b)
    }

    /// After the features array: the remaining members, the closing brace, then nothing.
    private mutating func closeCollection() throws(ValidationError) {
        var cursor = JSONCursor(source.base, start: position, end: source.count)
        do throws(JSONSyntaxError) {
            while try cursor.nextMember() {
                _ = try cursor.memberName()
                try cursor.skipValue(depth: 1)
            }
            cursor.skipSpace()
            guard cursor.atEnd else { throw cursor.unexpected("the end of the file") }
        } catch {
            throw fileError("is not valid JSON after the features array: \(error.message)", at: error.offset)
        }
        position = source.count
        finished = true
    }

    // MARK: Decoding

    private enum Decoder: Sendable {
        case feature(FeatureDecoder)
        case csv(CSVDecoder)

        /// Decodes spans[range] into `out`, which is uninitialized memory for them.
        func decode(_ base: UnsafePointer<UInt8>, _ spans: UnsafeBufferPointer<Span>, _ range: Range<Int>, into out: UnsafeMutablePointer<DraftRecord>) {
            switch self {
            case .feature(let decoder):
                for k in range {
                    let span = spans[k]
                    (out + k).initialize(to: DraftRecord(location: span.location, draft: decoder.decode(base, span.start, span.end)))
                }
            case .csv(let decoder):
                var scratch = CSVDecoder.Scratch()
                for k in range {
                    let span = spans[k]
                    (out + k).initialize(to: DraftRecord(location: span.location, draft: decoder.decode(base, span.start, span.end, &scratch)))
                }
            }
        }
    }

    private func decode(_ spans: [Span], _ decoder: Decoder) -> [DraftRecord] {
        let base = source.base
        let n = spans.count
        let parts = Swift.max(1, Swift.min(parallelism, n / 256))
        return [DraftRecord](unsafeUninitializedCapacity: n) { buffer, initialized in
            spans.withUnsafeBufferPointer { spans in
                let out = buffer.baseAddress!
                guard parts > 1 else {
                    decoder.decode(base, spans, 0..<n, into: out)
                    return
                }
                // Each part initializes its own slice of the output; the input bytes are immutable.
                let shared = Shared(out: out, spans: spans, base: base)
                DispatchQueue.concurrentPerform(iterations: parts) { part in
                    decoder.decode(shared.base, shared.spans, n * part / parts..<n * (part + 1) / parts, into: shared.out)
                }
            }
            initialized = n
        }
    }

    private struct Shared: @unchecked Sendable {
        let out: UnsafeMutablePointer<DraftRecord>
        let spans: UnsafeBufferPointer<Span>
        let base: UnsafePointer<UInt8>
    }
}
