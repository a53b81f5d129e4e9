/// The formats a photo may be uploaded in, judged by the file's first bytes (never by the
/// declared type or a file name).
public enum ImageFormat: String, Sendable, Hashable {
    case jpeg, png

    public init?(sniffing bytes: some Collection<UInt8>) {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else {
            return nil
        }
    }
}

/// What the EXIF block of a JPEG says that matters here: how the pixels are to be turned
/// to stand upright, and where the photo was taken (a hint for the app, never stored).
public struct ExifFacts: Sendable, Hashable {
    /// TIFF orientation 1...8 (1: as stored).
    public var orientation = 1
    /// Where the photo was taken, in degrees, when it carries a GPS position.
    public var longitude: Double?
    public var latitude: Double?

    public init() {}

    /// The facts of a JPEG's first `Exif` APP1 segment; none when it has no such segment
    /// or it cannot be read (a damaged EXIF block is dropped like any other).
    public init(jpeg bytes: [UInt8]) {
        guard let tiff = Self.exifPayload(bytes) else { return }
        var reader = TIFFReader(tiff)
        guard let ifd0 = reader.firstIFD() else { return }
        let entries = reader.entries(at: ifd0)
        if let o = entries[0x0112].flatMap({ reader.integer($0) }), (1...8).contains(o) { orientation = o }
        if let gpsOffset = entries[0x8825].flatMap({ reader.integer($0) }) {
            let gps = reader.entries(at: gpsOffset)
            if let lat = gps[2].flatMap({ reader.degrees($0) }), let lon = gps[4].flatMap({ reader.degrees($0) }),
               let latRef = gps[1].flatMap({ reader.ascii($0) }), let lonRef = gps[3].flatMap({ reader.ascii($0) }),
               (0...90).contains(lat), (0...180).contains(lon)
            {
                latitude = latRef.hasPrefix("S") ? -lat : lat
                longitude = lonRef.hasPrefix("W") ? -lon : lon
            }
        }
    }

    /// The TIFF structure inside the first APP1 segment that starts `Exif\0\0`, found by
    /// walking the markers up to the start of the scan.
    static func exifPayload(_ b: [UInt8]) -> ArraySlice<UInt8>? {
        var i = 2
        while i + 4 <= b.count, b[i] == 0xFF {
            let marker = b[i + 1]
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard length >= 2, i + 2 + length <= b.count else { return nil }
            let body = b[(i + 4)..<(i + 2 + length)]
            if marker == 0xE1, body.starts(with: Array("Exif".utf8) + [0, 0]) { return body.dropFirst(6) }
            i += 2 + length
        }
        return nil
    }
}

/// Reads the few TIFF fields EXIF needs, every offset checked against the bounds.
struct TIFFReader {
    let bytes: ArraySlice<UInt8>
    let base: Int
    var bigEndian = false

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        base = bytes.startIndex
    }

    struct Entry {
        var type: Int
        var count: Int
        /// The value's offset in the TIFF block (the entry's own value field when it fits).
        var offset: Int
    }

    mutating func firstIFD() -> Int? {
        guard bytes.count >= 8 else { return nil }
        switch (bytes[base], bytes[base + 1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return nil
        }
        guard u16(2) == 42 else { return nil }
        return u32(4)
    }

    func u16(_ at: Int) -> Int? {
        guard at >= 0, at + 2 <= bytes.count else { return nil }
        let a = Int(bytes[base + at]), b = Int(bytes[base + at + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    func u32(_ at: Int) -> Int? {
        guard let hi = u16(bigEndian ? at : at + 2), let lo = u16(bigEndian ? at + 2 : at) else { return nil }
        return hi << 16 | lo
    }

    /// The entries of the directory at `offset`, by tag (at most 512 are read).
    func entries(at offset: Int) -> [Int: Entry] {
        guard let count = u16(offset), count <= 512 else { return [:] }
        var found: [Int: Entry] = [:]
        for k in 0..<count {
            let e = offset + 2 + 12 * k
            guard let tag = u16(e), let type = u16(e + 2), let n = u32(e + 4) else { break }
            let size = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8][type] ?? 0
            guard size > 0, n <= 1 << 20 else { continue }
            let valueOffset = size * n <= 4 ? e + 8 : u32(e + 8) ?? -1
            found[tag] = Entry(type: type, count: n, offset: valueOffset)
        }
        return found
    }

    func integer(_ e: Entry) -> Int? {
        switch e.type {
        case 3: u16(e.offset)
        case 4, 9: u32(e.offset)
        default: nil
        }
    }

    func ascii(_ e: Entry) -> String? {
        guard e.type == 2, e.offset >= 0, e.offset + e.count <= bytes.count else { return nil }
        return String(decoding: bytes[(base + e.offset)..<(base + e.offset + e.count)].prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Degrees, minutes and seconds (three rationals) as degrees.
    func degrees(_ e: Entry) -> Double? {
        guard e.type == 5, e.count == 3 else { return nil }
        var total = 0.0
        for (k, unit) in [1.0, 60.0, 3600.0].enumerated() {
            guard let n = u32(e.offset + 8 * k), let d = u32(e.offset + 8 * k + 4), d != 0 else { return nil }
            total += Double(n) / Double(d) / unit
        }
        return total
    }
}
