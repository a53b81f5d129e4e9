import Crypto
import Foundation

/// A photo as it is kept: re-encoded from its pixels alone, so that nothing of the
/// uploaded file's metadata (GPS track, device, time, XMP, IPTC, comments, PNG text
/// chunks) survives; turned upright first by its EXIF orientation.
public struct ProcessedPhoto: Sendable, Hashable {
    /// The stored JPEG (at most ``PhotoProcessor/longSide`` px on its long side).
    public var image: [UInt8]
    public var width: Int
    public var height: Int
    /// The thumbnail JPEG (at most ``PhotoProcessor/thumbnailSide`` px on its long side).
    public var thumbnail: [UInt8]
    /// The stored image's SHA-256 in hex: its name in content-addressed storage.
    public var sha256: String
    /// The upload's own GPS position, when its EXIF had one: a hint for the app, never stored.
    public var exifLongitude: Double?
    public var exifLatitude: Double?
}

/// Decodes an upload (JPEG or PNG, judged by its bytes), checks its size from its header
/// before any pixel is allocated, turns it upright, shrinks it and encodes it and its
/// thumbnail as JPEG. An embedded ICC profile is dropped, not converted: phone cameras
/// write sRGB, and the pixels are kept as they are.
public struct PhotoProcessor: Sendable {
    public static let longSide = 2_048
    public static let thumbnailSide = 320
    public static let quality = 85
    /// The most pixels an upload may declare (50 megapixels).
    public var maxPixels = 50_000_000
    /// Whether the stored picture gets Huffman tables made for it: some 15% fewer bytes
    /// for as much time again as the rest of its encoding, so not by default. The
    /// thumbnail always gets them: it is small enough for them to cost nothing.
    public var optimizedTables = false

    public init() {}

    public func process(_ data: [UInt8]) throws(ImageRejected) -> ProcessedPhoto {
        guard let format = ImageFormat(sniffing: data) else {
            throw ImageRejected(rule: .format, reason: "the file is neither a JPEG nor a PNG (judged by its first bytes)")
        }
        var facts = ExifFacts()
        var picture: RGBImage
        switch format {
        case .jpeg:
            let size = try Codecs.jpegSize(data)
            try allow(size.width, size.height)
            facts = ExifFacts(jpeg: data)
            picture = try Codecs.decodeJPEG(data, size: size, denominator: Self.denominator(longSide: max(size.width, size.height)))
        case .png:
            picture = try Codecs.decodePNG(data, allow: allow)
        }
        let stored = picture.oriented(facts.orientation).fitted(within: Self.longSide)
        let image = try Codecs.encodeJPEG(stored, quality: Self.quality, optimize: optimizedTables)
        let thumbnail = try Codecs.encodeJPEG(stored.fitted(within: Self.thumbnailSide), quality: Self.quality, optimize: true)
        return ProcessedPhoto(
            image: image, width: stored.width, height: stored.height, thumbnail: thumbnail,
            sha256: SHA256.hash(data: image).map { String(format: "%02x", $0) }.joined(),
            exifLongitude: facts.longitude, exifLatitude: facts.latitude)
    }

    private func allow(_ width: Int, _ height: Int) throws(ImageRejected) {
        guard width > 0, height > 0 else { throw ImageRejected(rule: .damaged, reason: "the image declares no pixels") }
        guard width * height <= maxPixels else {
            throw ImageRejected(rule: .pixels, reason: "the image is \(width)×\(height): more than \(maxPixels / 1_000_000) megapixels")
        }
    }

    /// The largest DCT scaling (1/1, 1/2, 1/4, 1/8) that leaves the long side at least
    /// three quarters of ``longSide``: a 4000×3000 photo decodes at 2000×1500 and needs no
    /// further resampling.
    static func denominator(longSide side: Int) -> Int {
        [8, 4, 2].first { (side + $0 - 1) / $0 >= longSide * 3 / 4 } ?? 1
    }
}
