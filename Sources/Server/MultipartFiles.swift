import Geometry

/// The files of a `multipart/form-data` body (RFC 7578): each part's bytes, in order.
/// Every part must be a file (a `filename` in its `Content-Disposition`); what a part
/// says its type is does not matter, as photos are judged by their bytes.
enum MultipartFiles {
    /// The boundary of a `multipart/form-data` content type, or nil for another type.
    static func boundary(_ contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            let value = pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    /// The parts' bodies; a body that is not multipart as `boundary` says, or a part
    /// that is no file, is a ``ValidationError`` on `body` or `files[i]`.
    static func parse(_ body: [UInt8], boundary: String, maxParts: Int = 5) throws(ValidationError) -> [[UInt8]] {
        let delimiter = Array("--\(boundary)".utf8)
        let next = Array("\r\n--\(boundary)".utf8)
        guard var at = firstIndex(of: delimiter, in: body, from: 0) else {
            throw ValidationError(field: "body", "is not multipart/form-data with the boundary its Content-Type names")
        }
        at += delimiter.count
        var files: [[UInt8]] = []
        while true {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            if body[at...].starts(with: Array("--".utf8)) { return files }
            guard body[at...].starts(with: [13, 10]) else { throw ValidationError(field: "body", "has a malformed part delimiter") }
            at += 2
            guard let headersEnd = firstIndex(of: [13, 10, 13, 10], in: body, from: at), headersEnd - at <= 8_192 else {
                throw ValidationError(field: "files[\(files.count)]", "has no complete headers")
            }
            let headers = String(decoding: body[at..<headersEnd], as: UTF8.self).lowercased()
            guard headers.contains("content-disposition:"), headers.contains("filename=") else {
                throw ValidationError(field: "files[\(files.count)]", "must be a file (a part with a filename)")
            }
            let start = headersEnd + 4
            guard let end = firstIndex(of: next, in: body, from: start) else { throw ValidationError(field: "body", "ends without its closing boundary") }
            files.append(Array(body[start..<end]))
            guard files.count <= maxParts else { throw ValidationError(field: "files", "must be at most \(maxParts) files") }
            at = end + next.count
        }
    }

    /// Where `needle` first occurs in `haystack` at or after `from`: Knuth–Morris–Pratt, in
    /// linear time whatever the boundary a client chose.
    static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, from >= 0, haystack.count - from >= needle.count else { return nil }
        // fallback[k]: the length of the longest proper border of needle[0...k].
        var fallback = [Int](repeating: 0, count: needle.count)
        var k = 0
        for i in stride(from: 1, to: needle.count, by: 1) {
            while k > 0 && needle[i] != needle[k] { k = fallback[k - 1] }
            if needle[i] == needle[k] { k += 1 }
            fallback[i] = k
        }
        var matched = 0
        for i in from..<haystack.count {
            while matched > 0 && haystack[i] != needle[matched] { matched = fallback[matched - 1] }
            if haystack[i] == needle[matched] { matched += 1 }
            if matched == needle.count { return i - needle.count + 1 }
        }
        return nil
    }
}
