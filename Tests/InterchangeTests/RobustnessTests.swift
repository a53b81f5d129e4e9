import Foundation
import Generator
import Geometry
import Interchange
import ReportModel
import Testing

/// Whatever the bytes, a reader returns records or throws a ValidationError about the file.
@Suite struct RobustnessTests {
    /// Reads everything, accepting only file-level ValidationErrors; returns the record count.
    @discardableResult
    func survive(_ bytes: [UInt8], _ format: InterchangeFormat?, batchSize: Int = 7) -> Int {
        do {
            var reader = try ReportReader(data: bytes, format: format, batchSize: batchSize)
            var count = 0
            var last = 0
            while let batch = try reader.next() {
                count += batch.records.count
                #expect(batch.bytesRead >= last && batch.bytesRead <= bytes.count)
                last = batch.bytesRead
                for record in batch.records {
                    switch record.location {
                    case .line(let n), .feature(let n): #expect(n >= 1)
                    }
                }
            }
            return count
        } catch {
            #expect(error.field == "file")
            return -1
        }
    }

    @Test(arguments: [InterchangeFormat.geojson, .geojsonseq, .csv, nil])
    func randomBytes(format: InterchangeFormat?) {
        var random = SplitMix64(state: 42)
        let alphabet = Array(#"{}[]",:\ 0123456789.eE+-tfnulraxF"#.utf8) + [0x0A, 0x0D, 0x1E, 0x09, 0x00, 0xC3, 0xA9, 0xFF, 0xED, 0xF0]
        for round in 0..<400 {
            let length = Int.random(in: 0..<300, using: &random)
            let bytes: [UInt8] = (0..<length).map { _ in
                round % 2 == 0 ? UInt8.random(in: 0...255, using: &random) : alphabet.randomElement(using: &random)!
            }
            survive(bytes, format)
        }
    }

    @Test(arguments: InterchangeFormat.allCases)
    func everyTruncation(format: InterchangeFormat) {
        let bytes = Array(ReportWriter.encode(Array(sampleReports(4)) + [tricky], format: format).utf8)
        for length in 0...bytes.count {
            survive(Array(bytes.prefix(length)), format)
        }
    }

    @Test(arguments: InterchangeFormat.allCases)
    func randomMutations(format: InterchangeFormat) {
        var random = SplitMix64(state: UInt64(format.rawValue.count))
        let original = Array(ReportWriter.encode(sampleReports(6), format: format).utf8)
        let specials = Array(#"{}[]",:\"#.utf8) + [0x0A, 0x0D, 0x1E, 0x00, 0x80, 0xFF]
        for _ in 0..<1500 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[at] = specials.randomElement(using: &random)!
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(specials.randomElement(using: &random)!, at: at)
                default: bytes[at] = UInt8.random(in: 0...255, using: &random)
                }
            }
            survive(bytes, format)
        }
    }

    /// The hand-written parser accepts only what a reference JSON parser accepts: every
    /// mutated Feature that decodes is also valid JSON to Foundation.
    @Test func parserAgreesWithFoundation() throws {
        var random = SplitMix64(state: 7)
        let line = Array(GeoJSON.feature(tricky).utf8)
        let specials = Array(#"{}[]",:\ 0.-eE"#.utf8) + [0x09, 0x01, 0xC3]
        var accepted = 0
        for _ in 0..<3000 {
            var bytes = line
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes[at] = specials.randomElement(using: &random)!
            case 1: bytes.remove(at: at)
            default: bytes.insert(specials.randomElement(using: &random)!, at: at)
            }
            guard !bytes.contains(0x0A) else { continue }
            let records = try readAll(bytes: bytes + [0x0A], .geojsonseq)
            try #require(records.count == 1)
            let syntaxError = records[0].error.map { $0.field == "line" && $0.message.hasPrefix("is not valid JSON") } ?? false
            let foundation = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
            if !syntaxError {
                accepted += 1
                #expect(foundation, "accepted invalid JSON: \(String(decoding: bytes, as: UTF8.self))")
            } else if foundation, !String(decoding: bytes, as: UTF8.self).contains("\\u") {
                #expect(Bool(false), "rejected valid JSON: \(String(decoding: bytes, as: UTF8.self)) — \(records[0].error!)")
            }
        }
        #expect(accepted > 100)
    }
}
