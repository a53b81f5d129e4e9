import Testing

@testable import Tiles

/// The canvas's shapes, the digit font and the PNG encoder on their own.
@Suite("Canvas, font and PNG")
struct CanvasTests {
    /// The canvas's total coverage: the sum of its alphas, in pixels.
    func area(_ canvas: Canvas) -> Double {
        stride(from: 3, to: canvas.pixels.count, by: 4).reduce(0) { $0 + Double(canvas.pixels[$1]) } / 255
    }

    @Test("a disc covers π r² pixels and a ring 2π r w, with soft edges and solid insides")
    func coverage() {
        var disc = Canvas(width: 64, height: 64)
        #expect(disc.isTransparent)
        let painted = disc.fillCircle(centerX: 30.2, centerY: 31.7, radius: 10.3, color: .black)
        #expect(painted && !disc.isTransparent)
        let discArea = Double.pi * 10.3 * 10.3
        #expect(abs(area(disc) - discArea) < 0.005 * discArea)
        #expect(disc[30, 31] == .black)
        #expect(disc[30, 31 - 10].alpha > 0 && disc[30, 31 - 10].alpha < 255)  // an edge pixel
        #expect(disc[0, 0] == .clear)

        var ring = Canvas(width: 64, height: 64)
        ring.strokeCircle(centerX: 32, centerY: 32, radius: 12, width: 2, color: .white)
        let ringArea = 2 * Double.pi * 12 * 2
        #expect(abs(area(ring) - ringArea) < 0.01 * ringArea)
        #expect(ring[32, 32] == .clear)

        var outside = Canvas(width: 8, height: 8)
        let offCanvas = outside.fillCircle(centerX: -20, centerY: 4, radius: 5, color: .black)
        let invisible = outside.fillCircle(centerX: 4, centerY: 4, radius: 5, color: .clear)
        #expect(!offCanvas && !invisible && outside.isTransparent)
    }

    @Test("a ringed disc in one pass equals the ring's disc and then the disc")
    func ringedDisc() {
        for (radius, fill) in [(12.3, Color(0xE03131)), (4.6, Color(0x1C7ED6, alpha: 160)), (0.4, Color(0x2F9E44))] {
            var twoPasses = Canvas(width: 40, height: 40), onePass = Canvas(width: 40, height: 40)
            twoPasses.fillCircle(centerX: 10.2, centerY: 10.1, radius: 9, color: Color(0x7048E8, alpha: 200))  // something underneath
            onePass.fillCircle(centerX: 10.2, centerY: 10.1, radius: 9, color: Color(0x7048E8, alpha: 200))
            twoPasses.fillCircle(centerX: 20.3, centerY: 19.8, radius: radius + 1.5, color: Color(0xFFFFFF, alpha: 230))
            twoPasses.fillCircle(centerX: 20.3, centerY: 19.8, radius: radius, color: fill)
            onePass.fillCircle(centerX: 20.3, centerY: 19.8, radius: radius, color: fill, outline: Color(0xFFFFFF, alpha: 230), outlineWidth: 1.5)
            #expect(onePass == twoPasses, "radius \(radius)")
        }
    }

    @Test("painting over a color blends with straight alpha")
    func blending() {
        var canvas = Canvas(width: 4, height: 4)
        canvas.fillCircle(centerX: 2, centerY: 2, radius: 10, color: Color(0xFF0000, alpha: 128))
        #expect(canvas[1, 1] == Color(0xFF0000, alpha: 128))
        canvas.fillCircle(centerX: 2, centerY: 2, radius: 10, color: Color(0x0000FF, alpha: 128))
        // 0.5 blue over 0.5 red: alpha 0.75, two thirds blue.
        let c = canvas[1, 1]
        #expect(close(c, Color(red: 85, green: 0, blue: 170, alpha: 191)))
    }

    @Test("every glyph draws, each digit differently, and unknown characters are skipped")
    func font() {
        let font = DigitFont.standard
        var shapes: Set<[UInt8]> = []
        for character in "0123456789.kM" {
            #expect(DigitFont.draws(character))
            var canvas = Canvas(width: 16, height: 16)
            let painted = canvas.drawText(String(character), centerX: 8, centerY: 8, font: font, color: .black)
            #expect(painted, "\(character)")
            shapes.insert(canvas.pixels)
        }
        #expect(shapes.count == 13)
        #expect(!DigitFont.draws("x"))
        #expect(font.width(of: "1x2") == font.width(of: "12"))
        #expect(font.width(of: "1.2k") == 18.5)  // 4 + 0 + 4 + 3 units, four 1.5-px strokes, three 0.5-px gaps
        #expect(font.scaled(by: 2).width(of: "1.2k") == 37)
        #expect(font.height == 8.5)
        var blank = Canvas(width: 16, height: 16)
        let painted = blank.drawText("xyz", centerX: 8, centerY: 8, font: font, color: .black)
        #expect(!painted && blank.isTransparent)
    }

    @Test("a label looks the same wherever it is drawn: it snaps to the pixel grid")
    func snapping() {
        var a = Canvas(width: 40, height: 20), b = Canvas(width: 40, height: 20)
        a.drawText("86", centerX: 10.3, centerY: 10.1, font: .standard, color: .white, halo: .black, haloWidth: 1)
        b.drawText("86", centerX: 30.3, centerY: 10.1, font: .standard, color: .white, halo: .black, haloWidth: 1)
        for y in 0..<20 {
            for x in 0..<20 { #expect(a[x, y] == b[x + 20, y]) }
        }
    }

    @Test("indexed PNGs for few colors, RGBA beyond 256, both decoding to the canvas")
    func png() throws {
        var few = Canvas(width: 32, height: 24)
        few.fillCircle(centerX: 10.5, centerY: 12.3, radius: 6.2, color: Color(0xE03131))
        few.fillCircle(centerX: 20.1, centerY: 12.3, radius: 6.2, color: Color(0x1C7ED6, alpha: 200))
        let indexed = try #require(PNG.Indexed(few))
        #expect(indexed.palette.count <= 256 && indexed.palette.first?.alpha == 0)
        let opaque = indexed.palette.drop(while: { $0.alpha < 255 })
        #expect(opaque.allSatisfy { $0.alpha == 255 })
        for options in [PNG.Options.tiles, PNG.Options(colorType: .rgba, compressionLevel: 9, filter: .adaptive)] {
            let decoded = try #require(decode(try PNG.encode(few, options: options)))
            #expect(decoded.width == 32 && decoded.height == 24 && decoded.hasAlpha)
            #expect(decoded.pixels == few.pixels)
        }

        var many = Canvas(width: 40, height: 40)
        for i in 0..<400 {
            many.fillCircle(centerX: Double(i % 20) * 2 + 1, centerY: Double(i / 20) * 2 + 1, radius: 0.7, color: Color(UInt32(i) * 40_503))
        }
        #expect(PNG.Indexed(many) == nil)
        let decoded = try #require(decode(try PNG.encode(many)))
        #expect(decoded.pixels == many.pixels)
        // Quantized: the 256 most used colors stay, the rest take the nearest of them.
        let quantized = try #require(PNG.Indexed(many, quantizing: true))
        #expect(quantized.palette.count == 256 && !quantized.isExact)
        let lossy = try #require(decode(try PNG.encode(many, options: PNG.Options(colorType: .indexed))))
        let kept = Set(quantized.palette)
        var changed = 0
        for y in 0..<40 {
            for x in 0..<40 {
                #expect(kept.contains(lossy[x, y]))
                if lossy[x, y] != many[x, y] { changed += 1 }
            }
        }
        #expect(changed == 4 * (400 - 256))  // 400 colors, each a dot of 4 pixels
        #expect(try #require(PNG.Indexed(few, quantizing: true)).isExact)

        // A first pixel of any color (opaque white included) is read as itself.
        var white = Canvas(width: 8, height: 8)
        white.fillCircle(centerX: 0, centerY: 0, radius: 3, color: .white)
        white.fillCircle(centerX: 6, centerY: 6, radius: 3, color: .black)
        #expect(white[0, 0] == .white)
        #expect(decode(try PNG.encode(white))?.pixels == white.pixels)
    }

    @Test("a libpng error is an EncodingError, not a stopped process")
    func libpngError() throws {
        // libpng refuses a zero-width image in IHDR: its error jumps back into the C shim.
        #expect(throws: PNG.EncodingError.self) {
            try PNG.write(width: 0, height: 1, options: .tiles, palette: nil, rows: [0, 0, 0, 0], bytesPerPixel: 4)
        }
        // The encoder still works afterwards.
        #expect(decode(try PNG.encode(Canvas(width: 2, height: 2)))?.width == 2)
    }
}
