import Geometry
import ReportModel
import Testing

@Suite("Phone numbers")
struct PhoneTests {
    @Test("every written Ukrainian form becomes 380XXXXXXXXX",
          arguments: ["+380 67 123 45 67", "067-123-45-67", "(067)1234567", "80671234567", "380671234567", "671234567",
                      "+380671234567", "067.123.45.67", " 067 123 45 67 ", "+38 (067) 123-45-67", "38 067 123 45 67"])
    func ukrainian(text: String) throws {
        #expect(try Phone.normalize(text) == "380671234567")
    }

    @Test("other international numbers keep their digits",
          arguments: [("+48 22 123 45 67", "48221234567"), ("+1 (212) 555-0100", "12125550100"), ("+12345678", "12345678"),
                      ("+123456789012345", "123456789012345")])
    func international(text: String, digits: String) throws {
        #expect(try Phone.normalize(text) == digits)
    }

    @Test("anything else is rejected, naming the input",
          arguments: ["", "12", "0671234", "06712345678", "+1234567", "+1234567890123456", "067 123 45 6x", "+380 67 123 45",
                      "+380 67 123 45 678", "0 800 123", "1671234567", "++380671234567", "067+1234567", "7 (495) 123-45-67",
                      "067\u{00A0}123 45 67", String(repeating: "1", count: 41)])
    func rejected(text: String) {
        do {
            _ = try Phone.normalize(text)
            Issue.record("\(text) should be rejected")
        } catch {
            #expect(error.field == "phones")
            #expect(error.message.hasPrefix("\"\(text.prefix(40))"))
        }
    }

    @Test("a number written out normalizes back to itself, with its + only when it is not Ukrainian")
    func writtenForm() throws {
        #expect(Phone.written("380671234567") == "380671234567")
        #expect(Phone.written("442079460958") == "+442079460958")
        // Bare, these two would be refused or read as another number.
        #expect(Phone.written("123456789") == "+123456789")
        #expect(Phone.written("80671234567") == "+80671234567")
        var random = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let digits = String((0..<Int.random(in: 8...15, using: &random)).map { _ in Character(String(Int.random(in: 0...9, using: &random))) })
            guard let stored = try? Phone.normalize("+" + digits) else { continue }
            #expect(try Phone.normalize(Phone.written(stored)) == stored, "\(stored)")
        }
    }

    @Test("random texts normalize as the rules say (against a model over the digits as a string)")
    func againstModel() {
        let alphabet: [Character] = ["0", "3", "8", "0", "6", "7", "1", "9", "+", " ", "-", "(", ")", ".", "x", "\u{A0}", "٣"]
        var random = SystemRandomNumberGenerator()
        var accepted = 0
        for _ in 0..<100_000 {
            var text = String((0..<Int.random(in: 0...16, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            // Most texts as numbers are written: a form, then separators dropped in.
            if Bool.random(using: &random) {
                let digits = String((0..<Int.random(in: 7...13, using: &random)).map { _ in Character(String(Int.random(in: 0...9, using: &random))) })
                text = ["", "+", "0", "38", "380", "+380", "80", "+38"].randomElement(using: &random)! + digits
            }
            let expected = Self.model(text)
            if let normalized = try? Phone.normalize(text) {
                accepted += 1
                #expect(normalized == expected, "\(text)")
            } else {
                #expect(expected == nil, "\(text)")
            }
        }
        #expect(accepted > 10_000)
    }

    /// The rules, on the digits gathered into a string first.
    static func model(_ text: String) -> String? {
        guard text.utf8.count <= Phone.maxInputLength else { return nil }
        var digits = "", plus = false
        for c in text {
            if c.isASCII && c.isNumber { digits.append(c) } else if c == "+" && digits.isEmpty && !plus { plus = true } else if !" -().".contains(c) { return nil }
        }
        if plus { return digits.hasPrefix("380") ? (digits.count == 12 ? digits : nil) : ((8...15).contains(digits.count) ? digits : nil) }
        switch digits.count {
        case 12 where digits.hasPrefix("380"): return digits
        case 11 where digits.hasPrefix("80"): return "3" + digits
        case 10 where digits.hasPrefix("0"): return "38" + digits
        case 9 where !digits.hasPrefix("0"): return "380" + digits
        default: return nil
        }
    }

    @Test("a list drops repeats, keeps order, and holds 1 to 5 numbers")
    func list() throws {
        #expect(try Phone.normalizeList(["067 123 45 67", "0501112233", "+380671234567"]) == ["380671234567", "380501112233"])
        #expect(throws: ValidationError(field: "phones", "at least one phone number is required")) { try Phone.normalizeList([]) }
        let six = (0..<6).map { "06712345\($0)0" }
        #expect(throws: ValidationError(field: "phones", "at most 5 phone numbers are allowed, got 6")) { try Phone.normalizeList(six) }
    }

    @Test("search text reduces to its digits")
    func searchDigits() {
        #expect(Phone.searchDigits("067 12") == "06712")
        #expect(Phone.searchDigits("+38(067)…") == "38067")
        #expect(Phone.searchDigits("#1234") == "1234")
        #expect(Phone.searchDigits("abc") == nil)
    }
}
