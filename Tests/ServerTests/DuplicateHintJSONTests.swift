import Foundation
import Generator
import ReportModel
import ReportService
@testable import Server
import Testing

/// The hand-written JSON of duplicate hints, against `JSONEncoder`'s of the same hints.
@Suite struct DuplicateHintJSONTests {
    @Test("hints are written byte for byte as JSONEncoder writes them: whole and tenth distances, no hints, shared numbers")
    func asEncoded() throws {
        var random = SplitMix64(state: 17)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let distances: [Double] = [0, -0.0, 0.1, 5, 49.9, 50, 1_000, 123_456.7, 20_037_508.3]
        var plus = false  // a foreign number, written with its +
        for round in 0..<2_000 {
            let hints = (0..<(round % 7)).map { _ in
                DuplicateHint(
                    id: Int64.random(in: 1...Int64(Int32.max) * 4, using: &random),
                    distanceM: Bool.random(using: &random)
                        ? distances.randomElement(using: &random)! : (Double.random(in: 0...25_000_000, using: &random) * 10).rounded() / 10,
                    sharedPhones: (0..<Int.random(in: 0...3, using: &random)).map { _ in
                        Phone.written((Bool.random(using: &random) ? "380" : "4860") + String(Int.random(in: 100_000_000...999_999_999, using: &random)))
                    })
            }
            let written = DuplicateHint.json(hints)
            plus = plus || written.contains(UInt8(ascii: "+"))
            #expect(written == Array(try encoder.encode(hints)), "\(String(decoding: written, as: UTF8.self))")
        }
        #expect(plus)
    }
}
