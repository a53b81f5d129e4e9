/// An 8-bit RGB picture, rows top to bottom, three bytes a pixel.
public struct RGBImage: Sendable, Hashable {
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 3)
        (self.width, self.height, self.pixels) = (width, height, pixels)
    }

    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let i = (y * width + x) * 3
        return (pixels[i], pixels[i + 1], pixels[i + 2])
    }

    /// The picture turned as TIFF orientation `orientation` (1...8) says, so that it
    /// stands upright: 6 is turned a quarter clockwise, 8 a quarter counter-clockwise,
    /// 3 half a turn, and 2, 4, 5, 7 are mirrored too.
    public func oriented(_ orientation: Int) -> RGBImage {
        guard (2...8).contains(orientation) else { return self }
        let swaps = orientation >= 5
        let (w, h) = swaps ? (height, width) : (width, height)
        var out = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    for x in 0..<w {
                        // Where the output pixel (x, y) comes from in the stored picture.
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case 2: (sx, sy) = (width - 1 - x, y)
                        case 3: (sx, sy) = (width - 1 - x, height - 1 - y)
                        case 4: (sx, sy) = (x, height - 1 - y)
                        case 5: (sx, sy) = (y, x)
                        case 6: (sx, sy) = (y, height - 1 - x)
                        case 7: (sx, sy) = (width - 1 - y, height - 1 - x)
                        default: (sx, sy) = (width - 1 - y, x)  // 8
                        }
                        let s = (sy * width + sx) * 3, d = (y * w + x) * 3
                        dst[d] = src[s]
                        dst[d + 1] = src[s + 1]
                        dst[d + 2] = src[s + 2]
                    }
                }
            }
        }
        return RGBImage(width: w, height: h, pixels: out)
    }

    /// The picture shrunk so that its long side is at most `longSide` (unchanged when it
    /// already is), each output pixel the area-weighted mean of the input pixels it covers.
    public func fitted(within longSide: Int) -> RGBImage {
        let scale = Double(longSide) / Double(max(width, height))
        guard scale < 1 else { return self }
        let w = max(1, Int((Double(width) * scale).rounded())), h = max(1, Int((Double(height) * scale).rounded()))
        let columns = Self.weights(from: width, to: w), rows = Self.weights(from: height, to: h)
        // Columns first, into floats, then rows.
        var across = [Float](repeating: 0, count: w * height * 3)
        pixels.withUnsafeBufferPointer { src in
            across.withUnsafeMutableBufferPointer { dst in
                for y in 0..<height {
                    let row = y * width * 3
                    for (x, spans) in columns.enumerated() {
                        var r: Float = 0, g: Float = 0, b: Float = 0
                        for (sx, weight) in spans {
                            let s = row + sx * 3
                            r += Float(src[s]) * weight
                            g += Float(src[s + 1]) * weight
                            b += Float(src[s + 2]) * weight
                        }
                        let d = (y * w + x) * 3
                        (dst[d], dst[d + 1], dst[d + 2]) = (r, g, b)
                    }
                }
            }
        }
        var out = [UInt8](repeating: 0, count: w * h * 3)
        across.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for (y, spans) in rows.enumerated() {
                    for x in 0..<(w * 3) {
                        var v: Float = 0
                        for (sy, weight) in spans { v += src[sy * w * 3 + x] * weight }
                        dst[y * w * 3 + x] = UInt8(min(255, max(0, v.rounded())))
                    }
                }
            }
        }
        return RGBImage(width: w, height: h, pixels: out)
    }

    /// For each of `n` output positions, the input positions of the `m` it covers and the
    /// share of each (summing to 1): output k spans [k·m/n, (k+1)·m/n) of the input.
    static func weights(from m: Int, to n: Int) -> [[(Int, Float)]] {
        let step = Double(m) / Double(n)
        return (0..<n).map { k in
            let start = Double(k) * step, end = min(Double(m), start + step)
            var spans: [(Int, Float)] = []
            var i = Int(start)
            while Double(i) < end {
                let covered = min(end, Double(i + 1)) - max(start, Double(i))
                if covered > 0 { spans.append((i, Float(covered / step))) }
                i += 1
            }
            return spans
        }
    }
}
