import Foundation
@testable import Photos
import Testing
import TestSupport

/// Uploads made with libjpeg and libpng and loaded with metadata, processed, then read
/// back by exiftool (an independent reader of every metadata format) and decoded again.
@Suite("Photos re-encoded without metadata")
struct PhotoProcessorTests {
    func color(_ image: RGBImage, x: Int, y: Int) -> String {
        let p = image.pixel(x: x, y: y)
        return p.r > 150 && p.b < 100 ? "red" : p.b > 150 && p.r < 100 ? "blue" : "other"
    }

    @Test("a JPEG with EXIF (orientation 6, GPS), XMP and a comment: stored upright, none of it left, the GPS returned as a hint")
    func jpegStripped() throws {
        let directory = try TemporaryDirectory()
        let upload = TestImages.jpeg(
            width: 400, height: 200, segments: [TestImages.exif(orientation: 6, latitude: 50.4501, longitude: 30.5234), TestImages.xmp, TestImages.comment])
        let before = try TestImages.exiftool(upload, in: directory, name: "upload.jpg")
        #expect(before["EXIF:Orientation"] as? Int == 6 && before["XMP:CreatorTool"] as? String == "SecretCam" && before["EXIF:GPSLatitude"] != nil,
                "the upload carries what the test means it to")
        #expect(Set(TestImages.leaks(before)).isSuperset(of: ["EXIF:Orientation", "EXIF:GPSLatitude", "XMP:CreatorTool", "File:Comment"]), "\(TestImages.leaks(before))")

        let photo = try PhotoProcessor().process(upload)
        #expect(photo.width == 200 && photo.height == 400, "turned a quarter clockwise")
        #expect(abs((photo.exifLatitude ?? 0) - 50.4501) < 1e-4 && abs((photo.exifLongitude ?? 0) - 30.5234) < 1e-4)
        for (name, bytes) in [("stored.jpg", photo.image), ("thumb.jpg", photo.thumbnail)] {
            let tags = try TestImages.exiftool(bytes, in: directory, name: name)
            #expect(TestImages.leaks(tags).isEmpty, "\(name) keeps \(TestImages.leaks(tags))")
            #expect(tags["File:FileType"] as? String == "JPEG")
        }
        let stored = try TestImages.exiftool(photo.image, in: directory, name: "stored.jpg")
        #expect(stored["File:ImageWidth"] as? Int == 200 && stored["File:ImageHeight"] as? Int == 400)
        // The red top-left quarter of the stored-sideways picture stands at the top right.
        let decoded = try Codecs.decodeJPEG(photo.image, denominator: 1)
        #expect(color(decoded, x: 190, y: 10) == "red" && color(decoded, x: 10, y: 10) == "blue" && color(decoded, x: 190, y: 390) == "blue")
    }

    @Test("orientation 8 turns a quarter counter-clockwise, 3 half a turn; 1 and none leave the picture as it is")
    func orientations() throws {
        let cases: [(Int?, (Int, Int), (Int, Int))] = [(8, (200, 400), (10, 390)), (3, (400, 200), (390, 190)), (1, (400, 200), (10, 10)), (nil, (400, 200), (10, 10))]
        for (orientation, size, redAt) in cases {
            let upload = TestImages.jpeg(width: 400, height: 200, segments: orientation.map { [TestImages.exif(orientation: $0)] } ?? [])
            let photo = try PhotoProcessor().process(upload)
            #expect((photo.width, photo.height) == size, "orientation \(orientation ?? 0)")
            let decoded = try Codecs.decodeJPEG(photo.image, denominator: 1)
            #expect(color(decoded, x: redAt.0, y: redAt.1) == "red", "orientation \(orientation ?? 0): the red corner at \(redAt)")
            #expect(photo.exifLatitude == nil && photo.exifLongitude == nil)
        }
    }

    @Test("a PNG with a tEXt chunk is stored as a JPEG without it")
    func pngStripped() throws {
        let directory = try TemporaryDirectory()
        let upload = TestImages.png(width: 300, height: 100)
        let before = try TestImages.exiftool(upload, in: directory, name: "upload.png")
        #expect(before["PNG:Comment"] as? String == "secret" && TestImages.leaks(before) == ["PNG:Comment"])
        let photo = try PhotoProcessor().process(upload)
        let tags = try TestImages.exiftool(photo.image, in: directory, name: "stored.jpg")
        #expect(TestImages.leaks(tags).isEmpty && tags["File:FileType"] as? String == "JPEG", "\(TestImages.leaks(tags))")
        #expect(photo.width == 300 && photo.height == 100)
        let decoded = try Codecs.decodeJPEG(photo.image, denominator: 1)
        #expect(color(decoded, x: 5, y: 5) == "red")
    }

    @Test("a 4000×3000 camera photo is stored at 2000×1500 (DCT-scaled), its thumbnail at 320×240; the name is the SHA-256 of the stored bytes")
    func sizes() throws {
        let photo = try PhotoProcessor().process(TestImages.jpeg(width: 4000, height: 3000))
        #expect((photo.width, photo.height) == (2000, 1500))
        let thumbnail = try Codecs.decodeJPEG(photo.thumbnail, denominator: 1)
        #expect((thumbnail.width, thumbnail.height) == (320, 240))
        let wide = try PhotoProcessor().process(TestImages.jpeg(width: 5000, height: 1000))
        #expect(wide.width == 2048 && wide.height == 410, "shrunk after DCT scaling to fit 2048")
        let again = try PhotoProcessor().process(TestImages.jpeg(width: 4000, height: 3000))
        #expect(photo.sha256.count == 64 && photo.sha256 == again.sha256, "the same upload is the same stored file")
    }

    @Test("bad uploads are refused by rule, none crashes: truncated JPEG, bad PNG CRC, empty, GIF, HTML, decompression bombs")
    func refusals() throws {
        let jpeg = TestImages.jpeg(width: 64, height: 64)
        var hugeJPEG = TestImages.jpeg(width: 16, height: 16)
        // The SOF0 segment's height and width fields, rewritten to 60000×60000.
        let sof = try #require((0..<(hugeJPEG.count - 1)).first { hugeJPEG[$0] == 0xFF && hugeJPEG[$0 + 1] == 0xC0 })
        hugeJPEG.replaceSubrange((sof + 5)..<(sof + 9), with: [0xEA, 0x60, 0xEA, 0x60])
        let cases: [(String, [UInt8], ImageRejected.Rule)] = [
            ("truncated JPEG", Array(jpeg.prefix(jpeg.count / 2)), .damaged),
            ("PNG with a bad CRC", TestImages.png(width: 8, height: 8, corruptCRC: true), .damaged),
            ("empty", [], .format),
            ("GIF", Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0], .format),
            ("HTML named .jpg", Array("<html><body>hi</body></html>".utf8), .format),
            ("PNG bomb 60000×60000", TestImages.bombPNG(width: 60_000, height: 60_000), .pixels),
            ("JPEG bomb 60000×60000", hugeJPEG, .pixels),
            ("JPEG header only", Array(jpeg.prefix(3)), .damaged),
        ]
        for (name, bytes, rule) in cases {
            #expect(throws: ImageRejected.self, "\(name)") { _ = try PhotoProcessor().process(bytes) }
            do { _ = try PhotoProcessor().process(bytes) } catch { #expect(error.rule == rule, "\(name): \(error)") }
        }
    }
}

/// Content-addressed files: stored once, collected when no row names them.
@Suite("Photo files")
struct PhotoFilesTests {
    @Test("stored once under the SHA-256's name; collection removes exactly the unnamed pictures with their thumbnails")
    func storeAndCollect() throws {
        let directory = try TemporaryDirectory()
        let files = try PhotoFiles(root: directory.url)
        let kept = try PhotoProcessor().process(TestImages.jpeg(width: 64, height: 48))
        let dropped = try PhotoProcessor().process(TestImages.jpeg(width: 48, height: 64))
        try files.store(kept)
        try files.store(kept)
        try files.store(dropped)
        #expect(files.read(kept.sha256, thumbnail: false) == Data(kept.image) && files.read(kept.sha256, thumbnail: true) == Data(kept.thumbnail))
        #expect(try files.collect(keeping: [kept.sha256]) == 0, "nothing is an hour old yet")
        #expect(try files.collect(keeping: [kept.sha256], olderThan: -1) == 1)
        #expect(files.read(dropped.sha256, thumbnail: false) == nil && files.read(dropped.sha256, thumbnail: true) == nil)
        #expect(files.read(kept.sha256, thumbnail: true) != nil)
        #expect(files.read("../../etc/passwd", thumbnail: false) == nil, "only hex names are read")
    }
}
