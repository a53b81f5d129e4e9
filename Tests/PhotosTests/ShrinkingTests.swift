import Photos
import Testing

@Suite("Pictures shrunk by area")
struct ShrinkingTests {
    /// The mean of the input over output pixel (x, y)'s rectangle, each input pixel
    /// weighted by the area of it the rectangle covers, in doubles: the reference.
    static func reference(_ image: RGBImage, _ w: Int, _ h: Int, x: Int, y: Int, channel: Int) -> Double {
        let sx = Double(image.width) / Double(w), sy = Double(image.height) / Double(h)
        let (left, right) = (Double(x) * sx, Double(x + 1) * sx)
        let (top, bottom) = (Double(y) * sy, Double(y + 1) * sy)
        var sum = 0.0
        for iy in Int(top)..<min(image.height, Int(bottom.rounded(.up))) {
            let dy = min(bottom, Double(iy + 1)) - max(top, Double(iy))
            for ix in Int(left)..<min(image.width, Int(right.rounded(.up))) {
                let dx = min(right, Double(ix + 1)) - max(left, Double(ix))
                guard dx > 0, dy > 0 else { continue }
                sum += Double(image.pixels[(iy * image.width + ix) * 3 + channel]) * dx * dy
            }
        }
        return sum / (sx * sy)
    }

    @Test("every output pixel is its area's mean, to the rounding, for random sizes and pictures")
    func areaMeans() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<40 {
            let width = Int.random(in: 1...97, using: &random), height = Int.random(in: 1...97, using: &random)
            let pixels = (0..<(width * height * 3)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let image = RGBImage(width: width, height: height, pixels: pixels)
            let side = Int.random(in: 1...max(width, height), using: &random)
            let small = image.fitted(within: side)
            #expect(max(small.width, small.height) <= max(side, 1))
            guard side < max(width, height) else {
                #expect(small == image)
                continue
            }
            for y in 0..<small.height {
                for x in 0..<small.width {
                    for channel in 0..<3 {
                        let expected = Self.reference(image, small.width, small.height, x: x, y: y, channel: channel)
                        let got = Double(small.pixels[(y * small.width + x) * 3 + channel])
                        #expect(abs(got - expected) <= 0.51, "\(width)×\(height) → \(small.width)×\(small.height) at \(x),\(y)")
                    }
                }
            }
        }
    }
}
