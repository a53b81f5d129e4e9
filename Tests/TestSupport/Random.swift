import Generator

/// The draws the reference tests make, on the generator's SplitMix64, so that every test
/// target replays from a seed with one generator. They are built on `unit()` and
/// `below(_:)` rather than the standard library's `random(in:using:)`, whose algorithm is
/// not promised to stay the same between Swift releases.
extension SplitMix64 {
    /// Uniform in [lo, hi).
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * unit() }

    public mutating func int(_ range: Range<Int>) -> Int {
        precondition(!range.isEmpty, "no integer to draw in an empty range")
        return range.lowerBound + below(range.count)
    }

    public mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }

    public mutating func pick<T>(_ items: [T]) -> T { items[int(0..<items.count)] }
}
