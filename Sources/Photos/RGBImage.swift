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
        let rows = Shares(from: height, to: h), columns = Shares(from: width, to: w)
        let rowLength = width * 3
        // Rows first, whole input rows at a time: a contiguous loop the compiler vectorizes.
        var down = [Float](repeating: 0, count: rowLength * h)
        pixels.withUnsafeBufferPointer { src in
            down.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    let out = dst.baseAddress! + y * rowLength
                    for j in 0..<rows.span {
                        let share = rows.shares[y * rows.span + j]
                        guard share > 0 else { continue }
                        let input = src.baseAddress! + (rows.first[y] + j) * rowLength
                        for i in 0..<rowLength { out[i] += Float(input[i]) * share }
                    }
                }
            }
        }
        var out = [UInt8](repeating: 0, count: w * h * 3)
        down.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    for x in 0..<w {
                        var r: Float = 0, g: Float = 0, b: Float = 0
                        var s = y * rowLength + columns.first[x] * 3
                        for j in 0..<columns.span {
                            let share = columns.shares[x * columns.span + j]
                            r += src[s] * share
                            g += src[s + 1] * share
                            b += src[s + 2] * share
                            s += 3
                        }
                        let d = (y * w + x) * 3
                        dst[d] = Self.byte(r)
                        dst[d + 1] = Self.byte(g)
                        dst[d + 2] = Self.byte(b)
                    }
                }
            }
        }
        return RGBImage(width: w, height: h, pixels: out)
    }

    private static func byte(_ v: Float) -> UInt8 { UInt8(min(255, max(0, v.rounded()))) }

    /// How `n` output positions cover `m` input positions (output k spans [k·m/n, (k+1)·m/n)
    /// of the input): for each, the first of `span` consecutive inputs and the share of
    /// each (summing to 1; 0 for those it does not reach). Every output has the same span,
    /// so the loops over it have no bounds to look up, and none reads past the input.
    struct Shares {
        let span: Int
        var first: [Int]
        var shares: [Float]

        init(from m: Int, to n: Int) {
            let step = Double(m) / Double(n)
            span = min(m, Int(step.rounded(.up)) + 1)
            first = [Int](repeating: 0, count: n)
            shares = [Float](repeating: 0, count: n * span)
            for k in 0..<n {
                let start = Double(k) * step, end = min(Double(m), start + step)
                let from = min(Int(start), m - span)
                first[k] = from
                var i = Int(start)
                while Double(i) < end {
                    let covered = min(end, Double(i + 1)) - max(start, Double(i))
                    if covered > 0 { shares[k * span + i - from] += Float(covered / step) }
                    i += 1
                }
            }
        }
    }
}
