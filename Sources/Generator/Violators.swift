import Foundation

/// The advertisers behind the posters: who is drawn for a report, their phone numbers and
/// their names. Nothing is stored per violator; everything is a hash of the run's seed and
/// the violator's rank, so generating a report needs no table.
struct Violators: Sendable {
    /// Zipf–Mandelbrot law of the rank drawn for a report: weight ∝ (rank + offset)^-exponent.
    static let exponent = 1.2
    static let offset = 20.0
    /// The pool grows by one violator every `reportsPerNewViolator` reports (at least
    /// `minimumPool`), so a report depends only on its own number, never on the run's size.
    static let reportsPerNewViolator: Int64 = 2
    static let minimumPool: Int64 = 20
    /// How many numbers a violator has: 1, 2 or 3.
    static let phoneCountWeights = WeightedChoice([50, 35, 15])

    /// Phone numbers are a bijection of an index onto operator code × 7 digits:
    /// violator `r` owns indices 3r, 3r+1, 3r+2 (below `violatorIndices`, so unique up to
    /// 40 million violators, 80 million reports); the up to 4 one-off numbers of report `id`
    /// use the indices `violatorIndices + 4·id + slot` (unique up to 7.5 million reports).
    static let numberSpace: UInt64 = UInt64(Vocabulary.operatorCodes.count) * 10_000_000
    static let violatorIndices: UInt64 = 120_000_000

    let key: UInt64
    let multiplier: UInt64
    let increment: UInt64
    private let a: Double  // offset^(1-s)

    init(seed: UInt64) {
        key = SplitMix64.mix(seed ^ 0x7669_6F6C_6174_6F72)
        var rng = SplitMix64(state: SplitMix64.mix(seed ^ 0x7068_6F6E_6573))
        var m = Self.numberSpace / 4 + rng.next() % (Self.numberSpace / 2)
        while Self.gcd(m, Self.numberSpace) != 1 { m += 1 }
        multiplier = m
        increment = rng.next() % Self.numberSpace
        a = pow(Self.offset, 1 - Self.exponent)
    }

    /// The violator (0 = the most active) of report `id`.
    @inline(__always)
    func rank(forReport id: Int64, _ rng: inout SplitMix64) -> Int64 {
        let pool = max(Self.minimumPool, (id + Self.reportsPerNewViolator - 1) / Self.reportsPerNewViolator)
        let b = pow(Double(pool) + Self.offset, 1 - Self.exponent)
        let x = pow(a - rng.unit() * (a - b), 1 / (1 - Self.exponent)) - Self.offset
        return min(max(0, Int64(x)), pool - 1)
    }

    /// The numbers a violator advertises (1 to 3), as number indices.
    @inline(__always)
    func phoneCount(of rank: Int64) -> Int {
        var rng = SplitMix64(key: key, item: UInt64(rank))
        return 1 + Self.phoneCountWeights.draw(&rng)
    }

    @inline(__always)
    func phone(ofViolator rank: Int64, slot: Int) -> String {
        phone(index: (UInt64(rank) &* 3 &+ UInt64(slot)) % Self.violatorIndices)
    }

    /// A number seen on one report only (the rare poster that lists extra numbers).
    @inline(__always)
    func oneOffPhone(report id: Int64, slot: Int) -> String {
        phone(index: Self.violatorIndices + (UInt64(id) &* 4 &+ UInt64(slot)) % (Self.numberSpace - Self.violatorIndices))
    }

    /// The normalized number (`380` + operator code + 7 digits) of an index below `numberSpace`.
    func phone(index: UInt64) -> String {
        let permuted = (index.multipliedFullWidth(by: multiplier).low &+ increment) % Self.numberSpace
        let code = Vocabulary.operatorCodes[Int(permuted % UInt64(Vocabulary.operatorCodes.count))].utf8
        var subscriber = permuted / UInt64(Vocabulary.operatorCodes.count)
        return String(unsafeUninitializedCapacity: 12) { buffer in
            buffer[0] = UInt8(ascii: "3")
            buffer[1] = UInt8(ascii: "8")
            buffer[2] = UInt8(ascii: "0")
            buffer[3] = code[code.startIndex]
            buffer[4] = code[code.index(after: code.startIndex)]
            for position in stride(from: 11, through: 5, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(subscriber % 10)
                subscriber /= 10
            }
            return 12
        }
    }

    /// The name on the violator's posters, e.g. `ТОВ «Кредит Плюс»` or `ФОП Іваненко О. М.`.
    func name(of rank: Int64) -> String {
        var rng = SplitMix64(key: key ^ 0x6E61_6D65, item: UInt64(rank))
        let v = Vocabulary.self
        switch rng.below(20) {
        case 0..<9:
            return "ТОВ «\(v.companyStems[rng.below(v.companyStems.count)]) \(v.companySuffixes[rng.below(v.companySuffixes.count)])»"
        case 9..<11:
            return "ПП «\(v.companyStems[rng.below(v.companyStems.count)])\(v.companySuffixes[rng.below(v.companySuffixes.count)].lowercased())»"
        case 11..<15:
            return "ФОП \(v.surnames[rng.below(v.surnames.count)])"
        default:
            return "ФОП \(v.surnames[rng.below(v.surnames.count)]) \(v.initials[rng.below(v.initials.count)]). \(v.initials[rng.below(v.initials.count)])."
        }
    }

    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x
    }
}
