import Foundation

/// An RGBA image to draw markers on: 8 bits per channel, **straight (not premultiplied)
/// alpha**, rows top to bottom, starting fully transparent.
///
/// Straight alpha is what PNG stores, so the encoder copies rows as they are, and the edge
/// pixels of a disc on a transparent background keep the disc's exact color (only their
/// alpha varies), which keeps palettes small.
///
/// Shapes are anti-aliased by coverage from distance: a pixel whose centre lies `d` pixels
/// inside (+) or outside (−) a shape's outline is covered `clamp(0.5 + d, 0, 1)`, which is
/// exact for straight edges and within a few hundredths for curves of radius ≥ 2 px, then
/// rounded to sixteenths (the levels 4 × 4 supersampling gives) so that a tile has few
/// enough colors for a palette. A pixel's value depends only on the offset of its centre
/// from the shape's centre and on what is under it; given centres whose offsets from pixel
/// centres are exact (the renderer's are), two canvases whose origins differ by whole
/// pixels draw a shape into the same pixels identically: tiles meet without a seam.
///
/// ```swift
/// var canvas = Canvas(width: 256, height: 256)
/// canvas.fillCircle(centerX: 100.25, centerY: 80.75, radius: 13, color: Color(0xE03131), outline: .white, outlineWidth: 1.5)
/// canvas.drawText("86", centerX: 100.25, centerY: 80.75, font: .standard, color: .white)
/// canvas.fillCircle(centerX: 30, centerY: 40, radius: 5, color: Color(0x1C7ED6))
/// canvas[100, 80]          // the pixel in column 100, row 80
/// let png = try PNG.encode(canvas)
/// ```
public struct Canvas: Sendable, Hashable {
    public let width: Int
    public let height: Int
    /// `width · height · 4` bytes: red, green, blue, alpha of each pixel, row by row.
    public private(set) var pixels: [UInt8]

    /// A transparent canvas (width and height at least 1).
    public init(width: Int, height: Int) {
        precondition(width > 0 && height > 0, "a canvas needs at least one pixel, got \(width)×\(height)")
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: 0, count: width * height * 4)
    }

    /// The pixel in column `x`, row `y`.
    public subscript(x: Int, y: Int) -> Color {
        let i = (y * width + x) * 4
        return Color(red: pixels[i], green: pixels[i + 1], blue: pixels[i + 2], alpha: pixels[i + 3])
    }

    /// Whether every pixel is fully transparent.
    public var isTransparent: Bool {
        stride(from: 3, to: pixels.count, by: 4).allSatisfy { pixels[$0] == 0 }
    }

    // MARK: Shapes

    /// Paints a disc; returns whether it painted any pixel.
    @discardableResult
    public mutating func fillCircle(centerX: Double, centerY: Double, radius: Double, color: Color) -> Bool {
        let outer = (radius + 0.5) * (radius + 0.5), inner = radius > 0.5 ? (radius - 0.5) * (radius - 0.5) : -1
        return paint(centerX: centerX, centerY: centerY, reach: radius, color: color) { dx, dy in
            let d2 = dx * dx + dy * dy
            return d2 >= outer ? 0 : d2 <= inner ? 1 : radius - d2.squareRoot() + 0.5
        }
    }

    /// Paints a disc ringed by `outlineWidth` of `outline` outside its radius: the same
    /// pixels as filling the larger disc with `outline` and then the disc with `fill`, in
    /// one pass (the ring is not painted where an opaque fill covers it). Returns whether
    /// it painted any pixel.
    @discardableResult
    public mutating func fillCircle(
        centerX: Double, centerY: Double, radius: Double, color fill: Color, outline: Color, outlineWidth: Double
    ) -> Bool {
        let ring = radius + max(outlineWidth, 0)
        let outer = (ring + 0.5) * (ring + 0.5)
        let solid = fill.alpha == 255 && radius > 0.5 ? (radius - 0.5) * (radius - 0.5) : -1
        guard let (x0, x1, y0, y1) = box(centerX: centerX, centerY: centerY, reach: ring) else { return false }
        let width = self.width
        return pixels.withUnsafeMutableBufferPointer { p in
            var painted = false
            for row in y0..<y1 {
                let dy = Double(row) + 0.5 - centerY
                for column in x0..<x1 {
                    let dx = Double(column) + 0.5 - centerX
                    let d2 = dx * dx + dy * dy
                    guard d2 < outer else { continue }
                    let i = (row * width + column) * 4
                    if d2 <= solid {
                        painted = Self.blend(p, i, fill, 1) || painted
                    } else {
                        let d = d2.squareRoot()
                        painted = Self.blend(p, i, outline, ring - d + 0.5) || painted
                        painted = Self.blend(p, i, fill, radius - d + 0.5) || painted
                    }
                }
            }
            return painted
        }
    }

    /// Paints a ring of `width` centred on the circle of `radius`; returns whether it
    /// painted any pixel.
    @discardableResult
    public mutating func strokeCircle(centerX: Double, centerY: Double, radius: Double, width: Double, color: Color) -> Bool {
        paint(centerX: centerX, centerY: centerY, reach: radius + width / 2, color: color) { dx, dy in
            width / 2 - abs((dx * dx + dy * dy).squareRoot() - radius) + 0.5
        }
    }

    /// Writes `text` in `font`, centred on a point, with an optional halo of `haloWidth`
    /// around the strokes; characters without a glyph are skipped. Returns whether it
    /// painted any pixel.
    ///
    /// The label's first stroke centre is moved by under half a pixel to a pixel centre, so
    /// a label looks the same wherever it is drawn.
    @discardableResult
    public mutating func drawText(
        _ text: String, centerX: Double, centerY: Double, font: DigitFont, color: Color, halo: Color = .clear, haloWidth: Double = 0
    ) -> Bool {
        let segments = font.segments(of: text)
        let textRadius = font.strokeWidth / 2
        let haloRadius = halo.alpha == 0 ? textRadius : textRadius + haloWidth
        let reach = font.width(of: text) + font.height + haloRadius + 2
        guard !segments.isEmpty, abs(centerX - Double(width) / 2) < Double(width) / 2 + reach,
            abs(centerY - Double(height) / 2) < Double(height) / 2 + reach
        else { return false }
        // The pixel whose centre is the design origin: the label's first stroke centre
        // (left) and top stroke centre, rounded to pixel centres. floor(c) + floor(f - a)
        // = floor(c - a), computed from the fraction so that canvases whose origins differ
        // by whole pixels round alike.
        func snapped(_ c: Double, _ a: Double) -> Int {
            let whole = c.rounded(.down)
            return Int(whole) + Int((c - whole - a).rounded(.down))
        }
        let originX = snapped(centerX, font.width(of: text) / 2 - font.strokeWidth / 2)
        let originY = snapped(centerY, 3.5 * font.unit)
        // The box of the strokes in pixels from the origin, and the squared distance of
        // each of its pixel centres from the nearest stroke.
        let margin = haloRadius + 1
        let x0 = Int((segments.map { min($0.x0, $0.x1) }.min()! - margin).rounded(.down))
        let x1 = Int((segments.map { max($0.x0, $0.x1) }.max()! + margin).rounded(.up))
        let y0 = Int((segments.map { min($0.y0, $0.y1) }.min()! - margin).rounded(.down))
        let y1 = Int((segments.map { max($0.y0, $0.y1) }.max()! + margin).rounded(.up))
        let w = x1 - x0 + 1, h = y1 - y0 + 1
        let left = originX + x0, top = originY + y0
        let c0 = max(left, 0), c1 = min(left + w, width), r0 = max(top, 0), r1 = min(top + h, height)
        guard c0 < c1, r0 < r1 else { return false }
        var distance = [Double](repeating: .infinity, count: w * h)
        distance.withUnsafeMutableBufferPointer { distance in
            for s in segments {
                let sx0 = Int((min(s.x0, s.x1) - margin).rounded(.down)), sx1 = Int((max(s.x0, s.x1) + margin).rounded(.up))
                let sy0 = Int((min(s.y0, s.y1) - margin).rounded(.down)), sy1 = Int((max(s.y0, s.y1) + margin).rounded(.up))
                let bx = s.x1 - s.x0, by = s.y1 - s.y0
                let length2 = bx * bx + by * by
                for py in sy0...sy1 {
                    for px in sx0...sx1 {
                        let ax = Double(px) - s.x0, ay = Double(py) - s.y0
                        let t = length2 > 0 ? min(max((ax * bx + ay * by) / length2, 0), 1) : 0
                        let ex = ax - t * bx, ey = ay - t * by
                        let i = (py - y0) * w + (px - x0)
                        distance[i] = min(distance[i], ex * ex + ey * ey)
                    }
                }
            }
        }
        let width = self.width
        let drawsHalo = haloRadius > textRadius
        return pixels.withUnsafeMutableBufferPointer { p in
            var painted = false
            for row in r0..<r1 {
                for column in c0..<c1 {
                    let d = distance[(row - top) * w + (column - left)].squareRoot()
                    let i = (row * width + column) * 4
                    if drawsHalo, Self.blend(p, i, halo, haloRadius - d + 0.5) { painted = true }
                    if Self.blend(p, i, color, textRadius - d + 0.5) { painted = true }
                }
            }
            return painted
        }
    }

    // MARK: Pixels

    /// Paints `color` over the pixels within `reach` (plus a pixel) of a centre, each at
    /// `coverage(dx, dy)` of its centre's offset from that centre.
    @inline(__always)
    private mutating func paint(
        centerX: Double, centerY: Double, reach: Double, color: Color, coverage: (Double, Double) -> Double
    ) -> Bool {
        guard color.alpha > 0, let (x0, x1, y0, y1) = box(centerX: centerX, centerY: centerY, reach: reach) else { return false }
        let width = self.width
        return pixels.withUnsafeMutableBufferPointer { p in
            var painted = false
            for row in y0..<y1 {
                let dy = Double(row) + 0.5 - centerY
                for column in x0..<x1 where Self.blend(p, (row * width + column) * 4, color, coverage(Double(column) + 0.5 - centerX, dy)) {
                    painted = true
                }
            }
            return painted
        }
    }

    /// The columns `x0..<x1` and rows `y0..<y1` of the canvas within `reach` (plus a
    /// pixel) of a centre; nil when there are none.
    private func box(centerX: Double, centerY: Double, reach: Double) -> (x0: Int, x1: Int, y0: Int, y1: Int)? {
        guard centerX.isFinite, centerY.isFinite, reach.isFinite, reach >= 0 else { return nil }
        func clamped(_ v: Double, _ limit: Int) -> Double { min(max(v, 0), Double(limit)) }
        let x0 = Int(clamped(centerX - reach - 1, width).rounded(.down)), x1 = Int(clamped(centerX + reach + 1, width).rounded(.up))
        let y0 = Int(clamped(centerY - reach - 1, height).rounded(.down)), y1 = Int(clamped(centerY + reach + 1, height).rounded(.up))
        return x0 < x1 && y0 < y1 ? (x0, x1, y0, y1) : nil
    }

    /// Composites `color` at `coverage` over the pixel at byte offset `i` ("source over",
    /// straight alpha). Coverage is clamped to 0...1 and rounded to sixteenths, the levels
    /// of 4 × 4 supersampling, which keeps a tile's colors few enough for a palette.
    /// Returns whether it painted (coverage × alpha of at least half a step of 255).
    @inline(__always)
    private static func blend(_ p: UnsafeMutableBufferPointer<UInt8>, _ i: Int, _ color: Color, _ coverage: Double) -> Bool {
        let sixteenths = Int(min(max(coverage, 0), 1) * 16 + 0.5)
        guard sixteenths > 0 else { return false }
        if sixteenths == 16, color.alpha == 255 {
            (p[i], p[i + 1], p[i + 2], p[i + 3]) = (color.red, color.green, color.blue, 255)
            return true
        }
        let sa = Float(sixteenths) / 16 * Float(color.alpha) / 255
        guard sa * 255 >= 0.5 else { return false }
        let da = Float(p[i + 3]) / 255
        if da == 0 {
            (p[i], p[i + 1], p[i + 2], p[i + 3]) = (color.red, color.green, color.blue, UInt8(sa * 255 + 0.5))
            return true
        }
        let keep = da * (1 - sa)
        let oa = sa + keep
        p[i] = UInt8((Float(color.red) * sa + Float(p[i]) * keep) / oa + 0.5)
        p[i + 1] = UInt8((Float(color.green) * sa + Float(p[i + 1]) * keep) / oa + 0.5)
        p[i + 2] = UInt8((Float(color.blue) * sa + Float(p[i + 2]) * keep) / oa + 0.5)
        p[i + 3] = UInt8(oa * 255 + 0.5)
        return true
    }
}
