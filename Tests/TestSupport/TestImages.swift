import CJPEG
import CZlib
import Foundation

/// Test photos made here, with libjpeg and by hand-built PNG chunks, carrying the
/// metadata a phone writes: EXIF with an orientation and a GPS position, XMP, a JPEG
/// comment, PNG text chunks.
public enum TestImages {
    /// A picture `width`×`height` of blue, its top-left quarter red (so that where that
    /// corner ends up shows how the picture was turned).
    public static func quartered(width: Int, height: Int) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 3
                let red = x < width / 2 && y < height / 2
                (pixels[i], pixels[i + 1], pixels[i + 2]) = red ? (230, 20, 20) : (20, 20, 230)
            }
        }
        return pixels
    }

    /// A baseline JPEG of RGB `pixels`, with `segments` (whole marker segments) right
    /// after its start.
    public static func jpeg(width: Int, height: Int, pixels: [UInt8]? = nil, segments: [[UInt8]] = []) -> [UInt8] {
        let rgb = pixels ?? quartered(width: width, height: height)
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        let failed = rgb.withUnsafeBufferPointer { cjpeg_encode($0.baseAddress, Int32(width), Int32(height), 92, 1, &out, &size, &message) }
        precondition(failed == 0 && out != nil, "libjpeg could not encode the test picture")
        defer { free(out) }
        let encoded = Array(UnsafeBufferPointer(start: out, count: Int(size)))
        return Array(encoded[0..<2]) + segments.flatMap { $0 } + Array(encoded[2...])
    }

    /// A marker segment: FF, the marker, the length, the body.
    public static func segment(_ marker: UInt8, _ body: [UInt8]) -> [UInt8] {
        let length = body.count + 2
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + body
    }

    /// An `Exif` APP1 segment (big-endian TIFF) with an orientation, a camera make, and,
    /// when given, a GPS position in degrees.
    public static func exif(orientation: Int, latitude: Double? = nil, longitude: Double? = nil) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v >> 16) + u16(v & 0xFFFF) }
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] {
            u16(tag) + u16(type) + u32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        func rationals(_ degrees: Double) -> [UInt8] {
            let d = Int(degrees), m = Int((degrees - Double(d)) * 60), s = ((degrees - Double(d)) * 60 - Double(m)) * 60
            return u32(d) + u32(1) + u32(m) + u32(1) + u32(Int(s * 10_000)) + u32(10_000)
        }
        let make = Array("PhoneMaker\0".utf8)
        let hasGPS = latitude != nil && longitude != nil
        // Layout: header (8), IFD0 (2 + 12·n + 4), the make's text, then the GPS IFD and its rationals.
        let ifd0Count = hasGPS ? 3 : 2
        let makeOffset = 8 + 2 + 12 * ifd0Count + 4
        let gpsOffset = makeOffset + make.count
        var tiff = Array("MM".utf8) + u16(42) + u32(8)
        tiff += u16(ifd0Count)
        tiff += entry(0x010F, 2, make.count, u32(makeOffset))
        tiff += entry(0x0112, 3, 1, u16(orientation))
        if hasGPS { tiff += entry(0x8825, 4, 1, u32(gpsOffset)) }
        tiff += u32(0) + make
        if let latitude, let longitude {
            let values = gpsOffset + 2 + 12 * 4 + 4
            tiff += u16(4)
            tiff += entry(1, 2, 2, Array((latitude < 0 ? "S" : "N").utf8) + [0])
            tiff += entry(2, 5, 3, u32(values))
            tiff += entry(3, 2, 2, Array((longitude < 0 ? "W" : "E").utf8) + [0])
            tiff += entry(4, 5, 3, u32(values + 24))
            tiff += u32(0) + rationals(abs(latitude)) + rationals(abs(longitude))
        }
        return segment(0xE1, Array("Exif".utf8) + [0, 0] + tiff)
    }

    /// An XMP APP1 segment naming a creator tool.
    public static let xmp = segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(
        #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmp:CreatorTool="SecretCam"/></rdf:RDF></x:xmpmeta>"#.utf8))

    /// A JPEG comment segment.
    public static let comment = segment(0xFE, Array("taken at home".utf8))

    /// A PNG of RGB `pixels` (or the quartered picture) with a tEXt chunk, built chunk by chunk.
    public static func png(width: Int, height: Int, text: (String, String)? = ("Comment", "secret"), corruptCRC: Bool = false) -> [UInt8] {
        let rgb = quartered(width: width, height: height)
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)  // filter: none
            raw += rgb[(y * width * 3)..<((y + 1) * width * 3)]
        }
        var compressedSize = compressBound(UInt(raw.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedSize))
        _ = compress2(&compressed, &compressedSize, raw, UInt(raw.count), 6)
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0], corrupt: corruptCRC)
        if let (key, value) = text { out += chunk("tEXt", Array(key.utf8) + [0] + Array(value.utf8)) }
        out += chunk("IDAT", Array(compressed[0..<Int(compressedSize)]))
        out += chunk("IEND", [])
        return out
    }

    /// A PNG whose header declares `width`×`height` but whose data is a few bytes: what a
    /// decompression bomb looks like before anything is inflated.
    public static func bombPNG(width: Int, height: Int) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", be32(width) + be32(height) + [8, 2, 0, 0, 0])
            + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + chunk("IEND", [])
    }

    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8], corrupt: Bool = false) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = Int(crc32(0, body, UInt32(body.count))) ^ (corrupt ? 1 : 0)
        return be32(data.count) + body + be32(crc)
    }

    /// The groups of tags that must not survive (exiftool's family-0 group names).
    static let forbidden = ["EXIF", "XMP", "IPTC", "Photoshop", "ICC_Profile", "MakerNotes", "Composite:GPS"]
    /// What exiftool reports of a PNG's header: not metadata.
    static let structural = ["ImageWidth", "ImageHeight", "BitDepth", "ColorType", "Compression", "Filter", "Interlace"]

    /// The tags of `tags` (as ``exiftool(_:in:name:)`` reads them) that carry metadata a
    /// stored photo must not keep.
    public static func leaks(_ tags: [String: Any]) -> [String] {
        tags.keys.filter { key in
            forbidden.contains { key.hasPrefix($0 + ":") || key.hasPrefix($0) && $0.contains(":") } || key.contains("GPS")
                || key == "File:Comment" || key.hasPrefix("PNG:") && !structural.contains(String(key.dropFirst(4)))
        }.sorted()
    }

    /// What exiftool reads of a file, every tag with its group (`-G -a -j`).
    public static func exiftool(_ bytes: [UInt8], in directory: TemporaryDirectory, name: String) throws -> [String: Any] {
        let path = directory.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let data = try ToolRun.run("exiftool", ["-j", "-G", "-a", "-n", path]).output
        return (try JSONSerialization.jsonObject(with: data) as? [[String: Any]])?.first ?? [:]
    }
}
