import Clustering
import Foundation

/// An sRGB color with straight (not premultiplied) alpha, 8 bits per channel.
///
/// ```swift
/// let red = Color(0xE03131)                 // opaque, from 0xRRGGBB
/// let shadow = Color(0x000000, alpha: 90)   // black at 35 % opacity
/// ```
public struct Color: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    /// 0 transparent, 255 opaque.
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// The color `0xRRGGBB` at `alpha`.
    public init(_ rgb: UInt32, alpha: UInt8 = 255) {
        self.init(
            red: UInt8(truncatingIfNeeded: rgb >> 16), green: UInt8(truncatingIfNeeded: rgb >> 8), blue: UInt8(truncatingIfNeeded: rgb),
            alpha: alpha)
    }

    public static let white = Color(0xFFFFFF)
    public static let black = Color(0x000000)
    public static let clear = Color(0x000000, alpha: 0)

    /// `#rrggbbaa`.
    public var description: String {
        "#" + [red, green, blue, alpha].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// Colors of single reports by status number.
///
/// The default has one color per status of the bundled reference list, in its order:
/// new (blue), verifying (amber), confirmed (red), phone blocked (violet), removed (green),
/// rejected (grey), duplicate (light grey), cancelled (dark grey). A status number past the
/// end of `colors` takes `fallback`.
///
/// ```swift
/// var palette = StatusPalette.default
/// palette.colors[2] = Color(0xC92A2A)     // a darker "confirmed"
/// palette[status: 2]                      // #c92a2aff
/// let twoStatuses = StatusPalette(colors: [Color(0x1C7ED6), Color(0x2F9E44)])
/// ```
public struct StatusPalette: Sendable, Hashable {
    /// `colors[s]` is the color of status number `s`.
    public var colors: [Color]
    /// The color of a status number without an entry in `colors`.
    public var fallback: Color

    public init(colors: [Color], fallback: Color = Color(0x868E96)) {
        self.colors = colors
        self.fallback = fallback
    }

    public subscript(status status: Int) -> Color {
        colors.indices.contains(status) ? colors[status] : fallback
    }

    /// Eight colors for the eight statuses of the bundled reference data.
    public static let `default` = StatusPalette(colors: [
        Color(0x1C7ED6),  // new
        Color(0xF59F00),  // verifying
        Color(0xE03131),  // confirmed
        Color(0x7048E8),  // phone_blocked
        Color(0x2F9E44),  // removed
        Color(0x868E96),  // rejected
        Color(0xADB5BD),  // duplicate
        Color(0x495057),  // cancelled
    ])
}

/// How markers look: sizes in pixels of a 256-px tile (multiplied by the scale of `@2x`
/// tiles), colors of clusters by count and of single reports by status, and the count label.
///
/// A cluster is a disc whose radius grows with the logarithm of its count
/// (`clusterRadius + radiusPerDecade · log10(count)`, at most `maxClusterRadius`), ringed by
/// `outlineWidth` of `outlineColor`, colored `fewColor` below `manyFrom` reports,
/// `manyColor` below `veryManyFrom` and `veryManyColor` from there, with its count label
/// centred on it. A single report is a dot of `reportRadius` with the same ring.
///
/// ```swift
/// var style = TileStyle.default
/// style.manyFrom = 50
/// style.statusColors = StatusPalette(colors: [Color(0x1C7ED6), Color(0x2F9E44)])
/// style.countLabel = { String($0) }     // exact counts, no "1.2k"
/// let renderer = TileRenderer(index: index, style: style)
/// ```
public struct TileStyle: Sendable {
    /// The radius of a cluster of one report; a cluster of `n` adds `radiusPerDecade · log10(n)`.
    public var clusterRadius = 11.0
    public var radiusPerDecade = 4.0
    /// The largest cluster radius (reached at 100,000 reports with the defaults).
    public var maxClusterRadius = 31.0
    /// The radius of a single report's dot.
    public var reportRadius = 5.0
    /// The light ring around every marker, outside its radius. Opaque by default: a
    /// translucent ring blends with whatever it overlaps, which can take a busy tile past
    /// the 256 colors of a palette (and double its size).
    public var outlineWidth = 1.5
    public var outlineColor = Color.white

    /// Cluster colors: few (below `manyFrom`), many (below `veryManyFrom`), very many.
    public var fewColor = Color(0xF76707)
    public var manyColor = Color(0xE03131)
    public var veryManyColor = Color(0xA61E4D)
    public var manyFrom = 100
    public var veryManyFrom = 1_000

    /// Single reports by status number.
    public var statusColors = StatusPalette.default

    /// The count label: digits, `.`, `k` and `M` are drawn, other characters are skipped.
    public var countLabel: @Sendable (Int) -> String = Cluster.abbreviated
    /// The digit font's height and stroke, and the label's colors.
    public var font = DigitFont.standard
    public var textColor = Color.white
    /// A dark rim around the digits that keeps them legible on light discs (clear: none).
    public var haloColor = Color(0x000000, alpha: 80)
    public var haloWidth = 1.0

    public init() {}

    /// Light outlines and saturated fills that read on a neutral grey and on OSM-like maps.
    public static let `default` = TileStyle()

    /// The radius of a cluster of `count` reports.
    public func radius(count: Int) -> Double {
        min(clusterRadius + radiusPerDecade * log10(Double(max(count, 1))), maxClusterRadius)
    }

    /// The fill of a cluster of `count` reports.
    public func color(count: Int) -> Color {
        count >= veryManyFrom ? veryManyColor : count >= manyFrom ? manyColor : fewColor
    }

    /// How far any marker reaches from its position, in pixels of a 256-px tile: the
    /// largest disc with its ring, or the widest label with its halo, plus a pixel of
    /// anti-aliasing. The widest label is taken to be the widest of `countLabel` at 9, 99,
    /// …, 999,999,999, which holds for decimal and abbreviated counts; a wider label
    /// (another kind of formatter) may be cut at the edges of the tiles it crosses.
    public var maxExtent: Double {
        let disc = max(maxClusterRadius, reportRadius) + outlineWidth
        var nines = 9, widest = 0.0
        while nines < 1_000_000_000 {
            widest = max(widest, font.width(of: countLabel(nines)))
            nines = nines * 10 + 9
        }
        return max(disc, labelReach(width: widest)) + 1
    }

    /// How far a label of `width` pixels reaches from its centre at scale 1: half its
    /// box's diagonal with the halo, and half a pixel of snapping each way.
    func labelReach(width: Double) -> Double {
        let halo = haloColor.alpha > 0 ? haloWidth : 0
        let x = width / 2 + halo + 0.5, y = font.height / 2 + halo + 0.5
        return (x * x + y * y).squareRoot()
    }
}
