import Foundation
import Geometry
import Interchange
import ReportModel
import Testing

/// One Feature per line: values, and each structural rule with its field and line.
@Suite struct FeatureReadingTests {
    /// The single record of a one-line sequence.
    func record(_ line: String) throws -> DraftRecord {
        let records = try readAll(line + "\n", .geojsonseq)
        try #require(records.count == 1)
        return records[0]
    }

    func error(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ValidationError {
        try #require(record(line).error, sourceLocation: sourceLocation)
    }

    @Test func minimalFeature() throws {
        let draft = try #require(record(featureLine()).value)
        #expect(draft == ReportDraft(
            id: 1, coordinate: Coordinate(longitude: 30.5, latitude: 50.4), address: "a", city: "c", district: "d",
            objectType: "o", balanceHolder: "b", phones: ["380671234567"]))
    }

    @Test func membersInAnyOrderWithWhitespaceAndUnknownMembers() throws {
        let text = """
            { "properties" : { "phones" : [ "067 123 45 67" , "+380 50 123 45 67" ], "balance_holder":"b", "x": {"deep":[1,[2,{"y":null}],"]"]},
              "object_type":"o","district":"d","city":"c","address":"a", "fill-color": "#ff0000", "id": 999 } ,
              "geometry" : { "coordinates" : [ -1.5e1 , 4.5E+1, 120.0 ], "type" : "Point", "crs": {} } , "bbox": [1,2,3,4],
              "id" : "0017", "type" : "Feature", "foreign": [true, false, null, -0.0, 1e-5] }
            """.replacingOccurrences(of: "\n", with: " ")
        let draft = try #require(record(text).value)
        #expect(draft.id == 17)
        #expect(draft.coordinate == Coordinate(longitude: -15, latitude: 45))
        #expect(draft.phones == ["067 123 45 67", "+380 50 123 45 67"])  // passed through, not normalized
        #expect(draft.address == "a")
    }

    @Test func stringEscapesAreDecoded() throws {
        let props = requiredProperties.replacingOccurrences(of: #""address":"a""#, with: #""addr\u0065ss":"\"q\" \\ \/ \b\f\n\r\t \u0416\u0457 \ud83c\uddfa\ud83c\udde6 é""#)
        let draft = try #require(record(featureLine(properties: props)).value)
        #expect(draft.address == "\"q\" \\ / \u{8}\u{C}\n\r\t Жї 🇺🇦 é")
    }

    @Test func optionalPropertiesEmptyOrNullBecomeNil() throws {
        let props = requiredProperties + #","violator":"","comment":null,"status":"","created_at":null,"updated_at":"""#
        let draft = try #require(record(featureLine(properties: props)).value)
        #expect(draft.violator == nil && draft.comment == nil && draft.status == nil)
        #expect(draft.createdAt == nil && draft.updatedAt == nil)
        let full = requiredProperties + #","violator":"V","comment":"C","status":"done","created_at":"2025-03-01T12:20:30.250+02:00","updated_at":"2025-03-01T10:20:30Z""#
        let filled = try #require(record(featureLine(properties: full)).value)
        #expect(filled.violator == "V" && filled.comment == "C" && filled.status == "done")
        #expect(filled.createdAt == march1.addingTimeInterval(0.25))
        #expect(filled.updatedAt == march1)
    }

    @Test(arguments: [
        ("17", Int64(17)), ("\"17\"", 17), ("null", nil), ("9223372036854775807", Int64.max),
    ])
    func idsAsNumbersOrStrings(id: String, expected: Int64?) throws {
        #expect(try record(featureLine(id: id)).value?.id == expected)
        let missing = featureLine().replacingOccurrences(of: #""id":1,"#, with: "")
        #expect(try record(missing).value?.id == nil)
    }

    @Test(arguments: ["0", "-3", "1.5", "1e3", "\"abc\"", "\"\"", "\"-1\"", "\"1.0\"", "true", "[1]", "9223372036854775808", "\"99999999999999999999\""])
    func badIds(id: String) throws {
        let error = try error(featureLine(id: id))
        #expect(error.field == "id")
        #expect(error.message.hasPrefix("must be a positive integer"))
    }

    @Test(arguments: [
        (#"{"type":"LineString","coordinates":[[1,2],[3,4]]}"#, "must be a Point"),
        ("null", "must be a Point"),
        ("[30.5,50.4]", "must be a Point object"),
        (#"{"coordinates":[1,2]}"#, "type is missing"),
        (#"{"type":"Point"}"#, "no coordinates"),
        (#"{"type":"Point","coordinates":[1]}"#, "two numbers"),
        (#"{"type":"Point","coordinates":[1,2,3,4]}"#, "two numbers"),
        (#"{"type":"Point","coordinates":["30.5","50.4"]}"#, "[longitude, latitude]"),
        (#"{"type":"Point","coordinates":[1,null]}"#, "[longitude, latitude]"),
        (#"{"type":"Point","coordinates":{"x":1}}"#, "[longitude, latitude]"),
        (#"{"type":"Point","coordinates":[1e999,2]}"#, "finite"),
    ])
    func badGeometry(geometry: String, message: String) throws {
        let error = try error(featureLine(geometry: geometry))
        #expect(error.field == "geometry")
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func missingGeometry() throws {
        let text = featureLine().replacingOccurrences(of: #""geometry":{"type":"Point","coordinates":[30.5,50.4]},"#, with: "")
        #expect(try error(text).field == "geometry")
    }

    @Test(arguments: ["address", "city", "district", "object_type", "balance_holder", "phones"])
    func missingRequiredProperty(name: String) throws {
        let error = try error(featureLine(properties: properties(setting: name, to: nil)))
        #expect(error.field == name)
        #expect(error.message.hasPrefix("is required"))
        let null = try self.error(featureLine(properties: properties(setting: name, to: "null")))
        #expect(null.field == name)
        #expect(null.message.hasPrefix("is required"))
    }

    @Test(arguments: [
        ("city", "5", "must be a string, got a number"),
        ("district", #"{"code":"d"}"#, "must be a string, got an object"),
        ("violator", #"["x"]"#, "must be a string or null, got an array"),
        ("status", "true", "must be a string or null, got a boolean"),
        ("phones", #""380671234567""#, "must be an array of strings, got a string"),
        ("phones", #"["380671234567",380501234567]"#, "must be an array of strings; item 2 is a number"),
        ("created_at", #""yesterday""#, "must be an RFC 3339 date-time such as 2025-03-01T10:20:30Z, got \"yesterday\""),
        ("updated_at", #""2025-03-01T10:20:30""#, "must be an RFC 3339 date-time"),
        ("created_at", "1740824430", "must be a string or null, got a number"),
    ])
    func wrongPropertyTypes(name: String, value: String, message: String) throws {
        let error = try error(featureLine(properties: properties(setting: name, to: value)))
        #expect(error.field == name)
        #expect(error.message.hasPrefix(message), "\(error.message)")
    }

    @Test func propertiesMustBeAnObject() throws {
        let missing = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]}}"#
        #expect(try error(missing).field == "properties")
        let null = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":null}"#
        #expect(try error(null).field == "properties")
        let array = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":[]}"#
        #expect(try error(array).message == "must be an object, got an array")
    }

    @Test(arguments: [
        (#"{"type":"Point","coordinates":[1,2]}"#, "type", #"must be "Feature", got "Point""#),
        (#"{"geometry":null}"#, "type", "is missing"),
        ("[1,2]", "line", "must be a GeoJSON Feature object, got an array"),
        ("\"Feature\"", "line", "must be a GeoJSON Feature object, got a string"),
        ("42", "line", "must be a GeoJSON Feature object, got a number"),
    ])
    func notAFeature(text: String, field: String, message: String) throws {
        let error = try error(text)
        #expect(error.field == field)
        #expect(error.message.hasPrefix(message))
    }

    /// Checks are made in a fixed order, whatever the order of the members.
    @Test func firstBrokenRuleInVocabularyOrder() throws {
        let text = #"{"properties":{"phones":5,"city":5},"geometry":null,"id":-1,"type":"Feature"}"#
        #expect(try error(text).field == "id")
        let noId = #"{"properties":{"phones":5,"city":5},"geometry":null,"type":"Feature"}"#
        #expect(try error(noId).field == "geometry")
        let point = #"{"properties":{"phones":5,"city":5},"geometry":{"type":"Point","coordinates":[1,2]},"type":"Feature"}"#
        #expect(try error(point).field == "address")
    }

    @Test(arguments: [
        #"{"type":"Feature","#,
        #"{"type":"Feature",}"#,
        #"{"type":"Feature" "id":1}"#,
        #"{"type":'Feature'}"#,
        #"{type:"Feature"}"#,
        #"{"type":"Feature","id":01}"#,
        #"{"type":"Feature","id":1.}"#,
        #"{"type":"Feature","id":-}"#,
        #"{"type":"Feature","id":+1}"#,
        #"{"type":"Feature","x":tru}"#,
        #"{"type":"Feature","x":NaN}"#,
        #"{"type":"Feature","x":"\x"}"#,
        #"{"type":"Feature","x":"\u12"}"#,
        #"{"type":"Feature","properties":{"city":"\ud800"}}"#,
        #"{"type":"Feature","properties":{"city":"\udc00\ud800"}}"#,
        #"{"type":"Feature","properties":{"city":"\ud800\u0041"}}"#,
        #"{"type":"Feature","properties":{"address":"\ud83c"}}"#,
        #"{"type":"Feature","x":[1,2,]}"#,
        #"{"type":"Feature","x":[1 2]}"#,
        #"{"type":"Feature","x":{"a"}}"#,
        #"{"type":"Feature"} {"type":"Feature"}"#,
        #"{"type":"Feature"}]"#,
        "{\"type\":\"Feature\",\"x\":\"tab\there\"}",
    ])
    func invalidJSON(text: String) throws {
        let error = try error(text)
        #expect(error.field == "line", "\(text)")
        #expect(error.message.hasPrefix("is not valid JSON"), "\(error.message)")
    }

    @Test func invalidUTF8IsRejected() throws {
        for bad: [UInt8] in [[0xFF], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] {
            var bytes = Array(#"{"type":"Feature","properties":{"address":"x"#.utf8)
            bytes += bad + Array(#""}}"#.utf8) + [0x0A]
            let records = try readAll(bytes: bytes, .geojsonseq)
            #expect(records.first?.error?.field == "line")
            #expect(records.first?.error?.message.contains("UTF-8") == true)
        }
    }

    @Test func deepNestingIsRefusedNotCrashed() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let error = try error(#"{"type":"Feature","x":\#(deep)}"#)
        #expect(error.message.contains("nested too deeply"))
    }

    @Test func syntaxErrorsSayWhere() throws {
        let error = try error(#"{"type":"Feature","id":1,}"#)
        #expect(error.message == "is not valid JSON: expected a member name, found '}' (at byte 26)")
    }
}
