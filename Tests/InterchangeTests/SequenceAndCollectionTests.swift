import Foundation
import Geometry
import Interchange
import ReportModel
import Testing

@Suite struct SequenceTests {
    @Test func lineDelimitedWithBlankLinesCRLFAndErrors() throws {
        let text = featureLine(id: "1") + "\r\n\r\n   \n" + #"{"type":"Feature","# + "\r\n" + featureLine(id: "\"4\"") + "\n[]\n" + featureLine(id: "6")
        let records = try readAll(text, .geojsonseq)
        #expect(records.map(\.location) == [.line(1), .line(4), .line(5), .line(6), .line(7)])
        #expect(records.map { $0.value?.id } == [1, nil, 4, nil, 6])
        #expect(records[1].error?.field == "line")
        #expect(records[3].error?.field == "line")
        #expect(RecordIssue(location: records[1].location, error: records[1].error!).description.hasPrefix("line 4: line: is not valid JSON"))
    }

    @Test func rfc8142RecordSeparated() throws {
        let pretty = """
            {
              "type": "Feature", "id": 2,
              "geometry": {"type": "Point", "coordinates": [1, 2]},
              "properties": {\(requiredProperties)}
            }
            """
        let text = "\u{1E}" + featureLine(id: "1") + "\n\u{1E}" + pretty + "\n\u{1E}{\"type\":\"Feature\"\n\u{1E}\u{1E}\n\u{1E}" + featureLine(id: "4") + "\n"
        let records = try readAll(text, .geojsonseq)
        #expect(records.map(\.location) == [.line(1), .line(2), .line(7), .line(9)])
        #expect(records.map { $0.value?.id } == [1, 2, nil, 4])
        #expect(records[2].error?.field == "line")
        // Detected without a format, too.
        #expect(try readAll(text).count == 4)
    }

    @Test func emptySequenceHasNoRecords() throws {
        #expect(try readAll("", .geojsonseq).isEmpty)
        #expect(try readAll("\n\n  \r\n", .geojsonseq).isEmpty)
        #expect(try readAll("\u{1E}\n\u{1E}", .geojsonseq).isEmpty)
    }

    @Test func byteOrderMarkIsSkipped() throws {
        let records = try readAll("\u{FEFF}" + featureLine() + "\n", .geojsonseq)
        #expect(records.first?.value?.id == 1)
    }
}

@Suite struct CollectionTests {
    func collection(_ features: [String], before: String = "", after: String = "") -> String {
        "{\"type\":\"FeatureCollection\"\(before),\"features\":[\n" + features.joined(separator: ",\n") + "\n]\(after)}"
    }

    @Test func featuresAreNumbered() throws {
        let text = collection([featureLine(id: "1"), #"{"type":"Feature","id":2,"x":[1,]}"#, #"{"type":"Point"}"#, "null", featureLine(id: "5")])
        let records = try readAll(text, .geojson)
        #expect(records.map(\.location) == (1...5).map { .feature($0) })
        #expect(records.map { $0.value?.id } == [1, nil, nil, nil, 5])
        #expect(records[1].error?.field == "feature")
        #expect(records[1].error?.message.hasPrefix("is not valid JSON") == true)
        #expect(records[2].error?.field == "type")
        #expect(records[3].error == ValidationError(field: "feature", "must be a GeoJSON Feature object, got null"))
    }

    @Test func foreignMembersBeforeAndAfterTheFeatures() throws {
        let text = collection(
            [featureLine()], before: #","name":"export","crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:OGC:1.3:CRS84"}},"bbox":[1,2,3,4]"#,
            after: #","numberMatched":1,"links":[{"href":"x]}"}]"#)
        #expect(try readAll(text, .geojson).count == 1)
    }

    @Test func typeMayComeAfterTheFeatures() throws {
        let text = #"{"features":[\#(featureLine()),\#(featureLine(id: "2"))],"type":"FeatureCollection"}"#
        #expect(try readAll(text).map { $0.value?.id } == [1, 2])
        let wrong = #"{"features":[\#(featureLine())],"type":"GeometryCollection"}"#
        #expect(fileError(wrong, .geojson)?.message.contains("GeometryCollection") == true)
    }

    @Test func emptyCollection() throws {
        #expect(try readAll(#"{"type":"FeatureCollection","features":[]}"#, .geojson).isEmpty)
        #expect(try readAll("\u{FEFF} {\"type\":\"FeatureCollection\",\"features\":[ ] } \n", .geojson).isEmpty)
    }

    @Test(arguments: [
        ("", "is empty"),
        ("   ", "is empty"),
        ("[]", "the top-level JSON value is an array"),
        ("\"x\"", "the top-level JSON value is a string"),
        ("{}", "the top-level object is empty"),
        (#"{"type":"Feature","geometry":null,"properties":{}}"#, "holds a single Feature"),
        (#"{"type":"FeatureCollection"}"#, "without a features array"),
        (#"{"type":"FeatureCollection","features":{}}"#, "features must be an array"),
        (#"{"type":"Topology","features":[]}"#, "its type is \"Topology\""),
        (#"{"name":"x","features":[]}"#, "has no type"),
        (#"{"type":"FeatureCollection" "features":[]}"#, "is not valid JSON"),
        (#"{"type":"FeatureCollection","features":[]"#, "after the features array"),
        (#"{"type":"FeatureCollection","features":[]}}"#, "after the features array"),
        (#"{"type":"FeatureCollection","features":[],}"#, "after the features array"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature"},]}"#, "a ',' after its last feature"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature"} {"type":"Feature"}]}"#, "broken after feature 1"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature"]}"#, "brackets of feature 1 do not match"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature"}"#, "ends inside the features array"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","#, "ends inside feature 1"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feat"#, "ends inside a string"),
    ])
    func fileLevelErrors(text: String, message: String) throws {
        let error = try #require(fileError(text, .geojson))
        #expect(error.field == "file")
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test func brokenArrayReturnsTheFeaturesBeforeTheBreakThenThrows() throws {
        let text = collection([featureLine(id: "1"), featureLine(id: "2"), featureLine(id: "3")])
        let truncated = String(text.prefix(text.count - 40))
        var reader = try ReportReader(data: Array(truncated.utf8), format: .geojson)
        let batch = try #require(try reader.next())
        #expect(batch.records.map { $0.value?.id } == [1, 2])
        let error = #expect(throws: ValidationError.self) { try reader.next() }
        #expect(error?.field == "file")
        #expect(error?.message.contains("inside a string in feature 3") == true)
        #expect(error?.message.hasSuffix("(line 4)") == true)
        #expect(try reader.next() == nil)
    }
}
