import Foundation
import Geometry
import Testing

@Suite("Decimal numbers")
struct DecimalNumberTests {
    @Test("a value is taken only when all of it is a finite decimal number, as the grammar says")
    func againstGrammar() throws {
        // The grammar, written independently as a regular expression.
        let grammar = try Regex("[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?")
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789+-.eE x\u{0}infa,")
        for _ in 0..<50_000 {
            let text = String((0..<Int.random(in: 0...9, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let parsed = DecimalNumber.parse(text)
            let valid = text.wholeMatch(of: grammar) != nil
            if valid, let reference = Double(text), reference.isFinite {
                #expect(parsed == reference, "\(text.debugDescription)")
            } else {
                #expect(parsed == nil, "\(text.debugDescription)")
            }
        }
    }

    @Test("text after a NUL byte, hexadecimal, infinities and NaN are refused", arguments: [
        "30.5\u{0}garbage", "30.5\u{0}", "\u{0}1", "0x1p4", "inf", "-inf", "nan", "infinity", "1e400", "", "-", ".", "e5", "1e", "1e+", " 1", "1 ",
    ])
    func refused(text: String) {
        #expect(DecimalNumber.parse(text) == nil)
    }

    @Test("the forms people and GIS clients write are taken", arguments: [
        ("30.5", 30.5), ("-180", -180), ("+5", 5), (".5", 0.5), ("5.", 5), ("1e-05", 0.00001), ("1.00000000000000008e-05", 1.00000000000000008e-05), ("007", 7),
    ])
    func taken(text: String, value: Double) {
        #expect(DecimalNumber.parse(text) == value)
    }
}
