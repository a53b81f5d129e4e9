/// Server-Sent Events as a test reads them off a raw connection.
public enum EventStream {
    /// The `id:` lines of events in a stream's text, in order.
    public static func ids(_ text: String) -> [Int] {
        // By bytes: "\r\n" (before a chunk's size) is one Character, which "\n" does not split.
        text.utf8.split(separator: UInt8(ascii: "\n")).compactMap { line in
            let line = String(decoding: line, as: UTF8.self)
            return line.hasPrefix("id: ") ? Int(line.dropFirst(4)) : nil
        }
    }
}
