import Foundation
import Geometry
import ReportModel

/// Turns the bytes of one GeoJSON Feature into a draft, or into the first rule it breaks.
///
/// The whole text is parsed first, so a syntax error anywhere wins (field `syntaxField`:
/// `line` or `feature`); then the members are checked in a fixed order whatever their
/// order in the text: `type`, `id`, `geometry`, `properties`, then each property in the
/// vocabulary's order. Unknown members and properties are validated as JSON and ignored.
struct FeatureDecoder {
    /// The field named when the text is not valid JSON.
    let syntaxField: String

    func decode(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Result<ReportDraft, ValidationError> {
        var cursor = JSONCursor(base, start: start, end: end)
        var fields = Fields()
        do {
            cursor.skipSpace()
            guard cursor.peek() == UInt8(ascii: "{") else {
                let kind = cursor.kindOfValue()
                try cursor.skipValue()
                try Self.finish(&cursor)
                return .failure(ValidationError(field: syntaxField, "must be a GeoJSON Feature object, got \(kind)"))
            }
            cursor.i += 1
            if try cursor.firstMember() {
                repeat {
                    let name = try cursor.memberName()
                    switch try Self.topKey(cursor, name) {
                    case .type: fields.type = try Self.textSlot(&cursor)
                    case .id: fields.id = try Self.idValue(&cursor)
                    case .geometry: fields.geometry = try Self.geometry(&cursor)
                    case .properties: try Self.properties(&cursor, &fields)
                    case nil: try cursor.skipValue(depth: 1)
                    }
                } while try cursor.nextMember()
            }
            try Self.finish(&cursor)
        } catch {
            let offset = error.offset - start + 1
            return .failure(ValidationError(field: syntaxField, "is not valid JSON: \(error.message) (at byte \(offset))"))
        }
        return fields.draft()
    }

    private static func finish(_ cursor: inout JSONCursor) throws(JSONSyntaxError) {
        cursor.skipSpace()
        guard cursor.atEnd else { throw cursor.unexpected("the end of the Feature") }
    }

    // MARK: Member names

    enum TopKey { case type, id, geometry, properties }

    private static func topKey(_ c: JSONCursor, _ name: (start: Int, end: Int, escaped: Bool)) throws(JSONSyntaxError) -> TopKey? {
        if name.escaped {
            switch try c.decodeString(name.start, name.end, true) {
            case "type": return .type
            case "id": return .id
            case "geometry": return .geometry
            case "properties": return .properties
            default: return nil
            }
        }
        switch name.end - name.start {
        case 2: return c.bytesEqual(name.start, name.end, "id") ? .id : nil
        case 4: return c.bytesEqual(name.start, name.end, "type") ? .type : nil
        case 8: return c.bytesEqual(name.start, name.end, "geometry") ? .geometry : nil
        case 10: return c.bytesEqual(name.start, name.end, "properties") ? .properties : nil
        default: return nil
        }
    }

    enum Property: Int, CaseIterable {
        case address, city, district, objectType, balanceHolder, violator, phones, comment, status, createdAt, updatedAt

        var name: String {
            switch self {
            case .address: "address"
            case .city: "city"
            case .district: "district"
            case .objectType: "object_type"
            case .balanceHolder: "balance_holder"
            case .violator: "violator"
            case .phones: "phones"
            case .comment: "comment"
            case .status: "status"
            case .createdAt: "created_at"
            case .updatedAt: "updated_at"
            }
        }

        static let byName: [String: Property] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })
    }

    private static func propertyKey(_ c: JSONCursor, _ name: (start: Int, end: Int, escaped: Bool)) throws(JSONSyntaxError) -> Property? {
        if name.escaped { return Property.byName[try c.decodeString(name.start, name.end, true)] }
        let (s, e) = (name.start, name.end)
        switch e - s {
        case 4: return c.bytesEqual(s, e, "city") ? .city : nil
        case 6:
            if c.bytesEqual(s, e, "phones") { return .phones }
            return c.bytesEqual(s, e, "status") ? .status : nil
        case 7:
            if c.bytesEqual(s, e, "address") { return .address }
            return c.bytesEqual(s, e, "comment") ? .comment : nil
        case 8:
            if c.bytesEqual(s, e, "district") { return .district }
            return c.bytesEqual(s, e, "violator") ? .violator : nil
        case 10:
            if c.bytesEqual(s, e, "created_at") { return .createdAt }
            return c.bytesEqual(s, e, "updated_at") ? .updatedAt : nil
        case 11: return c.bytesEqual(s, e, "object_type") ? .objectType : nil
        case 14: return c.bytesEqual(s, e, "balance_holder") ? .balanceHolder : nil
        default: return nil
        }
    }

    // MARK: Values

    /// A member as read: absent, null, a string, or a value of another kind.
    enum Slot {
        case missing
        case null
        case text(String)
        case other(kind: String)
    }

    private static func textSlot(_ c: inout JSONCursor) throws(JSONSyntaxError) -> Slot {
        switch c.peek() {
        case UInt8(ascii: "\""): return .text(try c.parseString())
        case UInt8(ascii: "n") where c.skipNull(): return .null
        default:
            let kind = c.kindOfValue()
            try c.skipValue(depth: 2)
            return .other(kind: kind)
        }
    }

    private static func idValue(_ c: inout JSONCursor) throws(JSONSyntaxError) -> Result<Int64?, ValidationError> {
        switch c.peek() {
        case UInt8(ascii: "n") where c.skipNull():
            return .success(nil)
        case UInt8(ascii: "\""):
            let (s, e, escaped) = try c.scanString()
            if !escaped, let id = positiveInteger(c.base + s, e - s) { return .success(id) }
            let text = try c.decodeString(s, e, escaped)
            return .failure(ValidationError(field: "id", "must be a positive integer, got \"\(text.prefix(40))\""))
        case let b? where b == UInt8(ascii: "-") || b &- 48 < 10:
            let number = try c.parseNumber()
            if number.isInteger, let id = positiveInteger(c.base + number.start, number.end - number.start) {
                return .success(id)
            }
            let text = String(decoding: UnsafeBufferPointer(start: c.base + number.start, count: number.end - number.start), as: UTF8.self)
            return .failure(ValidationError(field: "id", "must be a positive integer, got \(text.prefix(40))"))
        default:
            let kind = c.kindOfValue()
            try c.skipValue(depth: 1)
            return .failure(ValidationError(field: "id", "must be a positive integer, got \(kind)"))
        }
    }

    private static func geometry(_ c: inout JSONCursor) throws(JSONSyntaxError) -> Result<Coordinate, ValidationError> {
        guard c.peek() == UInt8(ascii: "{") else {
            let kind = c.kindOfValue()
            try c.skipValue(depth: 1)
            return .failure(ValidationError(field: "geometry", "must be a Point object with coordinates [longitude, latitude], got \(kind)"))
        }
        c.i += 1
        var type = Slot.missing
        var numbers = (0.0, 0.0)
        var numberCount = 0
        var coordinates = false
        var coordinatesKind: String? = nil
        if try c.firstMember() {
            repeat {
                let name = try c.memberName()
                let key = name.escaped ? try c.decodeString(name.start, name.end, true) : nil
                if key == "type" || (key == nil && c.bytesEqual(name.start, name.end, "type")) {
                    type = try textSlot(&c)
                } else if key == "coordinates" || (key == nil && c.bytesEqual(name.start, name.end, "coordinates")) {
                    coordinates = true
                    numberCount = 0
                    coordinatesKind = nil
                    guard c.peek() == UInt8(ascii: "[") else {
                        coordinatesKind = c.kindOfValue()
                        try c.skipValue(depth: 2)
                        continue
                    }
                    c.i += 1
                    c.skipSpace()
                    if c.peek() == UInt8(ascii: "]") {
                        c.i += 1
                        continue
                    }
                    while true {
                        if let b = c.peek(), b == UInt8(ascii: "-") || b &- 48 < 10 {
                            let value = try c.parseNumber().value
                            if numberCount == 0 { numbers.0 = value } else if numberCount == 1 { numbers.1 = value }
                            numberCount += 1
                        } else {
                            coordinatesKind = "an array holding \(c.kindOfValue())"
                            try c.skipValue(depth: 3)
                        }
                        guard try c.nextElement(closing: UInt8(ascii: "]")) else { break }
                    }
                } else {
                    try c.skipValue(depth: 2)
                }
            } while try c.nextMember()
        }
        switch type {
        case .text("Point"): break
        case .text(let other):
            return .failure(ValidationError(field: "geometry", "must be a Point, got \"\(other.prefix(40))\""))
        case .missing: return .failure(ValidationError(field: "geometry", "must be a Point: its type is missing"))
        case .null: return .failure(ValidationError(field: "geometry", "must be a Point, got type null"))
        case .other(let kind): return .failure(ValidationError(field: "geometry", "must be a Point, got type \(kind)"))
        }
        guard coordinates else {
            return .failure(ValidationError(field: "geometry", "the Point has no coordinates; expected [longitude, latitude]"))
        }
        if let coordinatesKind {
            return .failure(ValidationError(field: "geometry", "coordinates must be [longitude, latitude], got \(coordinatesKind)"))
        }
        guard numberCount == 2 || numberCount == 3 else {
            return .failure(ValidationError(field: "geometry", "coordinates must be two numbers [longitude, latitude], got \(numberCount)"))
        }
        guard numbers.0.isFinite, numbers.1.isFinite else {
            return .failure(ValidationError(field: "geometry", "coordinates must be finite numbers"))
        }
        return .success(Coordinate(longitude: numbers.0, latitude: numbers.1))
    }

    private static func properties(_ c: inout JSONCursor, _ fields: inout Fields) throws(JSONSyntaxError) {
        fields.properties = .missing
        fields.clearProperties()
        guard c.peek() == UInt8(ascii: "{") else {
            if c.skipNull() {
                fields.properties = .null
            } else {
                fields.properties = .other(kind: c.kindOfValue())
                try c.skipValue(depth: 1)
            }
            return
        }
        fields.properties = .text("")
        c.i += 1
        guard try c.firstMember() else { return }
        repeat {
            let name = try c.memberName()
            guard let property = try propertyKey(c, name) else {
                try c.skipValue(depth: 2)
                continue
            }
            if property == .phones {
                fields.phones = try phones(&c)
            } else {
                fields[property] = try textSlot(&c)
            }
        } while try c.nextMember()
    }

    private static func phones(_ c: inout JSONCursor) throws(JSONSyntaxError) -> Result<[String], ValidationError>? {
        guard c.peek() == UInt8(ascii: "[") else {
            if c.skipNull() { return nil }
            let kind = c.kindOfValue()
            try c.skipValue(depth: 2)
            return .failure(ValidationError(field: "phones", "must be an array of strings, got \(kind)"))
        }
        c.i += 1
        c.skipSpace()
        var list: [String] = []
        var problem: ValidationError? = nil
        if c.peek() == UInt8(ascii: "]") {
            c.i += 1
            return .success(list)
        }
        while true {
            if c.peek() == UInt8(ascii: "\"") {
                list.append(try c.parseString())
            } else {
                let kind = c.kindOfValue()
                try c.skipValue(depth: 3)
                if problem == nil {
                    problem = ValidationError(field: "phones", "must be an array of strings; item \(list.count + 1) is \(kind)")
                }
                list.append("")
            }
            guard try c.nextElement(closing: UInt8(ascii: "]")) else { break }
        }
        if let problem { return .failure(problem) }
        return .success(list)
    }

    // MARK: Checking

    struct Fields {
        var type = Slot.missing
        var id: Result<Int64?, ValidationError> = .success(nil)
        var geometry: Result<Coordinate, ValidationError>? = nil
        var properties = Slot.missing
        var phones: Result<[String], ValidationError>? = nil
        var address = Slot.missing, city = Slot.missing, district = Slot.missing, objectType = Slot.missing
        var balanceHolder = Slot.missing, violator = Slot.missing, comment = Slot.missing, status = Slot.missing
        var createdAt = Slot.missing, updatedAt = Slot.missing

        mutating func clearProperties() {
            self = Fields(type: type, id: id, geometry: geometry, properties: properties)
        }

        subscript(property: Property) -> Slot {
            get {
                switch property {
                case .address: address
                case .city: city
                case .district: district
                case .objectType: objectType
                case .balanceHolder: balanceHolder
                case .violator: violator
                case .phones: .missing
                case .comment: comment
                case .status: status
                case .createdAt: createdAt
                case .updatedAt: updatedAt
                }
            }
            set {
                switch property {
                case .address: address = newValue
                case .city: city = newValue
                case .district: district = newValue
                case .objectType: objectType = newValue
                case .balanceHolder: balanceHolder = newValue
                case .violator: violator = newValue
                case .phones: break
                case .comment: comment = newValue
                case .status: status = newValue
                case .createdAt: createdAt = newValue
                case .updatedAt: updatedAt = newValue
                }
            }
        }

        func draft() -> Result<ReportDraft, ValidationError> {
            switch type {
            case .text("Feature"): break
            case .text(let other):
                return .failure(ValidationError(field: "type", "must be \"Feature\", got \"\(other.prefix(40))\""))
            case .missing:
                return .failure(ValidationError(field: "type", "is missing; a GeoJSON Feature has \"type\": \"Feature\""))
            case .null: return .failure(ValidationError(field: "type", "must be \"Feature\", got null"))
            case .other(let kind): return .failure(ValidationError(field: "type", "must be \"Feature\", got \(kind)"))
            }
            let id: Int64?
            switch self.id {
            case .success(let value): id = value
            case .failure(let error): return .failure(error)
            }
            let coordinate: Coordinate
            switch geometry {
            case .success(let value)?: coordinate = value
            case .failure(let error)?: return .failure(error)
            case nil:
                return .failure(ValidationError(field: "geometry", "is missing; expected a Point with coordinates [longitude, latitude]"))
            }
            switch properties {
            case .text: break
            case .missing, .null:
                return .failure(ValidationError(field: "properties", "are missing; expected an object with address, city, district, object_type, balance_holder and phones"))
            case .other(let kind):
                return .failure(ValidationError(field: "properties", "must be an object, got \(kind)"))
            }
            do throws(ValidationError) {
                let address = try required(.address)
                let city = try required(.city)
                let district = try required(.district)
                let objectType = try required(.objectType)
                let balanceHolder = try required(.balanceHolder)
                let violator = try optional(.violator)
                let phones: [String]
                switch self.phones {
                case .success(let list)?: phones = list
                case .failure(let error)?: throw error
                case nil: throw ValidationError(field: "phones", "is required: an array of phone numbers as strings")
                }
                let comment = try optional(.comment)
                let status = try optional(.status)
                let createdAt = try date(.createdAt)
                let updatedAt = try date(.updatedAt)
                return .success(ReportDraft(
                    id: id, coordinate: coordinate, address: address, city: city, district: district,
                    objectType: objectType, balanceHolder: balanceHolder, violator: violator, phones: phones,
                    comment: comment, status: status, createdAt: createdAt, updatedAt: updatedAt))
            } catch {
                return .failure(error)
            }
        }

        private func required(_ property: Property) throws(ValidationError) -> String {
            switch self[property] {
            case .text(let value): return value
            case .missing, .null: throw ValidationError(field: property.name, "is required")
            case .other(let kind): throw ValidationError(field: property.name, "must be a string, got \(kind)")
            }
        }

        private func optional(_ property: Property) throws(ValidationError) -> String? {
            switch self[property] {
            case .text(let value): return value.isEmpty ? nil : value
            case .missing, .null: return nil
            case .other(let kind): throw ValidationError(field: property.name, "must be a string or null, got \(kind)")
            }
        }

        private func date(_ property: Property) throws(ValidationError) -> Date? {
            guard let text = try optional(property) else { return nil }
            guard let date = RFC3339.date(from: text) else { throw badDate(property.name, text) }
            return date
        }
    }
}

func badDate(_ field: String, _ text: String) -> ValidationError {
    ValidationError(field: field, "must be an RFC 3339 date-time such as 2025-03-01T10:20:30Z, got \"\(text.prefix(40))\"")
}

/// A positive Int64 written as ASCII digits only, or nil.
func positiveInteger(_ p: UnsafePointer<UInt8>, _ count: Int) -> Int64? {
    guard count > 0, count <= 19 else { return nil }
    var value: Int64 = 0
    for k in 0..<count {
        let d = p[k] &- 48
        guard d < 10 else { return nil }
        let (times10, o1) = value.multipliedReportingOverflow(by: 10)
        let (sum, o2) = times10.addingReportingOverflow(Int64(d))
        guard !o1, !o2 else { return nil }
        value = sum
    }
    return value > 0 ? value : nil
}
