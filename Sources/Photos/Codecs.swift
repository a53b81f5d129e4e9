import CJPEG
import CPNG
import Foundation

/// Why an image was refused, by the rule it broke.
public struct ImageRejected: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Rule: String, Sendable {
        /// Neither JPEG nor PNG by its first bytes.
        case format
        /// More pixels than allowed (read from the header, before decoding).
        case pixels
        /// Truncated, corrupt or otherwise undecodable.
        case damaged
    }

    public var rule: Rule
    public var reason: String
    public var description: String { reason }
}

/// libjpeg-turbo and libpng, behind Swift calls that throw ``ImageRejected``.
enum Codecs {
    /// The width and height a JPEG's header declares.
    static func jpegSize(_ data: [UInt8]) throws(ImageRejected) -> (width: Int, height: Int) {
        var width: Int32 = 0, height: Int32 = 0
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        let failed = data.withUnsafeBufferPointer { cjpeg_size($0.baseAddress, UInt($0.count), &width, &height, &message) }
        guard failed == 0 else { throw ImageRejected(rule: .damaged, reason: "not a readable JPEG: \(text(message))") }
        return (Int(width), Int(height))
    }

    /// A JPEG of `size` (its header's) decoded to RGB at 1/`denominator` of it (1, 2, 4 or
    /// 8), scaled while decoding (libjpeg's DCT-domain scaling: far less work than decoding
    /// whole), straight into the picture's own array.
    static func decodeJPEG(_ data: [UInt8], size: (width: Int, height: Int), denominator: Int) throws(ImageRejected) -> RGBImage {
        // libjpeg's scaled size: each side divided, rounded up.
        let width = (size.width + denominator - 1) / denominator, height = (size.height + denominator - 1) / denominator
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        var failed: Int32 = 1
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height * 3) { buffer, count in
            failed = data.withUnsafeBufferPointer {
                cjpeg_decode($0.baseAddress, UInt($0.count), Int32(denominator), buffer.baseAddress, Int32(width), Int32(height), &message)
            }
            count = failed == 0 ? buffer.count : 0
        }
        guard failed == 0 else { throw ImageRejected(rule: .damaged, reason: "not a readable JPEG: \(text(message))") }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    /// A JPEG decoded to RGB at 1/`denominator` of the size its header gives.
    static func decodeJPEG(_ data: [UInt8], denominator: Int) throws(ImageRejected) -> RGBImage {
        try decodeJPEG(data, size: try jpegSize(data), denominator: denominator)
    }

    /// RGB encoded as a baseline JPEG with only a JFIF header (no EXIF, XMP, IPTC or comment),
    /// with Huffman tables made for it when `optimize` (a second pass, some 15% fewer bytes).
    static func encodeJPEG(_ image: RGBImage, quality: Int, optimize: Bool) throws(ImageRejected) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        let failed = image.pixels.withUnsafeBufferPointer {
            cjpeg_encode($0.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), optimize ? 1 : 0, &out, &size, &message)
        }
        guard failed == 0, let out else { throw ImageRejected(rule: .damaged, reason: "cannot encode: \(text(message))") }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// A PNG's header read (its size checked by `allow` before any pixel is allocated),
    /// then its pixels as RGB, transparency composited over white. Text and other
    /// ancillary chunks are not read into the result.
    static func decodePNG(_ data: [UInt8], allow: (Int, Int) throws(ImageRejected) -> Void) throws(ImageRejected) -> RGBImage {
        // libpng reads from the bytes between the two calls: both run while they are pinned.
        let result = data.withUnsafeBufferPointer { bytes -> Result<RGBImage, ImageRejected> in
            var image = png_image()
            image.version = UInt32(PNG_IMAGE_VERSION)
            defer { png_image_free(&image) }
            guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else {
                return .failure(ImageRejected(rule: .damaged, reason: "not a readable PNG: \(message(of: image))"))
            }
            do throws(ImageRejected) { try allow(Int(image.width), Int(image.height)) } catch { return .failure(error) }
            image.format = UInt32(PNG_FORMAT_RGB)
            var pixels = [UInt8](repeating: 0, count: Int(image.width) * Int(image.height) * 3)
            var white = png_color(red: 255, green: 255, blue: 255)
            guard pixels.withUnsafeMutableBytes({ png_image_finish_read(&image, &white, $0.baseAddress, 0, nil) }) != 0 else {
                return .failure(ImageRejected(rule: .damaged, reason: "not a readable PNG: \(message(of: image))"))
            }
            return .success(RGBImage(width: Int(image.width), height: Int(image.height), pixels: pixels))
        }
        return try result.get()
    }

    /// A C message buffer as text, up to its terminating zero.
    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
