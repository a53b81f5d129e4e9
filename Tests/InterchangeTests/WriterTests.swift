import Foundation
import Geometry
import Interchange
import ReportModel
import Testing

@Suite struct WriterTests {
    static let trickyFeature =
        #"{"type":"Feature","id":42,"geometry":{"type":"Point","coordinates":[30.5234,50.4501]},"properties":{"#
        + #""address":"вул. Хрещатик, 22","city":"Київ","district":"shevchenkivskyi","object_type":"lamp_post","#
        + #""balance_holder":"kyivmisksvitlo","violator":"ТОВ \"Ромашка\"","phones":["380671234567","380501234567"],"#
        + #""comment":"back\\slash\tTab\nnew line\u0001","status":"new","created_at":"2025-03-01T10:20:30Z","#
        + #""updated_at":"2025-03-02T10:20:30.123Z"}}"#

    static let plainFeature =
        #"{"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[-0.5,51]},"properties":{"#
        + #""address":"1 Main St","city":"London","district":"podilskyi","object_type":"fence","#
        + #""balance_holder":"kyivavtodor","violator":null,"phones":["380441234567"],"comment":null,"#
        + #""status":"in_progress","created_at":"2025-03-01T10:20:30Z","updated_at":"2025-03-01T10:20:30Z"}}"#

    @Test func featureIsOneCompactLine() {
        #expect(GeoJSON.feature(tricky) == Self.trickyFeature)
        #expect(GeoJSON.feature(plain) == Self.plainFeature)
    }

    @Test func featureIsJSONThatFoundationReadsBack() throws {
        let object = try JSONSerialization.jsonObject(with: Data(GeoJSON.feature(tricky).utf8)) as? [String: Any]
        let properties = object?["properties"] as? [String: Any]
        #expect(properties?["comment"] as? String == tricky.comment)
        #expect(properties?["violator"] as? String == tricky.violator)
        #expect(properties?["address"] as? String == tricky.address)
    }

    @Test func everyControlCharacterIsEscaped() throws {
        let text = String(decoding: (0..<0x20).map { UInt8($0) } + Array("\"\\/\u{7F}é€😀".utf8), as: UTF8.self)
        let json = GeoJSON.string(text)
        #expect(json.hasPrefix(#""\u0000\u0001"#))
        #expect(json.contains(#"\b\t\n\u000b\f\r\u000e"#))
        #expect(json.hasSuffix(#"\u001f\"\\/"# + "\u{7F}é€😀\""))
        #expect(!json.utf8.dropFirst().dropLast().contains { $0 < 0x20 })
        let decoded = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as? String
        #expect(decoded == text)
    }

    @Test func coordinatesHaveAtMostSixDecimals() {
        #expect(GeoJSON.degrees(30.523412) == "30.523412")
        #expect(GeoJSON.degrees(30.5234124) == "30.523412")
        #expect(GeoJSON.degrees(30.5234126) == "30.523413")
        #expect(GeoJSON.degrees(-74.0060) == "-74.006")
        #expect(GeoJSON.degrees(180) == "180")
        #expect(GeoJSON.degrees(-180) == "-180")
        #expect(GeoJSON.degrees(0.000001) == "0.000001")
        #expect(GeoJSON.degrees(-0.0000004) == "0")
        #expect(GeoJSON.degrees(0) == "0")
        #expect(GeoJSON.degrees(-0.0) == "0")
        #expect(GeoJSON.degrees(12.9999999) == "13")
        #expect(GeoJSON.degrees(.nan) == "null")
    }

    @Test func featureCollectionWithMembers() {
        let text = ReportWriter.encode([tricky, plain], format: .geojson, members: [("numberMatched", "12"), ("title", GeoJSON.string("Звіт"))])
        #expect(text == #"{"type":"FeatureCollection","numberMatched":12,"title":"Звіт","features":["# + "\n"
            + Self.trickyFeature + ",\n" + Self.plainFeature + "\n]}\n")
    }

    @Test func membersAtTheEnd() {
        var writer = ReportWriter(format: .geojson)
        writer.begin()
        writer.write(plain)
        writer.end(members: [("numberReturned", "1"), ("links", "[]")])
        let text = String(decoding: writer.takeOutput(), as: UTF8.self)
        #expect(text == #"{"type":"FeatureCollection","features":["# + "\n" + Self.plainFeature + "\n" + #"],"numberReturned":1,"links":[]}"# + "\n")
        #expect(writer.count == 1)
        #expect(writer.pendingByteCount == 0)
    }

    @Test func emptyOutputs() {
        #expect(ReportWriter.encode([], format: .geojson) == #"{"type":"FeatureCollection","features":[]}"# + "\n")
        #expect(ReportWriter.encode([], format: .geojsonseq) == "")
        #expect(ReportWriter.encode([], format: .csv) == CSV.header)
    }

    @Test func sequenceIsOneFeaturePerLine() {
        #expect(ReportWriter.encode([tricky, plain], format: .geojsonseq) == Self.trickyFeature + "\n" + Self.plainFeature + "\n")
    }

    @Test func csvQuotesWhatNeedsQuoting() {
        #expect(CSV.header == "id,longitude,latitude,address,city,district,object_type,balance_holder,violator,phones,comment,status,created_at,updated_at\r\n")
        #expect(CSV.row(tricky) == "42,30.5234,50.4501,\"вул. Хрещатик, 22\",Київ,shevchenkivskyi,lamp_post,kyivmisksvitlo,\"ТОВ \"\"Ромашка\"\"\",380671234567;380501234567,\"back\\slash\tTab\nnew line\u{1}\",new,2025-03-01T10:20:30Z,2025-03-02T10:20:30.123Z\r\n")
        #expect(CSV.row(plain) == "7,-0.5,51,1 Main St,London,podilskyi,fence,kyivavtodor,,380441234567,,in_progress,2025-03-01T10:20:30Z,2025-03-01T10:20:30Z\r\n")
        #expect(ReportWriter.encode([plain], format: .csv) == CSV.header + CSV.row(plain))
    }

    @Test func outputCanBeDrainedInChunks() {
        let reports = sampleReports(300)
        var writer = ReportWriter(format: .geojson)
        var chunks: [[UInt8]] = []
        writer.begin()
        for report in reports {
            writer.write(report)
            if writer.pendingByteCount > 4096 { chunks.append(writer.takeOutput()) }
        }
        writer.end()
        chunks.append(writer.takeOutput())
        #expect(chunks.count > 5)
        #expect(String(decoding: chunks.joined(), as: UTF8.self) == ReportWriter.encode(reports, format: .geojson))
    }

    @Test func projectedPositionsHaveTheirDecimalsAndUnprojectableOnesNoGeometry() throws {
        let shifted = ProjectedCoordinates(decimals: 3, crsName: "urn:ogc:def:crs:EPSG::3857") { c in
            c.latitude >= 51 ? (.nan, .nan) : (c.longitude * 1000 + 0.12345, c.latitude * 1000)
        }
        var writer = ReportWriter(format: .geojson, projected: shifted)
        writer.write(tricky)
        writer.write(plain)  // latitude 51: projects to NaN in this CRS
        writer.end()
        let collection = try JSONSerialization.jsonObject(with: Data(writer.takeOutput())) as! [String: Any]
        #expect(((collection["crs"] as? [String: Any])?["properties"] as? [String: Any])?["name"] as? String == "urn:ogc:def:crs:EPSG::3857")
        let features = collection["features"] as! [[String: Any]]
        #expect((features[0]["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [30523.523, 50450.1])
        #expect(features[1]["geometry"] is NSNull)
        var csv = ReportWriter(format: .csv, projected: shifted)
        csv.write(tricky)
        csv.write(plain)
        let rows = String(decoding: csv.takeOutput(), as: UTF8.self).split(separator: "\r\n")
        #expect(rows[0].hasPrefix("id,x,y,address,"))
        #expect(rows[1].hasPrefix("42,30523.523,50450.1,"))
        #expect(rows[2].hasPrefix("7,,,1 Main St,London,"))
    }

    @Test func datesAreUTCWithMillisecondsOnlyWhenNeeded() {
        #expect(RFC3339.string(from: march1) == "2025-03-01T10:20:30Z")
        #expect(RFC3339.string(from: march1.addingTimeInterval(0.5)) == "2025-03-01T10:20:30.500Z")
        #expect(RFC3339.string(from: march1.addingTimeInterval(0.0004)) == "2025-03-01T10:20:30Z")
        #expect(RFC3339.string(from: march1.addingTimeInterval(0.9996)) == "2025-03-01T10:20:31Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: -0.001)) == "1969-12-31T23:59:59.999Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(RFC3339.string(from: .distantPast) == "0001-01-01T00:00:00Z")
        #expect(RFC3339.string(from: .distantFuture) == "4001-01-01T00:00:00Z")
    }
}
