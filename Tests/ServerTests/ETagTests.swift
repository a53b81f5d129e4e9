@testable import Server
import Testing

@Suite("Entity tags")
struct ETagTests {
    static func tag(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes(ETag.of) }

    @Test("a quoted hexadecimal hash, the same for the same bytes")
    func form() {
        let body = Array("{\"type\":\"FeatureCollection\",\"features\":[]}".utf8)
        let tag = Self.tag(body)
        #expect(tag == Self.tag(body))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && (3...18).contains(tag.count))
        #expect(tag.dropFirst().dropLast().allSatisfy { $0.isHexDigit })
    }

    @Test("any one byte changed, any length, any two bodies swapped eight bytes: another tag")
    func everyByteCounts() {
        var tags = Set<String>()
        var expected = 0
        for length in 0...100 {
            let body = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }
            tags.insert(Self.tag(body))
            expected += 1
            for i in 0..<length {
                var changed = body
                changed[i] ^= 0x20
                tags.insert(Self.tag(changed))
                expected += 1
            }
            if length >= 16 {
                // The first two words swapped: they go to different lanes.
                let swapped = Array(body[8..<16] + body[0..<8] + body[16...])
                tags.insert(Self.tag(swapped))
                expected += 1
            }
        }
        #expect(tags.count == expected)
    }
}
