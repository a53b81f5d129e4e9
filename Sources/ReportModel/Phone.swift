import Geometry

/// Phone numbers as they are written on posters, brought to one form: the digits of the
/// international number, without `+`.
///
/// Every Ukrainian way of writing a number gives the same twelve digits:
///
/// | written            | normalized     |
/// |--------------------|----------------|
/// | `+380 67 123 45 67`| `380671234567` |
/// | `067-123-45-67`    | `380671234567` |
/// | `(067)1234567`     | `380671234567` |
/// | `80671234567`      | `380671234567` |
/// | `671234567`        | `380671234567` |
///
/// Other international numbers written with `+` and 8 to 15 digits keep their digits, and
/// are written out with their `+` again (``written(_:)``).
/// Spaces, dashes, dots and parentheses are separators; anything else is an error.
public enum Phone {
    /// The longest text accepted as one phone number.
    public static let maxInputLength = 40

    /// Normalizes one written number, or throws a ``ValidationError`` naming it.
    public static func normalize(_ text: String, field: String = "phones") throws(ValidationError) -> String {
        guard text.utf8.count <= maxInputLength else {
            throw ValidationError(field: field, "\"\(text.prefix(maxInputLength))…\" is too long for a phone number")
        }
        // One pass over the bytes counts the digits and keeps the first three, which decide
        // the form; the number is then written once, with no array of digits in between
        // (every phone of every imported report comes through here).
        var count = 0, plus = false
        var first: (UInt8, UInt8, UInt8) = (0, 0, 0)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                switch count {
                case 0: first.0 = byte
                case 1: first.1 = byte
                case 2: first.2 = byte
                default: break
                }
                count += 1
            case UInt8(ascii: "+") where count == 0 && !plus: plus = true
            case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "."): continue
            default: throw rejected(text, field)
            }
        }
        let startsWith380 = count >= 3 && first == (UInt8(ascii: "3"), UInt8(ascii: "8"), UInt8(ascii: "0"))
        // How much of "380" the number lacks in front.
        let missing: Int
        if plus {
            guard startsWith380 ? count == 12 : (8...15).contains(count) else { throw rejected(text, field) }
            missing = 0
        } else {
            switch count {
            case 12 where startsWith380: missing = 0
            case 11 where first.0 == UInt8(ascii: "8") && first.1 == UInt8(ascii: "0"): missing = 1
            case 10 where first.0 == UInt8(ascii: "0"): missing = 2
            case 9 where first.0 != UInt8(ascii: "0"): missing = 3
            default: throw rejected(text, field)
            }
        }
        // Already the digits alone (a stored number read back): the text itself.
        if missing == 0 && count == text.utf8.count { return text }
        // The text is immutable, so the second pass meets the same `count` digits: the
        // capacity holds them.
        return String(unsafeUninitializedCapacity: missing + count) { out in
            var i = 0
            for byte in "380".utf8.prefix(missing) {
                out[i] = byte
                i += 1
            }
            for byte in text.utf8 where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                out[i] = byte
                i += 1
            }
            return i
        }
    }

    /// A normalized number as it is written out (answers, exports, links): a Ukrainian one as
    /// its twelve digits, any other with its `+`. Either form normalizes back to the same
    /// number, which the bare digits of an international number do not: `442079460958`
    /// would be refused, and `123456789` read as the Ukrainian `380123456789`.
    public static func written(_ normalized: String) -> String {
        isUkrainian(normalized) ? normalized : "+" + normalized
    }

    private static func isUkrainian(_ digits: String) -> Bool {
        digits.utf8.count == 12 && digits.hasPrefix("380")
    }

    /// Normalizes 1 to ``maxPerReport`` numbers, dropping repeats but keeping the order.
    public static func normalizeList(_ texts: [String], field: String = "phones") throws(ValidationError) -> [String] {
        var result: [String] = []
        for text in texts {
            let phone = try normalize(text, field: field)
            if !result.contains(phone) { result.append(phone) }
        }
        guard !result.isEmpty else { throw ValidationError(field: field, "at least one phone number is required") }
        guard result.count <= maxPerReport else {
            throw ValidationError(field: field, "at most \(maxPerReport) phone numbers are allowed, got \(result.count)")
        }
        return result
    }

    /// How many numbers one report may carry.
    public static let maxPerReport = 5

    /// The digits of a search text (`067 12`, `+38(067)…`, `#1234`), or nil when it has none.
    public static func searchDigits(_ text: String) -> String? {
        let digits = text.unicodeScalars.filter { ("0"..."9").contains($0) }
        return digits.isEmpty ? nil : String(String.UnicodeScalarView(digits))
    }

    /// The digits a search text asks for, checked as every store checks them: at most 64
    /// characters, at least one digit.
    public static func searchFragment(_ text: String) throws(ValidationError) -> String {
        guard text.unicodeScalars.count <= 64 else { throw ValidationError(field: "q", "must be at most 64 characters") }
        guard let digits = searchDigits(text) else {
            throw ValidationError(field: "q", "must contain at least one digit of a phone number or report id")
        }
        return digits
    }

    /// The report id a searched fragment names, when it could be one (no leading zero).
    public static func exactID(_ digits: String) -> Int64? {
        digits.first == "0" ? nil : Int64(digits)
    }

    private static func rejected(_ text: String, _ field: String) -> ValidationError {
        ValidationError(field: field, "\"\(text)\" is not a phone number: write a Ukrainian number such as 067 123 45 67 or +380 67 123 45 67, or an international one as + and 8 to 15 digits")
    }
}
