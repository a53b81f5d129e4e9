import Foundation
import Geometry

/// The closed vocabularies a report refers to: districts, object types, the balance
/// holders that fit each object type, and statuses. Each entry has a stable ASCII `code`
/// and Ukrainian and English names.
///
/// The JSON files in `data/reference/` are the source, compiled into the library
/// (``bundled()``); the store copies them into its
/// tables when it creates a database, and validates every report against them.
///
/// ```swift
/// let reference = try ReferenceData.bundled()
/// let draft = try reference.validate(rawDraft)   // normalized phones, known codes
/// ```
public struct ReferenceData: Sendable, Hashable, Codable {
    /// A named entry of a vocabulary.
    public struct Entry: Sendable, Hashable, Codable {
        public var code: String
        public var nameUk: String
        public var nameEn: String

        enum CodingKeys: String, CodingKey {
            case code
            case nameUk = "name_uk"
            case nameEn = "name_en"
        }

        public init(code: String, nameUk: String, nameEn: String) {
            self.code = code
            self.nameUk = nameUk
            self.nameEn = nameEn
        }
    }

    /// A district of the city, with a representative point (used by the generator).
    public struct District: Sendable, Hashable, Codable {
        public var code: String
        public var nameUk: String
        public var nameEn: String
        /// `[longitude, latitude]` of the district's centre.
        public var center: [Double]

        enum CodingKeys: String, CodingKey {
            case code, center
            case nameUk = "name_uk"
            case nameEn = "name_en"
        }

        public init(code: String, nameUk: String, nameEn: String, center: [Double]) {
            self.code = code
            self.nameUk = nameUk
            self.nameEn = nameEn
            self.center = center
        }
    }

    /// An organisation that maintains objects, and the object types it may be recorded for.
    public struct BalanceHolder: Sendable, Hashable, Codable {
        public var code: String
        public var nameUk: String
        public var nameEn: String
        public var objectTypes: [String]

        enum CodingKeys: String, CodingKey {
            case code
            case nameUk = "name_uk"
            case nameEn = "name_en"
            case objectTypes = "object_types"
        }

        public init(code: String, nameUk: String, nameEn: String, objectTypes: [String]) {
            self.code = code
            self.nameUk = nameUk
            self.nameEn = nameEn
            self.objectTypes = objectTypes
        }
    }

    /// A step of the report workflow; `open` statuses still need work.
    public struct Status: Sendable, Hashable, Codable {
        public var code: String
        public var nameUk: String
        public var nameEn: String
        public var open: Bool

        enum CodingKeys: String, CodingKey {
            case code, open
            case nameUk = "name_uk"
            case nameEn = "name_en"
        }

        public init(code: String, nameUk: String, nameEn: String, open: Bool) {
            self.code = code
            self.nameUk = nameUk
            self.nameEn = nameEn
            self.open = open
        }
    }

    public var districts: [District]
    public var objectTypes: [Entry]
    public var balanceHolders: [BalanceHolder]
    /// In workflow order; the first is the status of a new report.
    public var statuses: [Status]
    /// The steps of the workflow (see ``StatusTransition``).
    public var transitions: [StatusTransition]

    public init(
        districts: [District], objectTypes: [Entry], balanceHolders: [BalanceHolder], statuses: [Status], transitions: [StatusTransition] = []
    ) throws(ValidationError) {
        self.districts = districts
        self.objectTypes = objectTypes
        self.balanceHolders = balanceHolders
        self.statuses = statuses
        self.transitions = transitions
        try check()
        try checkTransitions()
    }

    /// `statuses.json`: the statuses in workflow order and the steps between them.
    struct StatusFile: Decodable {
        var statuses: [Status]
        var transitions: [StatusTransition]
    }

    /// The status of a report that was given none.
    public var initialStatus: String { statuses.first?.code ?? "new" }

    /// The codes of the holders that may be recorded for an object type.
    public func holders(for objectType: String) -> [BalanceHolder] {
        balanceHolders.filter { $0.objectTypes.contains(objectType) }
    }

    // MARK: Loading

    /// The file names, in a reference directory, of each vocabulary.
    public static let fileNames = (
        districts: "districts.json", objectTypes: "object_types.json",
        balanceHolders: "balance_holders.json", statuses: "statuses.json")

    /// Loads and checks the four JSON files of a directory laid out like `data/reference`.
    public static func load(directory: URL) throws -> ReferenceData {
        func read(_ name: String) throws -> Data {
            try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return try decode(
            districts: read(fileNames.districts), objectTypes: read(fileNames.objectTypes),
            balanceHolders: read(fileNames.balanceHolders), statuses: read(fileNames.statuses))
    }

    /// The reference data of `data/reference`, compiled into the library at build time.
    public static func bundled() throws -> ReferenceData {
        try decode(
            districts: Data(PackageResources.districts_json), objectTypes: Data(PackageResources.object_types_json),
            balanceHolders: Data(PackageResources.balance_holders_json), statuses: Data(PackageResources.statuses_json))
    }

    static func decode(districts: Data, objectTypes: Data, balanceHolders: Data, statuses: Data) throws -> ReferenceData {
        func decode<T: Decodable>(_ data: Data, _ name: String) throws -> T {
            do {
                return try JSONDecoder().decode(T.self, from: data)
            } catch let error as DecodingError {
                throw ValidationError(field: name, "is not valid reference data: \(error)")
            }
        }
        let workflow: StatusFile = try decode(statuses, fileNames.statuses)
        return try ReferenceData(
            districts: decode(districts, fileNames.districts), objectTypes: decode(objectTypes, fileNames.objectTypes),
            balanceHolders: decode(balanceHolders, fileNames.balanceHolders), statuses: workflow.statuses, transitions: workflow.transitions)
    }

    // MARK: Validation

    /// Checks that codes are unique ASCII identifiers, names are present, and every
    /// holder refers to known object types.
    func check() throws(ValidationError) {
        func checkCodes(_ codes: [String], _ field: String, most: Int = 65_536) throws(ValidationError) {
            guard !codes.isEmpty else { throw ValidationError(field: field, "must not be empty") }
            // The cluster index counts statuses in 16 lanes; the tally numbers districts and object types in 16 bits.
            guard codes.count <= most else { throw ValidationError(field: field, "must be at most \(most), got \(codes.count)") }
            var seen = Set<String>()
            for code in codes {
                guard code.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }),
                    let first = code.utf8.first, first >= 97, first <= 122
                else {
                    throw ValidationError(field: field, "code \"\(code)\" must be lower-case ASCII letters, digits and _")
                }
                guard seen.insert(code).inserted else { throw ValidationError(field: field, "code \"\(code)\" appears twice") }
            }
        }
        try checkCodes(districts.map(\.code), "districts")
        try checkCodes(objectTypes.map(\.code), "object_types")
        try checkCodes(balanceHolders.map(\.code), "balance_holders")
        try checkCodes(statuses.map(\.code), "statuses", most: 16)
        let names = districts.flatMap { [$0.nameUk, $0.nameEn] } + objectTypes.flatMap { [$0.nameUk, $0.nameEn] }
            + balanceHolders.flatMap { [$0.nameUk, $0.nameEn] } + statuses.flatMap { [$0.nameUk, $0.nameEn] }
        if names.contains(where: { $0.isEmpty }) { throw ValidationError(field: "reference", "every entry needs a Ukrainian and an English name") }
        for district in districts where district.center.count != 2 {
            throw ValidationError(field: "districts", "center of \(district.code) must be [longitude, latitude]")
        }
        let types = Set(objectTypes.map(\.code))
        for holder in balanceHolders {
            guard !holder.objectTypes.isEmpty else { throw ValidationError(field: "balance_holders", "\(holder.code) fits no object type") }
            for type in holder.objectTypes where !types.contains(type) {
                throw ValidationError(field: "balance_holders", "\(holder.code) refers to unknown object type \"\(type)\"")
            }
        }
        for type in types where holders(for: type).isEmpty {
            throw ValidationError(field: "object_types", "\(type) has no balance holder")
        }
    }

    /// Checks every field of a draft and normalizes its phones; the first broken rule is thrown.
    public func validate(_ draft: ReportDraft) throws(ValidationError) -> ReportDraft {
        let (checked, problems) = check(draft, indexingPhones: false)
        if let first = problems.first { throw first }
        return checked
    }

    /// Checks every field of a draft and normalizes its phones, and lists every rule it
    /// breaks (a form hears of all its bad fields at once). With `indexingPhones`, a bad
    /// number is named by its place (`phones[2]`).
    public func check(_ draft: ReportDraft, indexingPhones: Bool = true) -> (draft: ReportDraft, problems: [ValidationError]) {
        var d = draft
        var problems: [ValidationError] = []
        func run(_ rule: () throws(ValidationError) -> Void) {
            do { try rule() } catch { problems.append(error) }
        }
        run { () throws(ValidationError) in
            if let id = d.id, !(1...ReportLimits.maxID).contains(id) {
                throw ValidationError(field: "id", "must be an integer from 1 to \(ReportLimits.maxID), got \(id)")
            }
        }
        run { () throws(ValidationError) in d.coordinate = try d.coordinate.validated() }
        run { () throws(ValidationError) in d.address = try Self.text(d.address, "address", max: ReportLimits.address) }
        run { () throws(ValidationError) in d.city = try Self.text(d.city, "city", max: ReportLimits.city) }
        run { () throws(ValidationError) in d.violator = try Self.optionalText(d.violator, "violator", max: ReportLimits.violator) }
        run { () throws(ValidationError) in d.comment = try Self.optionalText(d.comment, "comment", max: ReportLimits.comment, lines: true) }
        run { () throws(ValidationError) in try checkDistrict(d.district) }
        run { () throws(ValidationError) in try checkKind(d.objectType, holder: d.balanceHolder) }
        run { () throws(ValidationError) in
            if let status = d.status, !statuses.contains(where: { $0.code == status }) {
                throw ValidationError(field: "status", "unknown status \"\(status)\"; known: \(statuses.map(\.code).joined(separator: ", "))")
            }
        }
        if indexingPhones {
            var normalized: [String] = []
            for (i, text) in d.phones.enumerated() {
                run { () throws(ValidationError) in normalized.append(try Phone.normalize(text, field: "phones[\(i)]")) }
            }
            // The list's rules (repeats, 1 to 5) on the numbers in their written form: the
            // bare digits of an international number would not normalize again.
            if normalized.count == d.phones.count { run { () throws(ValidationError) in d.phones = try Phone.normalizeList(normalized.map(Phone.written)) } }
        } else {
            run { () throws(ValidationError) in d.phones = try Phone.normalizeList(d.phones) }
        }
        run { () throws(ValidationError) in
            func checkDate(_ field: String, _ date: Date?) throws(ValidationError) {
                if let date, !ReportLimits.dates.contains(date) {
                    throw ValidationError(field: field, "must be from 1970-01-01 to 2106-02-07, got \(date)")
                }
            }
            try checkDate("created_at", d.createdAt)
            try checkDate("updated_at", d.updatedAt)
            if let created = d.createdAt, let updated = d.updatedAt, updated < created {
                throw ValidationError(field: "updated_at", "must not be earlier than created_at")
            }
        }
        return (d, problems)
    }

    private func checkDistrict(_ code: String) throws(ValidationError) {
        guard districts.contains(where: { $0.code == code }) else {
            throw ValidationError(field: "district", "unknown district \"\(code)\"; known: \(districts.map(\.code).joined(separator: ", "))")
        }
    }

    /// The object type, and the balance holder that goes with it.
    private func checkKind(_ type: String, holder code: String) throws(ValidationError) {
        guard objectTypes.contains(where: { $0.code == type }) else {
            throw ValidationError(field: "object_type", "unknown object type \"\(type)\"; known: \(objectTypes.map(\.code).joined(separator: ", "))")
        }
        guard let holder = balanceHolders.first(where: { $0.code == code }) else {
            throw ValidationError(field: "balance_holder", "unknown balance holder \"\(code)\"")
        }
        guard holder.objectTypes.contains(type) else {
            throw ValidationError(field: "balance_holder", "\"\(code)\" does not maintain objects of type \"\(type)\"; for it use one of: \(holders(for: type).map(\.code).joined(separator: ", "))")
        }
    }

    private static func text(_ value: String, _ field: String, max: Int) throws(ValidationError) -> String {
        try checkLength(value, field, max: max)
        let trimmed = value.trimmingWhitespace
        guard !trimmed.isEmpty else { throw ValidationError(field: field, "must not be empty") }
        try checkText(trimmed, field, lines: false)
        return trimmed
    }

    /// A free text trimmed, nil when empty, checked as every text of a report is (see
    /// ``checkLength(_:_:max:)`` and ``checkText(_:_:lines:)``); notes are checked by it too.
    public static func optionalText(_ value: String?, _ field: String, max: Int, lines: Bool = false) throws(ValidationError) -> String? {
        guard let value else { return nil }
        try checkLength(value, field, max: max)
        let trimmed = value.trimmingWhitespace
        if trimmed.isEmpty { return nil }
        try checkText(trimmed, field, lines: lines)
        return trimmed
    }

    /// Limits count Unicode scalars (as SQLite's `length()` does) of the text as sent,
    /// surrounding white space included, as the OpenAPI document's `maxLength` counts
    /// (a text padded past it had been taken once trimmed: schemathesis found it).
    private static func checkLength(_ value: String, _ field: String, max: Int) throws(ValidationError) {
        // A scalar is one to four bytes of UTF-8: a text of at most `max` bytes needs no count.
        guard value.utf8.count > max else { return }
        let count = value.unicodeScalars.count
        guard count <= max else { throw ValidationError(field: field, "must be at most \(max) characters, got \(count)") }
    }

    /// Control characters are refused (a NUL would cut the text short in SQLite), but for
    /// line breaks and tabs where `lines` allows them.
    private static func checkText(_ text: String, _ field: String, lines: Bool) throws(ValidationError) {
        if hasNoRefusedScalar(text.utf8, lines: lines) { return }
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) {
                guard lines, scalar == "\n" || scalar == "\r" || scalar == "\t" else {
                    throw ValidationError(field: field, "must not contain control characters (found U+\(String(format: "%04X", scalar.value)))")
                }
            }
            // Not characters (XML cannot hold them: an Open311 answer would not parse).
            if scalar.value == 0xFFFE || scalar.value == 0xFFFF {
                throw ValidationError(field: field, "must not contain U+\(String(format: "%04X", scalar.value)), which is not a character")
            }
        }
    }

    /// True only when `checkText` lets the text through, read from its UTF-8 bytes without
    /// decoding it (every text of every imported report is checked): no byte below 0x20
    /// but the line breaks and tab `lines` allows, no DEL, no C1 control (`C2 80`–`C2 9F`),
    /// no U+FFFE or U+FFFF (`EF BF BE`, `EF BF BF`). C2 and EF are lead bytes, never
    /// continuation bytes, so a match that starts at one is one scalar's encoding and
    /// cannot straddle two. False (a refused sequence, or bytes not contiguous) sends the
    /// text through the scalar loop, which names what it found.
    static func hasNoRefusedScalar(_ utf8: String.UTF8View, lines: Bool) -> Bool {
        utf8.withContiguousStorageIfAvailable { bytes in
            var previous: UInt8 = 0, beforePrevious: UInt8 = 0
            for byte in bytes {
                if byte < 0x20 {
                    guard lines, byte == 0x0A || byte == 0x0D || byte == 0x09 else { return false }
                } else if byte == 0x7F || (previous == 0xC2 && byte < 0xA0 && byte >= 0x80)
                    || (beforePrevious == 0xEF && previous == 0xBF && byte >= 0xBE) {
                    return false
                }
                beforePrevious = previous
                previous = byte
            }
            return true
        } ?? false
    }
}

extension String {
    /// The string without leading and trailing white space (Unicode `White_Space`); the
    /// string itself, uncopied, when there is none, which is the usual case.
    var trimmingWhitespace: String {
        let scalars = unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, scalars[start].isWhitespace { start = scalars.index(after: start) }
        while end > start, scalars[scalars.index(before: end)].isWhitespace { end = scalars.index(before: end) }
        if start == scalars.startIndex && end == scalars.endIndex { return self }
        return String(scalars[start..<end])
    }
}

extension Unicode.Scalar {
    /// Unicode's `White_Space` property, answered from its (stable) list of 25 scalars
    /// rather than the property tables: every text of every imported report is trimmed.
    var isWhitespace: Bool {
        switch value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }
}
