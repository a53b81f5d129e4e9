import Foundation

/// SplitMix64 (Steele, Lea & Flood, 2014): a 64-bit state, one add and a mix per draw.
///
/// The generator never uses `SystemRandomNumberGenerator` or the standard library's
/// `random(in:using:)` helpers, whose algorithms are not promised to stay the same
/// between Swift releases; every draw below is spelled out so that a seed gives the same
/// reports with any toolchain. Tests and benchmarks use it too, as a `RandomNumberGenerator`
/// whose runs replay.
///
/// ```swift
/// var rng = SplitMix64(state: 42)
/// let x = rng.unit()                      // uniform in [0, 1)
/// let i = Int.random(in: 1...6, using: &rng)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    /// A generator for one item (a report, a violator) of a stream: the key and the item
    /// number are hashed, so that neighbouring items get unrelated sequences.
    init(key: UInt64, item: UInt64) {
        self.state = Self.mix(key ^ Self.mix(item &+ 0x632B_E59B_D9B4_E019))
    }

    /// The SplitMix64 finalizer, a bijective 64-bit hash.
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    @inline(__always)
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// Uniform in [0, 1), 53 bits.
    @inline(__always)
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// Uniform in (0, 1], for logarithms.
    @inline(__always)
    mutating func positiveUnit() -> Double {
        Double((next() >> 11) + 1) * 0x1.0p-53
    }

    /// Uniform in 0..<n (multiply-shift; the bias, below n / 2^64, is irrelevant here).
    @inline(__always)
    public mutating func below(_ n: Int) -> Int {
        Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(n)).high)
    }

    @inline(__always)
    public mutating func chance(_ p: Double) -> Bool {
        unit() < p
    }

    /// Two independent standard normal deviates (Box–Muller).
    @inline(__always)
    public mutating func normalPair() -> (Double, Double) {
        let r = (-2 * log(positiveUnit())).squareRoot()
        let theta = 2 * Double.pi * unit()
        return (r * cos(theta), r * sin(theta))
    }

    /// Log-uniform in [low, high].
    @inline(__always)
    mutating func logUniform(_ low: Double, _ high: Double) -> Double {
        low * exp(unit() * log(high / low))
    }
}

/// Cumulative weights, normalized to end at 1, for drawing an index with a given law.
struct WeightedChoice: Sendable {
    let cumulative: [Double]

    /// `weights` must hold at least one positive value; zero weights are never drawn.
    init(_ weights: [Double]) {
        precondition(!weights.isEmpty && weights.allSatisfy { $0 >= 0 } && weights.contains { $0 > 0 })
        let total = weights.reduce(0, +)
        var sum = 0.0
        var cumulative = weights.map { w -> Double in
            sum += w
            return sum / total
        }
        cumulative[cumulative.count - 1] = 1
        self.cumulative = cumulative
    }

    var count: Int { cumulative.count }

    /// The index whose slice of [0, 1) holds `u` (binary search: O(log n)).
    @inline(__always)
    func index(_ u: Double) -> Int {
        var low = 0, high = cumulative.count - 1
        while low < high {
            let mid = (low + high) >> 1
            if cumulative[mid] > u { high = mid } else { low = mid + 1 }
        }
        return low
    }

    @inline(__always)
    func draw(_ rng: inout SplitMix64) -> Int {
        index(rng.unit())
    }
}
