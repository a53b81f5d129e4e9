/// When a failed delivery is tried again: the wait doubles from `first` up to `longest`,
/// each drawn at random between 80% and 120% of its nominal length (never past `longest`),
/// so that endpoints that failed together are not all retried at once. After
/// `maxAttempts` attempts the delivery is given up.
public struct RetrySchedule: Sendable, Hashable {
    public var first: Duration
    public var longest: Duration
    public var maxAttempts: Int

    /// 5 s, 10 s, 20 s, … 24 h, 24 h: 18 attempts take about four days (3.1 to 4.1 with the jitter).
    public init(first: Duration = .seconds(5), longest: Duration = .seconds(86_400), maxAttempts: Int = 18) {
        precondition(first > .zero && longest >= first && maxAttempts >= 1)
        (self.first, self.longest, self.maxAttempts) = (first, longest, maxAttempts)
    }

    /// The nominal wait after the `attempts`-th failed attempt (1, 2, …), before jitter.
    public func nominal(after attempts: Int) -> Duration {
        let seconds = first.seconds * Double(1 << min(max(attempts - 1, 0), 40))
        return .seconds(min(seconds, longest.seconds))
    }

    /// The wait after the `attempts`-th failed attempt, jittered by `draw` (a number in
    /// 0..<1); nil when that was the last attempt.
    public func wait(after attempts: Int, draw: Double) -> Duration? {
        guard attempts < maxAttempts else { return nil }
        let jittered = nominal(after: attempts).seconds * (0.8 + 0.4 * draw)
        return .seconds(min(jittered, longest.seconds))
    }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
