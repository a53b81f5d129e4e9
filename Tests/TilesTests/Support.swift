import CPNG
import Clustering
import Foundation
import Geometry
import Testing

@testable import Tiles

/// An index of 8 statuses over reports placed in world pixels of `zoom`.
func makeIndex(_ reports: [(px: Double, py: Double, status: Int)], zoom: Int) throws -> ClusterIndex {
    let world = 256 * pow(2, Double(zoom))
    let entries = reports.enumerated().map { i, r in
        ClusterEntry(
            id: Int64(i + 1),
            coordinate: Coordinate(longitude: WebMercator.longitude(x: r.px / world), latitude: WebMercator.latitude(y: r.py / world)),
            status: r.status, createdAt: 0)
    }
    return try ClusterIndex(statusCount: 8, entries: entries)
}

/// `count` reports of status 0 at one world pixel position of `zoom`.
func pile(_ count: Int, at px: Double, _ py: Double) -> [(px: Double, py: Double, status: Int)] {
    Array(repeating: (px, py, 0), count: count)
}

/// A decoded PNG: its size, whether the file has alpha, and its pixels as 8-bit RGBA.
struct Decoded {
    var width: Int
    var height: Int
    var hasAlpha: Bool
    var pixels: [UInt8]

    subscript(x: Int, y: Int) -> Color {
        let i = (y * width + x) * 4
        return Color(red: pixels[i], green: pixels[i + 1], blue: pixels[i + 2], alpha: pixels[i + 3])
    }
}

/// Reads a PNG with libpng's simplified API.
func decode(_ png: [UInt8]) -> Decoded? {
    var image = png_image()
    image.version = png_uint_32(PNG_IMAGE_VERSION)
    let began = png.withUnsafeBytes { png_image_begin_read_from_memory(&image, $0.baseAddress, $0.count) }
    guard began != 0 else { return nil }
    let hasAlpha = image.format & PNG_FORMAT_FLAG_ALPHA != 0
    image.format = PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA
    var pixels = [UInt8](repeating: 0, count: Int(image.width) * Int(image.height) * 4)
    guard png_image_finish_read(&image, nil, &pixels, 0, nil) != 0 else { return nil }
    return Decoded(width: Int(image.width), height: Int(image.height), hasAlpha: hasAlpha, pixels: pixels)
}

/// Draws a window into a fresh canvas.
func drawn(_ renderer: TileRenderer, _ window: MapWindow, filter: ClusterFilter = .all) -> (canvas: Canvas, markers: Int) {
    var canvas = Canvas(width: window.width, height: window.height)
    let markers = renderer.draw(window, on: &canvas, filter: filter)
    return (canvas, markers)
}

/// Whether two colors differ by at most `tolerance` in every channel.
func close(_ a: Color, _ b: Color, tolerance: Int = 1) -> Bool {
    abs(Int(a.red) - Int(b.red)) <= tolerance && abs(Int(a.green) - Int(b.green)) <= tolerance
        && abs(Int(a.blue) - Int(b.blue)) <= tolerance && abs(Int(a.alpha) - Int(b.alpha)) <= tolerance
}
