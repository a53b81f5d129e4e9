import Foundation
import Geometry
import Interchange
import Testing

@Suite struct FormatTests {
    @Test func mediaTypes() {
        #expect(InterchangeFormat.geojson.mediaType == "application/geo+json")
        #expect(InterchangeFormat.geojsonseq.mediaType == "application/geo+json-seq")
        #expect(InterchangeFormat.csv.mediaType == "text/csv")
        #expect(InterchangeFormat(rawValue: "geojsonseq") == .geojsonseq)
    }

    @Test(arguments: [
        ("a.geojson", InterchangeFormat.geojson), ("dir.v2/A.JSON", .geojson), ("x.geojsonl", .geojsonseq),
        ("x.geojsons", .geojsonseq), ("x.geojsonseq", .geojsonseq), ("x.ndjson", .geojsonseq), ("x.jsonl", .geojsonseq),
        ("/tmp/x.CSV", .csv),
    ])
    func detectByExtension(path: String, format: InterchangeFormat) {
        // The extension wins over the content.
        #expect(InterchangeFormat.detect(path: path, prefix: Array("zzz".utf8)) == format)
    }

    @Test(arguments: [
        ("\u{1E}{\"type\":\"Feature\"}\n", InterchangeFormat.geojsonseq),
        ("{\"type\":\"FeatureCollection\",\"features\":[]}", .geojson),
        ("\u{FEFF}\n  {\n  \"type\" : \"FeatureCollection\"", .geojson),
        ("{\"name\":\"export\",\"crs\":{\"type\":\"name\"},\"features\":[", .geojson),
        ("{\"type\":\"Feature\",\"geometry\":null}\n{\"type\":", .geojsonseq),
        ("{\"id\":1,\"geometry\":{\"type\":\"Point\"", .geojsonseq),
        ("{\"bbox\":[1,2,3,4],\"note\":\"long…", .geojsonseq),
        ("{\"bbox\":[1,2,3,4],\"note\":\"…\",\"x\":\"FeatureCollection\",\"type\":\"FeatureCollection\"", .geojson),
        ("[{\"type\":\"Feature\"}]", .geojson),
        ("id,longitude,latitude\r\n", .csv),
        ("", .csv),
    ])
    func detectBySniffing(text: String, format: InterchangeFormat) {
        #expect(InterchangeFormat.detect(path: "upload", prefix: Array(text.utf8)) == format)
        #expect(InterchangeFormat.detect(path: "upload.txt", prefix: Array(text.utf8)) == format)
    }

    @Test func readerDetectsTheFormat() throws {
        let collection = ReportWriter.encode([plain], format: .geojson)
        #expect(try ReportReader(data: Array(collection.utf8)).format == .geojson)
        #expect(try ReportReader(data: Array(ReportWriter.encode([plain], format: .geojsonseq).utf8)).format == .geojsonseq)
        #expect(try ReportReader(data: Array(ReportWriter.encode([plain], format: .csv).utf8)).format == .csv)
        // The path's extension is looked at first.
        #expect(throws: ValidationError.self) { try ReportReader(data: Array(collection.utf8), path: "x.csv") }
    }

    @Test func rfc3339Parsing() throws {
        let utc = try #require(RFC3339.date(from: "2025-03-01T10:20:30Z"))
        #expect(utc == march1)
        #expect(RFC3339.date(from: "2025-03-01T12:20:30+02:00") == march1)
        #expect(RFC3339.date(from: "2025-03-01T04:50:30-05:30") == march1)
        #expect(RFC3339.date(from: "2025-03-01t10:20:30z") == march1)
        #expect(RFC3339.date(from: "2025-03-01 10:20:30Z") == march1)
        let fraction = try #require(RFC3339.date(from: "2025-03-01T10:20:30.123456789Z"))
        #expect(abs(fraction.timeIntervalSince(march1) - 0.123456789) < 1e-6)
        let half = try #require(RFC3339.date(from: "2025-03-01T12:20:30.5+02:00"))
        #expect(abs(half.timeIntervalSince(march1) - 0.5) < 1e-9)
        #expect(RFC3339.date(from: "2024-02-29T00:00:00Z") != nil)
        #expect(RFC3339.date(from: "2025-02-28T23:59:60Z") == RFC3339.date(from: "2025-03-01T00:00:00Z"))
        for bad in [
            "2025-03-01", "2025-03-01T10:20:30", "2025-03-01T10:20Z", "2025-13-01T10:20:30Z", "2025-02-29T10:20:30Z",
            "2025-03-01T24:00:00Z", "2025-03-01T10:20:30.Z", "2025-03-01T10:20:30+0200", "2025-03-01T10:20:30+02:00x",
            "2025-03-01T10:20:30ZZ", "yesterday", "", "２０２５-03-01T10:20:30Z", "2025-03-01T10:20:30+24:00",
        ] {
            #expect(RFC3339.date(from: bad) == nil, "\(bad)")
        }
    }
}
