import Clustering
import Geometry
import Testing

@testable import Tiles

/// Tiles of a known index: where markers go, what they look like, and that tiles meet.
@Suite("Tile renderer")
struct TileRendererTests {
    /// A zoom-12 tile over Kyiv and its north-west corner in world pixels.
    static let tile = try! TileID(z: 12, x: 2395, y: 1386)
    static let left = 2395.0 * 256, top = 1386.0 * 256
    let style = TileStyle.default

    @Test("a cluster is an opaque disc of its count's color with a light ring, nothing far from it")
    func clusterDisc() throws {
        let index = try makeIndex(pile(7, at: Self.left + 100.25, Self.top + 120.75), zoom: 12)
        let (canvas, markers) = drawn(TileRenderer(index: index), try MapWindow(tile: Self.tile))
        #expect(markers == 1)
        #expect(canvas[100, 130] == style.fewColor)  // inside the disc, below the label
        #expect(canvas[91, 120] == style.fewColor)  // left of the label
        #expect(close(canvas[100, 105], style.outlineColor))  // 15.25 px out: the ring
        #expect(canvas[100, 103] == .clear)  // 17.25 px out: past the ring
        #expect(canvas[10, 240] == .clear)
        #expect(canvas[200, 20] == .clear)
    }

    @Test("a cluster's color follows its count: few, many, very many")
    func countColors() throws {
        let index = try makeIndex(
            pile(5, at: Self.left + 40.5, Self.top + 40.5) + pile(150, at: Self.left + 140.5, Self.top + 40.5)
                + pile(2000, at: Self.left + 100.5, Self.top + 180.5), zoom: 12)
        let (canvas, markers) = drawn(TileRenderer(index: index), try MapWindow(tile: Self.tile))
        #expect(markers == 3)
        #expect(canvas[40, 50] == style.fewColor)
        #expect(canvas[140, 52] == style.manyColor)
        #expect(canvas[100, 195] == style.veryManyColor)
        #expect(style.radius(count: 5) < style.radius(count: 150) && style.radius(count: 150) < style.radius(count: 2000))
    }

    @Test("the count is written on the disc in text-colored digits, more of them for 86 than for 7")
    func countDigits() throws {
        func label(_ count: Int) throws -> Set<Int> {
            let index = try makeIndex(pile(count, at: Self.left + 128.5, Self.top + 128.5), zoom: 12)
            let (canvas, _) = drawn(TileRenderer(index: index), try MapWindow(tile: Self.tile))
            let r = style.radius(count: count)
            var text: Set<Int> = []
            for y in 0..<256 {
                for x in 0..<256 where (Double(x) - 128).magnitude < r - 2 && (Double(y) - 128).magnitude < r - 2 {
                    let c = canvas[x, y]
                    if c.alpha == 255, c.red >= 0xF0, c.green >= 0xF0, c.blue >= 0xF0 { text.insert(y * 256 + x) }
                }
            }
            return text
        }
        let seven = try label(7), eightySix = try label(86)
        #expect(seven.count >= 8)
        #expect(eightySix.count > seven.count + 8)
        #expect(seven != eightySix)
    }

    @Test("single reports are dots of their status's color")
    func statusColors() throws {
        let index = try makeIndex([(Self.left + 50.5, Self.top + 50.5, 0), (Self.left + 180.5, Self.top + 180.5, 4)], zoom: 12)
        let (canvas, markers) = drawn(TileRenderer(index: index), try MapWindow(tile: Self.tile))
        #expect(markers == 2)
        #expect(canvas[50, 50] == StatusPalette.default[status: 0])
        #expect(canvas[180, 180] == StatusPalette.default[status: 4])
        #expect(close(canvas[50, 44], style.outlineColor))  // 6 px out: the ring
        var custom = TileStyle.default
        custom.statusColors = StatusPalette(colors: [Color(0x123456)], fallback: Color(0x654321))
        let (recolored, _) = drawn(TileRenderer(index: index, style: custom), try MapWindow(tile: Self.tile))
        #expect(recolored[50, 50] == Color(0x123456))
        #expect(recolored[180, 180] == Color(0x654321))
    }

    @Test("markers straddling tile edges: four tiles side by side equal one 512 × 512 picture, bit for bit")
    func seamless() throws {
        let index = try makeIndex(
            pile(30, at: Self.left + 255.6, Self.top + 200.3)  // on the vertical edge
                + pile(1500, at: Self.left + 256.3, Self.top + 255.8)  // on the corner, label "1.5k" across it
                + [(Self.left + 300.2, Self.top + 256.4, 3)]  // a report on the horizontal edge
                + pile(86, at: Self.left + 250.7, Self.top + 400.1), zoom: 12)
        let renderer = TileRenderer(index: index)
        let whole = try MapWindow(zoom: 12, left: Int(Self.left), top: Int(Self.top), width: 512, height: 512)
        let (picture, total) = drawn(renderer, whole)
        #expect(total == 4)
        for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            let tile = try TileID(z: 12, x: Self.tile.x + dx, y: Self.tile.y + dy)
            let (part, markers) = drawn(renderer, try MapWindow(tile: tile))
            #expect(markers >= 2, "tile \(tile)")
            var mismatches = 0
            for y in 0..<256 {
                for x in 0..<256 where part[x, y] != picture[dx * 256 + x, dy * 256 + y] { mismatches += 1 }
            }
            #expect(mismatches == 0, "tile \(tile)")
        }
        // The static picture of the four tiles' box is the same picture.
        let box = try BoundingBox(
            west: Self.tile.bounds.west, south: try TileID(z: 12, x: Self.tile.x, y: Self.tile.y + 1).bounds.south,
            east: try TileID(z: 12, x: Self.tile.x + 1, y: Self.tile.y).bounds.east, north: Self.tile.bounds.north)
        let rendered = try renderer.render(box: box, zoom: 12, width: 512, height: 512)
        #expect(decode(rendered.png)?.pixels == picture.pixels)
    }

    @Test("a label wider than the largest disc reaches tiles beyond the usual margin")
    func wideLabel() throws {
        var style = TileStyle.default
        style.font = DigitFont.standard.scaled(by: 12)  // "86" is 138 px wide
        let index = try makeIndex(pile(86, at: Self.left + 256 + 65.5, Self.top + 128.5), zoom: 12)
        let renderer = TileRenderer(index: index, style: style)
        let (tile, markers) = drawn(renderer, try MapWindow(tile: Self.tile))
        #expect(markers == 1)
        let (pair, _) = drawn(renderer, try MapWindow(zoom: 12, left: Int(Self.left), top: Int(Self.top), width: 512, height: 256))
        var mismatches = 0
        for y in 0..<256 {
            for x in 0..<256 where tile[x, y] != pair[x, y] { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect((0..<256).contains { tile[255, $0].alpha > 0 })  // the label's left end
    }

    @Test("a marker across the antimeridian shows on both edge tiles, and they meet")
    func antimeridian() throws {
        let world = 256.0 * 8
        let index = try makeIndex(pile(12, at: world - 3.3, 700.2) + [(2.1, 650.4, 1)], zoom: 3)
        let renderer = TileRenderer(index: index)
        let (east, eastMarkers) = drawn(renderer, try MapWindow(tile: TileID(z: 3, x: 7, y: 2)))
        let (west, westMarkers) = drawn(renderer, try MapWindow(tile: TileID(z: 3, x: 0, y: 2)))
        #expect(eastMarkers == 2 && westMarkers == 2)
        let (pair, _) = drawn(renderer, try MapWindow(zoom: 3, left: 7 * 256, top: 512, width: 512, height: 256))
        var mismatches = 0
        for y in 0..<256 {
            for x in 0..<256 {
                if east[x, y] != pair[x, y] { mismatches += 1 }
                if west[x, y] != pair[256 + x, y] { mismatches += 1 }
            }
        }
        #expect(mismatches == 0)
    }

    @Test("a tile without markers renders as nil; a marker just out of reach leaves it empty")
    func emptyTile() throws {
        let empty = try ClusterIndex(statusCount: 8, entries: [])
        #expect(try TileRenderer(index: empty).render(tile: Self.tile) == nil)
        // A report dot reaches 5 + 1.5 px and its coverage 0.5 px more: 7.1 px is out.
        let index = try makeIndex([(Self.left + 256 + 7.1, Self.top + 100.5, 0), (Self.left + 900.5, Self.top + 100.5, 0)], zoom: 12)
        let renderer = TileRenderer(index: index)
        #expect(try renderer.render(tile: Self.tile) == nil)
        #expect(try renderer.render(tile: TileID(z: 12, x: Self.tile.x + 1, y: Self.tile.y))?.markerCount == 1)
        // Filtered out: nothing left to draw.
        let neighbour = try TileID(z: 12, x: Self.tile.x + 1, y: Self.tile.y)
        #expect(try renderer.render(tile: neighbour, filter: ClusterFilter(statusNumbers: [1, 2])) == nil)
    }

    @Test("above the grid's last zoom, clusters split into their reports")
    func aboveMaxZoom() throws {
        // 20 px apart at zoom 21: one cell of zoom 20 (the grid's last), two dots at zoom 21.
        let x20 = 2395 * 256, y20 = 1386 * 256
        let left = Double(x20) * 512, top = Double(y20) * 512
        let index = try makeIndex([(left + 100.5, top + 100.5, 2), (left + 120.5, top + 100.5, 5)], zoom: 21)
        let renderer = TileRenderer(index: index)
        let (canvas, markers) = drawn(renderer, try MapWindow(tile: TileID(z: 21, x: x20 * 2, y: y20 * 2)))
        #expect(markers == 2)
        #expect(canvas[100, 100] == StatusPalette.default[status: 2])
        #expect(canvas[120, 100] == StatusPalette.default[status: 5])
        let (below, clusters) = drawn(renderer, try MapWindow(tile: TileID(z: 20, x: x20, y: y20)))
        #expect(clusters == 1)
        #expect(below[55, 60] == style.fewColor)  // the cluster at (55.25, 50.25), below its label
    }

    @Test("tiles are PNGs of 256 and 512 px with alpha that decode to the drawn pixels")
    func pngTiles() throws {
        let index = try makeIndex(
            pile(40, at: Self.left + 64.5, Self.top + 80.5) + [(Self.left + 200.2, Self.top + 190.7, 6)], zoom: 12)
        let renderer = TileRenderer(index: index)
        for scale in [1, 2] {
            let tile = try #require(try renderer.render(tile: Self.tile, scale: scale))
            #expect(tile.width == 256 * scale && tile.height == 256 * scale && tile.markerCount == 2)
            let decoded = try #require(decode(tile.png))
            #expect(decoded.width == 256 * scale && decoded.height == 256 * scale && decoded.hasAlpha)
            #expect(decoded.pixels == drawn(renderer, try MapWindow(tile: Self.tile, scale: scale)).canvas.pixels)
            #expect(tile.png == (try renderer.render(tile: Self.tile, scale: scale))?.png)  // deterministic
        }
        // @2x: everything twice as large, at the same place.
        let (x2, _) = drawn(renderer, try MapWindow(tile: Self.tile, scale: 2))
        let r = style.radius(count: 40)
        #expect(x2[129, 161 + Int(2 * r) - 4] == style.fewColor)
        #expect(x2[129, 161 + Int(2 * r) + 6] == .clear)
        #expect(x2[400, 381] == StatusPalette.default[status: 6])
        #expect(throws: ValidationError.self) { try renderer.render(tile: Self.tile, scale: 5) }
    }

    @Test("a static picture has the requested size; sizes out of range are errors")
    func staticPicture() throws {
        let index = try makeIndex(pile(25, at: Self.left + 128.5, Self.top + 128.5), zoom: 12)
        let renderer = TileRenderer(index: index)
        let box = Self.tile.bounds
        let picture = try renderer.render(box: box, zoom: 12, width: 300, height: 200)
        let decoded = try #require(decode(picture.png))
        #expect(decoded.width == 300 && decoded.height == 200 && picture.markerCount == 1)
        #expect(decoded[150, 110] == style.fewColor)  // the tile's centre is the picture's
        let empty = try renderer.render(box: try BoundingBox(west: -10, south: -10, east: 10, north: 10), zoom: 12, width: 64, height: 48)
        #expect(empty.markerCount == 0 && decode(empty.png)?.width == 64)
        #expect(throws: ValidationError.self) { try renderer.render(box: box, zoom: 12, width: 5000, height: 200) }
        #expect(throws: ValidationError.self) { try renderer.render(box: box, zoom: 25, width: 300, height: 200) }
        #expect(throws: ValidationError.self) { try renderer.render(box: box, zoom: 12, width: 0, height: 200) }
    }

    @Test("count labels abbreviate as the GeoJSON does")
    func labels() {
        let cases: [(Int, String)] = [
            (7, "7"), (86, "86"), (999, "999"), (1_000, "1k"), (1_234, "1.2k"), (9_949, "9.9k"), (9_950, "10k"),
            (34_000, "34k"), (999_499, "999k"), (999_500, "1M"), (1_250_000, "1.3M"), (34_000_000, "34M"),
        ]
        for (count, label) in cases { #expect(Cluster.abbreviated(count) == label, "\(count)") }
    }
}
