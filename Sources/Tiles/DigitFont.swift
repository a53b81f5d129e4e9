import Foundation

/// A stroke font for count labels: the digits `0`–`9`, `.`, `k` and `M`, of our own design.
///
/// Each glyph is a few polylines (straight strokes, and arcs as chords of 22.5°) on a grid of
/// design units: digits are 4 units wide and 7 high between stroke centres, `k` 3, `M` 5
/// and `.` 0. The canvas draws them as round-capped strokes of `strokeWidth` pixels
/// (anti-aliased by distance to the nearest stroke, like the discs) after snapping the
/// label's first stroke centre to a pixel centre; so with the default 1-px unit, 1.5-px
/// strokes and 0.5-px tracking every digit sits on the pixel grid the same way, its vertical
/// and horizontal strokes one solid pixel wide with faint edges (three solid pixels at
/// `@2x`), which keeps 8-px digits legible.
///
/// ```swift
/// let font = DigitFont.standard.scaled(by: 2)     // for @2x tiles
/// font.width(of: "1.2k")                           // 37 pixels of ink
/// canvas.drawText("1.2k", centerX: 100, centerY: 80, font: font, color: .white)
/// ```
public struct DigitFont: Sendable, Hashable {
    /// Pixels per design unit (digits are 7 units high between stroke centres).
    public var unit: Double
    /// The width of the strokes, in pixels.
    public var strokeWidth: Double
    /// Extra space between glyphs, in pixels.
    public var tracking: Double

    public init(unit: Double = 1, strokeWidth: Double = 1.5, tracking: Double = 0.5) {
        self.unit = unit
        self.strokeWidth = strokeWidth
        self.tracking = tracking
    }

    /// 8.5-px digits for 256-px tiles.
    public static let standard = DigitFont()

    /// The font `factor` times larger (for `@2x` tiles: 2).
    public func scaled(by factor: Double) -> DigitFont {
        DigitFont(unit: unit * factor, strokeWidth: strokeWidth * factor, tracking: tracking * factor)
    }

    /// The height of the ink of a label, in pixels.
    public var height: Double { 7 * unit + strokeWidth }

    /// Whether the font has a glyph for the character.
    public static func draws(_ character: Character) -> Bool { Glyph.table[character] != nil }

    /// The width of the ink of `text` (characters without a glyph skipped), in pixels.
    public func width(of text: String) -> Double {
        let glyphs = text.compactMap { Glyph.table[$0] }
        guard !glyphs.isEmpty else { return 0 }
        return glyphs.reduce(0) { $0 + $1.width * unit + strokeWidth } + Double(glyphs.count - 1) * tracking
    }

    /// The strokes of `text` as segments in pixels, relative to the centre of its first
    /// stroke's top-left (design point (0, 0) of the first glyph).
    func segments(of text: String) -> [Segment] {
        var segments: [Segment] = []
        var x = 0.0
        for character in text {
            guard let glyph = Glyph.table[character] else { continue }
            for s in glyph.segments {
                segments.append(Segment(x0: x + s.x0 * unit, y0: s.y0 * unit, x1: x + s.x1 * unit, y1: s.y1 * unit))
            }
            x += glyph.width * unit + strokeWidth + tracking
        }
        return segments
    }
}

/// A straight piece of a stroke, between two points.
struct Segment: Sendable, Hashable {
    var x0: Double, y0: Double, x1: Double, y1: Double
}

/// One character's strokes in design units (y down, digits in 0...4 × 0...7).
struct Glyph: Sendable {
    var width: Double
    var segments: [Segment]

    init(width: Double, _ strokes: [[(Double, Double)]]) {
        self.width = width
        segments = strokes.flatMap { points in
            points.count == 1
                ? [Segment(x0: points[0].0, y0: points[0].1, x1: points[0].0, y1: points[0].1)]
                : zip(points, points.dropFirst()).map { Segment(x0: $0.0, y0: $0.1, x1: $1.0, y1: $1.1) }
        }
    }

    /// Points along an elliptic arc from angle `from` to `to` (degrees, clockwise on screen
    /// since y points down), one chord per 22.5° at most (0.04 units off the curve at
    /// radius 2).
    static func arc(_ cx: Double, _ cy: Double, _ rx: Double, _ ry: Double, _ from: Double, _ to: Double) -> [(Double, Double)] {
        let steps = max(1, Int((abs(to - from) / 22.5).rounded(.up)))
        return (0...steps).map { i in
            let a = (from + (to - from) * Double(i) / Double(steps)) * .pi / 180
            return (cx + rx * cos(a), cy + ry * sin(a))
        }
    }

    /// The glyph turned half a turn inside the digit box (6 into 9).
    func rotated() -> Glyph {
        var g = self
        g.segments = segments.map { Segment(x0: width - $0.x0, y0: 7 - $0.y0, x1: width - $0.x1, y1: 7 - $0.y1) }
        return g
    }

    static let six = Glyph(width: 4, [arc(2, 5, 2, 2, 0, 360), [(0, 5)] + arc(2.2, 2.6, 2.2, 2.6, 180, 300)])

    static let table: [Character: Glyph] = [
        "0": Glyph(width: 4, [arc(2, 2, 2, 2, 180, 360) + arc(2, 5, 2, 2, 0, 180) + [(0, 2)]]),
        "1": Glyph(width: 4, [[(0.6, 1.4), (2, 0), (2, 7)]]),
        "2": Glyph(width: 4, [arc(2, 2, 2, 2, 200, 385) + [(0, 7), (4, 7)]]),
        "3": Glyph(width: 4, [arc(2, 1.75, 1.9, 1.75, 205, 450), arc(2, 5.25, 2, 1.75, 270, 515)]),
        "4": Glyph(width: 4, [[(3, 7), (3, 0), (0, 4.8), (4, 4.8)]]),
        "5": Glyph(width: 4, [[(3.8, 0), (0.4, 0), (0.1, 3.5)] + arc(2, 4.9, 2, 2.1, 232, 510)]),
        "6": six,
        "7": Glyph(width: 4, [[(0, 0), (4, 0), (1.4, 7)]]),
        "8": Glyph(width: 4, [arc(2, 1.7, 1.75, 1.7, 0, 360), arc(2, 5.2, 2, 1.8, 0, 360)]),
        "9": six.rotated(),
        ".": Glyph(width: 0, [[(0, 7)]]),
        "k": Glyph(width: 3, [[(0, 0), (0, 7)], [(3, 2.5), (0, 5.3)], [(1.1, 4.3), (3.2, 7)]]),
        "M": Glyph(width: 5, [[(0, 7), (0, 0), (2.5, 4.5), (5, 0), (5, 7)]]),
    ]
}
