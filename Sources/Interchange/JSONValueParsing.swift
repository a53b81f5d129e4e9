/// Reading a request body's JSON object into ``JSONValue``s, on the import's own reader
/// (``JSONCursor``): strict RFC 8259, where Foundation's `JSONDecoder` (which this replaces)
/// took `[1,]` and kept the first of two members of one name. Read through `Decodable`, a
/// value was tried as each type in turn, each miss a thrown error: 7% of the server's CPU
/// per filing, the largest part of the handler's own.
extension JSONValue {
    /// The members of the JSON object `bytes` hold (a leading UTF-8 byte order mark
    /// allowed), or a ``JSONSyntaxError`` saying where the text stops being one, without
    /// quoting it (a body may hold a password). Refused besides bad syntax: text in UTF-16
    /// or UTF-32 (RFC 8259 asks for UTF-8; `JSONDecoder` converted them), another value
    /// than an object at the top, text after it, a member named twice in one object
    /// (which of the two a reader takes differs between readers; names are compared as
    /// Swift compares strings, so `é` written as one scalar or as `e` and an accent is
    /// the same name), a number beyond a double's range, and nesting deeper than 256.
    /// Members of nested objects are in name order.
    public static func members(parsing bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> [String: JSONValue] {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw JSONSyntaxError(message: "the text is empty", offset: 0)
        }
        // UTF-16 and UTF-32 begin with a byte order mark or put a zero byte beside the first character.
        if bytes.count >= 2, base[0] == 0 || base[1] == 0 || (base[0] == 0xFE && base[1] == 0xFF) || (base[0] == 0xFF && base[1] == 0xFE) {
            throw JSONSyntaxError(message: "the text must be UTF-8", offset: 0)
        }
        var c = JSONCursor(base, start: 0, end: bytes.count)
        c.quotesInput = false
        if c.end >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { c.i = 3 }
        c.skipSpace()
        guard c.peek() == UInt8(ascii: "{") else {
            guard let first = c.peek() else { throw c.error("the text is empty") }
            // `kindOfValue` calls anything else a number: form data, HTML.
            let known = first == UInt8(ascii: "-") || first &- 48 < 10 || c.kindOfValue() != "a number"
            throw known ? c.error("the text is \(c.kindOfValue()), not an object") : c.unexpected("'{'")
        }
        var members: [String: JSONValue] = [:]
        try objectMembers(&c, depth: 0) { name, value, at throws(JSONSyntaxError) in
            guard members.updateValue(value, forKey: name) == nil else { throw JSONSyntaxError(message: Self.twice(name), offset: at) }
        }
        c.skipSpace()
        guard c.atEnd else { throw c.error("text follows the object") }
        return members
    }

    private static func value(_ c: inout JSONCursor, depth: Int) throws(JSONSyntaxError) -> JSONValue {
        guard let first = c.peek() else { throw c.unexpected("a value") }
        switch first {
        case UInt8(ascii: "\""):
            return .string(try c.parseString())
        case UInt8(ascii: "{"):
            var members: [(String, JSONValue)] = []
            var names = Set<String>()
            try objectMembers(&c, depth: depth) { name, value, at throws(JSONSyntaxError) in
                guard names.insert(name).inserted else { throw JSONSyntaxError(message: Self.twice(name), offset: at) }
                members.append((name, value))
            }
            return .object(members.sorted { $0.0 < $1.0 })
        case UInt8(ascii: "["):
            guard depth < JSONCursor.maxDepth else { throw c.error("values are nested too deeply") }
            c.i += 1
            c.skipSpace()
            var items: [JSONValue] = []
            if c.peek() == UInt8(ascii: "]") {
                c.i += 1
                return .array(items)
            }
            repeat {
                items.append(try value(&c, depth: depth + 1))
            } while try c.nextElement(closing: UInt8(ascii: "]"))
            return .array(items)
        case UInt8(ascii: "t"):
            try c.literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try c.literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try c.literal("null")
            return .null
        default:
            let at = c.i
            let number = try c.parseNumber()
            guard number.value.isFinite else { throw JSONSyntaxError(message: "a number is beyond the range of a double", offset: at) }
            return .number(number.value)
        }
    }

    /// Reads the object at `{`, giving each member to `add` with the offset of its name.
    private static func objectMembers(
        _ c: inout JSONCursor, depth: Int, _ add: (String, JSONValue, Int) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) {
        guard depth < JSONCursor.maxDepth else { throw c.error("values are nested too deeply") }
        c.i += 1
        guard try c.firstMember() else { return }
        repeat {
            let at = c.i
            let name = try c.memberName()
            try add(try c.decodeString(name.start, name.end, name.escaped), try value(&c, depth: depth + 1), at)
        } while try c.nextMember()
    }

    private static func twice(_ name: String) -> String {
        "the member \(GeoJSON.string(String(name.prefix(40)))) is given twice in one object"
    }
}
