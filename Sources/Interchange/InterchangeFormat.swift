/// The file formats reports are imported from and exported to, all in one vocabulary
/// (`address`, `city`, `district`, `object_type`, `balance_holder`, `violator`, `phones`,
/// `comment`, `status`, `created_at`, `updated_at`).
///
/// ```swift
/// let format = InterchangeFormat.detect(path: "reports.csv", prefix: firstBytes)  // .csv
/// response.headers["Content-Type"] = format.mediaType                             // "text/csv"
/// ```
public enum InterchangeFormat: String, CaseIterable, Sendable {
    /// One RFC 7946 FeatureCollection.
    case geojson
    /// A GeoJSON text sequence: one Feature per line, or RFC 8142 (each Feature after an RS byte).
    case geojsonseq
    /// RFC 4180 CSV with a header row; see ``CSV``.
    case csv

    /// The IANA media type of the format.
    public var mediaType: String {
        switch self {
        case .geojson: "application/geo+json"
        case .geojsonseq: "application/geo+json-seq"
        case .csv: "text/csv"
        }
    }

    /// The usual file extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .geojson: "geojson"
        case .geojsonseq: "geojsonl"
        case .csv: "csv"
        }
    }

    /// The format of a file, from its extension or, when that says nothing, from its first bytes.
    ///
    /// Extensions: `.geojson` `.json` → ``geojson``; `.geojsonl` `.geojsons` `.geojsonseq`
    /// `.ndjson` `.jsonl` → ``geojsonseq``; `.csv` → ``csv`` (case-insensitive).
    /// Sniffing (after a UTF-8 BOM and whitespace): an RS byte (0x1E) → ``geojsonseq``; a JSON
    /// object that is a FeatureCollection (its `type`, or a `features` member) → ``geojson``;
    /// any other object (a Feature on the first line) → ``geojsonseq``; `[` → ``geojson`` (so
    /// the reader says it is not a FeatureCollection); anything else → ``csv``.
    /// A prefix of a few kilobytes is enough.
    public static func detect(path: String, prefix: some Collection<UInt8>) -> InterchangeFormat {
        if let format = fromExtension(path) { return format }
        return sniff(Array(prefix))
    }

    /// The format a file name's extension names, if any (see ``detect(path:prefix:)``).
    public static func fromExtension(_ path: String) -> InterchangeFormat? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "geojson", "json": return .geojson
        case "geojsonl", "geojsons", "geojsonseq", "ndjson", "jsonl": return .geojsonseq
        case "csv": return .csv
        default: return nil
        }
    }

    static func sniff(_ bytes: [UInt8]) -> InterchangeFormat {
        var i = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < bytes.count, isJSONSpace(bytes[i]) { i += 1 }
        guard i < bytes.count else { return .csv }
        switch bytes[i] {
        case 0x1E: return .geojsonseq
        case UInt8(ascii: "["): return .geojson
        case UInt8(ascii: "{"): break
        default: return .csv
        }
        // Walk the members of the first object, as far as the prefix goes.
        let verdict: InterchangeFormat? = bytes.withUnsafeBufferPointer { buffer in
            var cursor = JSONCursor(buffer.baseAddress!, start: i + 1, end: buffer.count)
            do {
                while true {
                    cursor.skipSpace()
                    guard cursor.peek() == UInt8(ascii: "\"") else { return nil }
                    let key = try cursor.parseString()
                    cursor.skipSpace()
                    try cursor.expect(UInt8(ascii: ":"))
                    cursor.skipSpace()
                    switch key {
                    case "features": return .geojson
                    case "geometry", "properties": return .geojsonseq
                    case "type":
                        guard cursor.peek() == UInt8(ascii: "\"") else { return nil }
                        return try cursor.parseString() == "FeatureCollection" ? .geojson : .geojsonseq
                    default:
                        try cursor.skipValue()
                    }
                    cursor.skipSpace()
                    try cursor.expect(UInt8(ascii: ","))
                }
            } catch {
                return nil
            }
        }
        if let verdict { return verdict }
        let needle = Array("\"FeatureCollection\"".utf8)
        if needle.count <= bytes.count {
            for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
                if bytes[start..<start + needle.count].elementsEqual(needle) { return .geojson }
            }
        }
        return .geojsonseq
    }
}

@inline(__always)
func isJSONSpace(_ b: UInt8) -> Bool {
    b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09
}
