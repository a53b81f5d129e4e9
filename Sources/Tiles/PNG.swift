import CPNG

/// PNG encoding of a ``Canvas`` through libpng's write API, into memory.
///
/// A canvas of at most 256 distinct colors (every tile of the default style we measured)
/// is written as an indexed image: an 8-bit palette with its alpha in a `tRNS` chunk, the
/// transparent entries first so that chunk is short; anything richer as 8-bit RGBA
/// (``Options/ColorType-swift.enum/automatic``, lossless: the decoded pixels equal the
/// canvas), or quantized to the 256 most used colors (``Options/ColorType-swift.enum/indexed``).
/// See ``TileRenderer`` for the measurements behind ``Options/tiles``.
///
/// ```swift
/// let png = try PNG.encode(canvas)                                   // the tile settings
/// let rgba = try PNG.encode(canvas, options: PNG.Options(colorType: .rgba, compressionLevel: 9))
/// ```
public enum PNG {
    /// How to write the image.
    public struct Options: Sendable, Hashable {
        /// The pixel format of the file.
        public enum ColorType: Sendable, Hashable {
            /// Indexed when the canvas has at most 256 colors, RGBA otherwise: lossless.
            case automatic
            /// Always indexed: beyond 256 colors, the least used are replaced by the nearest
            /// of the 256 most used (lossy on those pixels only).
            case indexed
            /// Always 8-bit RGBA.
            case rgba
        }

        /// The row filters libpng may choose from (`adaptive`: all five, chosen per row).
        public enum Filter: Sendable, Hashable, CaseIterable {
            case none, sub, up, average, paeth, adaptive
        }

        /// The zlib strategy.
        public enum Strategy: Sendable, Hashable, CaseIterable {
            case `default`, filtered, huffmanOnly, rle
        }

        public var colorType: ColorType
        /// zlib's level, 0 (store) to 9 (smallest).
        public var compressionLevel: Int
        public var filter: Filter
        public var strategy: Strategy

        public init(colorType: ColorType = .automatic, compressionLevel: Int = 6, filter: Filter = .none, strategy: Strategy = .default) {
            precondition((0...9).contains(compressionLevel), "zlib levels are 0 to 9, got \(compressionLevel)")
            self.colorType = colorType
            self.compressionLevel = compressionLevel
            self.filter = filter
            self.strategy = strategy
        }

        /// What the tiles use: indexed when possible, no filter, level 6, default strategy.
        public static let tiles = Options()
    }

    /// The PNG file of the canvas.
    ///
    /// libpng reports errors by jumping out of the failing call; the whole write runs in
    /// a small C function (`cpng_write_image`, in the CPNG module) that catches the jump
    /// and returns, so a failure (with the sizes and formats written here, only running
    /// out of memory) is an ``EncodingError`` rather than a stopped process.
    public static func encode(_ canvas: Canvas, options: Options = .tiles) throws(EncodingError) -> [UInt8] {
        if options.colorType != .rgba, let indexed = Indexed(canvas, quantizing: options.colorType == .indexed) {
            return try write(
                width: canvas.width, height: canvas.height, options: options, palette: indexed.palette, rows: indexed.indices, bytesPerPixel: 1)
        }
        return try write(width: canvas.width, height: canvas.height, options: options, palette: nil, rows: canvas.pixels, bytesPerPixel: 4)
    }

    /// A canvas as palette indices.
    struct Indexed {
        /// The colors, those with alpha below 255 first (so the `tRNS` chunk is short).
        var palette: [Color]
        var indices: [UInt8]
        /// Whether every pixel kept its color (false when quantized).
        var isExact: Bool

        /// The canvas's colors as a palette when it has at most 256; when it has more, nil,
        /// or with `quantizing`, the 256 most used colors with every other color replaced by
        /// the nearest of them (by distance of premultiplied RGBA).
        init?(_ canvas: Canvas, quantizing: Bool = false) {
            // Colors in order of first appearance, and how many pixels have each.
            var slots: [UInt32: Int] = [:]
            var colors: [UInt32] = []
            var uses: [Int] = []
            // `last` caches the previous pixel's color; it starts as anything but the first's.
            let first = canvas.pixels.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            var last = ~first, lastSlot = 0
            var tooMany = false
            canvas.pixels.withUnsafeBytes { raw in
                for offset in stride(from: 0, to: raw.count, by: 4) {
                    let value = raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                    if value != last {
                        last = value
                        if let slot = slots[value] {
                            lastSlot = slot
                        } else {
                            if colors.count == 256, !quantizing {
                                tooMany = true
                                return
                            }
                            lastSlot = colors.count
                            slots[value] = lastSlot
                            colors.append(value)
                            uses.append(0)
                        }
                    }
                    uses[lastSlot] += 1
                }
            }
            guard !tooMany else { return nil }
            // Memory holds R, G, B, A in that order whatever the host's byte order.
            let rgba = colors.map { value in withUnsafeBytes(of: value) { Color(red: $0[0], green: $0[1], blue: $0[2], alpha: $0[3]) } }
            let kept = colors.count <= 256 ? Array(colors.indices) : Array(colors.indices.sorted { (-uses[$0], $0) < (-uses[$1], $1) }.prefix(256))
            let order = kept.sorted { (rgba[$0].alpha < 255 ? 0 : 1, $0) < (rgba[$1].alpha < 255 ? 0 : 1, $1) }
            let palette = order.map { rgba[$0] }
            // Each color's palette position: its own, or its nearest kept color's.
            var position = [Int](repeating: -1, count: colors.count)
            for (p, slot) in order.enumerated() { position[slot] = p }
            for slot in colors.indices where position[slot] < 0 {
                position[slot] = palette.indices.min { Self.distance(rgba[slot], palette[$0]) < Self.distance(rgba[slot], palette[$1]) }!
            }
            isExact = colors.count <= 256
            var indices = [UInt8](repeating: 0, count: canvas.width * canvas.height)
            last = ~first
            var lastIndex: UInt8 = 0
            canvas.pixels.withUnsafeBytes { raw in
                for i in indices.indices {
                    let value = raw.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)
                    if value != last {
                        last = value
                        lastIndex = UInt8(position[slots[value]!])
                    }
                    indices[i] = lastIndex
                }
            }
            self.palette = palette
            self.indices = indices
        }

        /// The squared distance of two colors premultiplied by their alpha, in (1/255)².
        static func distance(_ a: Color, _ b: Color) -> Int {
            func d(_ x: UInt8, _ y: UInt8) -> Int { Int(x) * Int(a.alpha) - Int(y) * Int(b.alpha) }
            let alpha = (Int(a.alpha) - Int(b.alpha)) * 255
            let (r, g, bl) = (d(a.red, b.red), d(a.green, b.green), d(a.blue, b.blue))
            return r * r + g * g + bl * bl + alpha * alpha
        }
    }

    /// The file's bytes, collected by libpng's write callback.
    private final class Output {
        var bytes: [UInt8] = []
    }

    static func write(width: Int, height: Int, options: Options, palette: [Color]?, rows: [UInt8], bytesPerPixel: Int) throws(EncodingError) -> [UInt8] {
        // libpng's default error handler: errors jump back into cpng_write_image (C).
        var png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nil, nil, { _, _ in })
        guard png != nil else { throw EncodingError() }
        var info = png_create_info_struct(png)
        defer { png_destroy_write_struct(&png, &info) }
        guard info != nil else { throw EncodingError() }

        let output = Output()
        output.bytes.reserveCapacity(16 * 1024)
        png_set_write_fn(
            png, Unmanaged.passUnretained(output).toOpaque(),
            { png, data, length in
                guard let data, let io = png_get_io_ptr(png) else { return }
                Unmanaged<Output>.fromOpaque(io).takeUnretainedValue().bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
            },
            { _ in })

        let paletteType: Int32 = 3, rgbaType: Int32 = 6  // PNG_COLOR_TYPE_PALETTE, PNG_COLOR_TYPE_RGB_ALPHA
        let entries = palette?.map { png_color(red: $0.red, green: $0.green, blue: $0.blue) } ?? []
        let alphas = palette?.prefix { $0.alpha < 255 }.map(\.alpha) ?? []
        let failed = rows.withUnsafeBufferPointer { pixels in
            entries.withUnsafeBufferPointer { entries in
                alphas.withUnsafeBufferPointer { alphas in
                    cpng_write_image(
                        png, info, png_uint_32(width), png_uint_32(height), palette == nil ? rgbaType : paletteType,
                        palette == nil ? nil : entries.baseAddress, Int32(entries.count), alphas.isEmpty ? nil : alphas.baseAddress, Int32(alphas.count),
                        Int32(options.compressionLevel), strategyCode(options.strategy), filterMask(options.filter),
                        pixels.baseAddress, width * bytesPerPixel)
                }
            }
        }
        guard failed == 0 else { throw EncodingError() }
        return output.bytes
    }

    /// libpng could not write the image (it reports why on standard error).
    public struct EncodingError: Error, Sendable, CustomStringConvertible {
        public var description: String { "libpng could not write the image" }
    }

    private static func filterMask(_ filter: Options.Filter) -> Int32 {
        switch filter {
        case .none: 0x08
        case .sub: 0x10
        case .up: 0x20
        case .average: 0x40
        case .paeth: 0x80
        case .adaptive: 0xF8
        }
    }

    private static func strategyCode(_ strategy: Options.Strategy) -> Int32 {
        switch strategy {
        case .default: 0
        case .filtered: 1
        case .huffmanOnly: 2
        case .rle: 3
        }
    }
}
