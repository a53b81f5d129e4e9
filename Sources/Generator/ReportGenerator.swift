// Generator: deterministic synthetic reports, for demos, tests and benchmarks.
//
// Central decisions:
//
// * Determinism. Every report is drawn from two SplitMix64 streams of its own (its place,
//   and everything else), keyed by hashes of the run's seed and the report's id; nothing
//   uses the system generator or the standard library's `random(in:using:)`, whose
//   algorithms may change between Swift releases. A report depends on (seed, id,
//   distribution, reference data) only, so `report(id:)` is random access, a run can be
//   split across threads, and the first k reports of a run of N equal those of a run of
//   k, except for `createdAt` and `updatedAt`, which spread any run over the same two
//   years. Runs are identical on one platform; libm (`log`, `pow`, `cos`) may differ by an
//   ulp between platforms, which coordinates rounded to 1e-6° almost always absorb.
//
// * The city layout is fixed. The boundary polygon (26 vertices), 25 named street
//   sections along real avenues (approximately: Khreshchatyk, Beresteiskyi, Obolonskyi,
//   Brovarskyi, the Kharkiv and Zhytomyr highways, ...) and the ~345 hot spots along them
//   (~120 of them transit stops) are built from a constant internal seed
//   (`KyivLayout.layoutSeed`), never from the user's seed: the city is the same for every
//   seed, and so is the viewport calibration.
//
// * `kyiv`: 88% of reports fall around a hot spot (Gaussian, σ 20–60 m at stops, 40–150 m
//   elsewhere), 12% uniformly over the polygon; every position is rejection-sampled inside
//   the polygon. A hot spot's weight is Pareto (α 1.5, capped) × 1.5 at stops × a place
//   factor calibrated so that the 1280×800 px viewport on Maidan holds ≈ 44% of reports
//   at z12, 4.2% at z14 and 0.85% at z16 (measured on a million: 43.8%, 4.2%, 0.85%).
//   Per km² the centre is by far the densest (its streets are), but that calibration
//   makes outer hot spots heavier one by one: the z12 viewport (≈ 31 × 19.5 km) covers
//   nearly all of the built-up city, yet must hold only 44%, so the outer ends of the
//   radial streets (Koncha-Zaspa, the Zhytomyr and Kharkiv highways, Troieshchyna, the
//   north of Obolon, Bortnychi) carry about half of the reports.
//
// * `world`: uniform over the Web Mercator square (x, y uniform in [0, 1)), with a district
//   drawn uniformly. Every other field comes from the same stream as in `kyiv` (city
//   "Київ", Kyiv addresses, the same violators, phones, statuses and times), so the two
//   distributions have the same rows apart from place and a benchmark measures only that.
//
// * Violators: a report's violator is drawn with a Zipf–Mandelbrot law (exponent 1.2,
//   offset 20) over a pool that grows by one violator every two reports (never below 20),
//   so that the pool depends on the report's id, not on the run's size. About count/10
//   distinct violators then appear (9.3% at a million reports), the busiest on ~1.2% of
//   the reports (≈ 12,000 of a million) and about 70% of them on one or two. A fixed pool
//   of count/10 cannot give both an exponent near 1.2 and "most on one or two" (under 50%
//   on one or two at 50,000 reports). Violators are not stored: their phones (1–3) and
//   name are hashes of the seed and their rank. Numbers are a seeded bijection of
//   (rank, slot) onto 15 operator codes × 7 digits, so violators never share a number (up
//   to 80 million reports); the extra numbers of the 2.5% of posters listing 3–5 are
//   unique to that report (up to 7.5 million reports).
//
// * Times: createdAt runs from 2024-11-01T00:00:00Z to 2026-11-01T00:00:00Z, strictly
//   increasing with id, in whole milliseconds; updatedAt equals createdAt for the initial
//   status and is 10 minutes to 60 days later (capped at the end date) otherwise.
//
// * Every report passes `ReferenceData.validate` unchanged: phones are normalized, codes
//   come from the reference data given (codes without a weight here get a default one),
//   and the balance holder is always one of `holders(for: objectType)`.
import Foundation
import Geometry
import ReportModel

/// How the generator spreads report positions (`--distribution kyiv|world` on the command line).
///
/// ```swift
/// let distribution = Distribution(rawValue: "world") ?? .kyiv
/// let generator = ReportGenerator(count: 10, seed: 1, distribution: distribution, reference: reference)
/// ```
public enum Distribution: String, CaseIterable, Sendable {
    /// A realistic Kyiv: hot spots along main streets and at transit stops, plus a sparse
    /// uniform background, all inside the city's boundary.
    case kyiv
    /// Uniform over the Web Mercator square, for benchmarks against other clustering engines.
    case world
}

/// A deterministic sequence of synthetic reports with ids 1...`count`.
///
/// The same count, seed, distribution and reference data always give the same reports.
/// Each report is computed from its id alone, so ``report(id:)`` gives random access and a
/// large run can be split between threads.
///
/// ```swift
/// let reference = try ReferenceData.bundled()
/// let generator = ReportGenerator(count: 1_000_000, seed: 42, distribution: .kyiv, reference: reference)
/// for report in generator {
///     try writer.write(report)
/// }
/// let third = generator.report(id: 3)   // the same as the third report of the loop
/// ```
public struct ReportGenerator: Sequence, Sendable {
    /// How many reports the sequence yields.
    public let count: Int
    /// The seed of the run's random streams; the city layout does not depend on it.
    public let seed: UInt64
    public let distribution: Distribution

    /// Maidan Nezalezhnosti, at the middle of Khreshchatyk.
    public static let kyivCenter = Coordinate(longitude: 30.5234, latitude: 50.4501)

    /// The extent of Kyiv's territory; every `kyiv` report lies in it.
    public static let kyivExtent = try! BoundingBox(west: 30.239, south: 50.213, east: 30.826, north: 50.591)

    /// The rough boundary polygon of Kyiv that `kyiv` positions are sampled in (clockwise,
    /// not closed: the last vertex connects to the first).
    public static let kyivBoundary: [Coordinate] = KyivLayout.boundary.map { Coordinate(longitude: $0.lon, latitude: $0.lat) }

    /// The first possible `createdAt` (2024-11-01T00:00:00Z).
    public static let startDate = Date(timeIntervalSince1970: Double(startMilliseconds) / 1000)
    /// The end of the generated period (2026-11-01T00:00:00Z); no time reaches past it.
    public static let endDate = Date(timeIntervalSince1970: Double(endMilliseconds) / 1000)

    static let startMilliseconds: Int64 = 1_730_419_200_000
    static let endMilliseconds: Int64 = 1_793_491_200_000

    /// Share of reports naming the violator, and carrying a comment.
    static let violatorNameShare = 0.7
    static let commentShare = 0.15

    private let layout: KyivLayout
    private let violators: Violators
    private let reportKey: UInt64
    private let placeKey: UInt64

    private let districtCodes: [String]
    private let districtLon: [Double]
    private let districtLat: [Double]
    private let objectTypeCodes: [String]
    private let objectTypeChoice: WeightedChoice
    private let stopObjectTypeChoice: WeightedChoice
    private let holderCodes: [[String]]
    private let holderChoices: [WeightedChoice]
    private let statusCodes: [String]
    private let statusChoice: WeightedChoice
    private let initialStatus: Int

    /// Prepares a run of `count` (≥ 0) reports; the reports themselves are made on demand.
    public init(count: Int, seed: UInt64, distribution: Distribution = .kyiv, reference: ReferenceData) {
        precondition(count >= 0, "count must not be negative")
        self.count = count
        self.seed = seed
        self.distribution = distribution
        layout = KyivLayout.shared
        violators = Violators(seed: seed)
        reportKey = SplitMix64.mix(seed ^ 0x7265_706F_7274)
        placeKey = SplitMix64.mix(seed ^ 0x706C_6163_65)

        districtCodes = reference.districts.map(\.code)
        districtLon = reference.districts.map { $0.center[0] }
        districtLat = reference.districts.map { $0.center[1] }

        objectTypeCodes = reference.objectTypes.map(\.code)
        let typeWeights = objectTypeCodes.map { Vocabulary.objectTypeWeights[$0] ?? Vocabulary.defaultObjectTypeWeight }
        objectTypeChoice = WeightedChoice(typeWeights)
        stopObjectTypeChoice = WeightedChoice(zip(objectTypeCodes, typeWeights).map { $1 * (Vocabulary.stopBoost[$0] ?? 1) })
        var holderCodes: [[String]] = []
        var holderChoices: [WeightedChoice] = []
        for type in objectTypeCodes {
            // ReferenceData.check() guarantees at least one holder per object type.
            let codes = reference.holders(for: type).map(\.code)
            holderCodes.append(codes)
            holderChoices.append(WeightedChoice(codes.map { Vocabulary.holderWeights["\(type)/\($0)"] ?? 1 }))
        }
        self.holderCodes = holderCodes
        self.holderChoices = holderChoices

        statusCodes = reference.statuses.map(\.code)
        statusChoice = WeightedChoice(statusCodes.map { Vocabulary.statusWeights[$0] ?? Vocabulary.defaultStatusWeight })
        initialStatus = statusCodes.firstIndex(of: reference.initialStatus) ?? 0
    }

    public var underestimatedCount: Int { count }

    public func makeIterator() -> Iterator {
        Iterator(generator: self)
    }

    /// Yields the reports in id order.
    ///
    /// ```swift
    /// var iterator = generator.makeIterator()
    /// while let report = iterator.next() { print(report.id) }
    /// ```
    public struct Iterator: IteratorProtocol, Sendable {
        let generator: ReportGenerator
        var nextID: Int64 = 1

        public mutating func next() -> Report? {
            guard nextID <= Int64(generator.count) else { return nil }
            defer { nextID += 1 }
            return generator.report(id: nextID)
        }
    }

    // MARK: One report

    /// The report numbered `id` (1...`count`), the same as the sequence yields.
    public func report(id: Int64) -> Report {
        precondition(id >= 1 && id <= Int64(count), "report id \(id) is outside 1...\(count)")
        // Two streams: the place, and everything else, so that a `kyiv` and a `world` run of
        // one seed differ only in coordinates, district, address and (at stops) object type.
        var place = SplitMix64(key: placeKey, item: UInt64(id))
        var rng = SplitMix64(key: reportKey, item: UInt64(id))

        let lon: Double, lat: Double, spot: KyivLayout.HotSpot?, district: Int
        switch distribution {
        case .kyiv:
            (lon, lat, spot) = kyivPosition(&place)
            district = nearestDistrict(lon: lon, lat: lat)
        case .world:
            lon = Self.rounded(WebMercator.longitude(x: place.unit()))
            lat = Self.rounded(WebMercator.latitude(y: place.unit()))
            spot = nil
            district = place.below(districtCodes.count)
        }

        let type = (spot?.isStop == true ? stopObjectTypeChoice : objectTypeChoice).draw(&rng)
        let holder = holderChoices[type].draw(&rng)
        let address = makeAddress(spot, &rng)

        let rank = violators.rank(forReport: id, &rng)
        let phones = makePhones(rank: rank, report: id, &rng)
        let violator = rng.chance(Self.violatorNameShare) ? violators.name(of: rank) : nil

        let status = statusChoice.draw(&rng)
        let comment = rng.chance(Self.commentShare) ? Vocabulary.comments[rng.below(Vocabulary.comments.count)] : nil

        // Times last: they are the only draws that depend on `count`.
        let from = creationSlot(id - 1), to = creationSlot(id)
        let created = from + Int64(rng.unit() * Double(to - from))
        let delay = Int64(rng.logUniform(600_000, 60 * 86_400_000))
        let updated = status == initialStatus ? created : Swift.min(created + delay, Self.endMilliseconds)

        return Report(
            id: id, coordinate: Coordinate(longitude: lon, latitude: lat), address: address, city: "Київ",
            district: districtCodes[district], objectType: objectTypeCodes[type],
            balanceHolder: holderCodes[type][holder], violator: violator, phones: phones, comment: comment,
            status: statusCodes[status],
            createdAt: Date(timeIntervalSince1970: Double(created) / 1000),
            updatedAt: Date(timeIntervalSince1970: Double(updated) / 1000))
    }

    /// The start, in Unix milliseconds, of the time slot of report `k + 1`: the two years
    /// are cut into `count` equal slots, so creation times strictly increase with id.
    private func creationSlot(_ k: Int64) -> Int64 {
        let span = UInt64(Self.endMilliseconds - Self.startMilliseconds)
        let product = UInt64(k).multipliedFullWidth(by: span)
        return Self.startMilliseconds + Int64(UInt64(count).dividingFullWidth(product).quotient)
    }

    private func kyivPosition(_ rng: inout SplitMix64) -> (Double, Double, KyivLayout.HotSpot?) {
        let extent = Self.kyivExtent
        if rng.chance(KyivLayout.sparseShare) {
            while true {
                let lon = Self.rounded(extent.west + rng.unit() * (extent.east - extent.west))
                let lat = Self.rounded(extent.south + rng.unit() * (extent.north - extent.south))
                if layout.contains(lon: lon, lat: lat) { return (lon, lat, nil) }
            }
        }
        let spot = layout.hotSpots[layout.choice.draw(&rng)]
        let metresPerLon = KyivLayout.metresPerDegreeLatitude * cos(spot.lat * .pi / 180)
        for _ in 0..<8 {
            let (dx, dy) = rng.normalPair()
            let lon = Self.rounded(spot.lon + dx * spot.sigma / metresPerLon)
            let lat = Self.rounded(spot.lat + dy * spot.sigma / KyivLayout.metresPerDegreeLatitude)
            if layout.contains(lon: lon, lat: lat) { return (lon, lat, spot) }
        }
        return (spot.lon, spot.lat, spot)  // hot spots lie inside the polygon
    }

    private func nearestDistrict(lon: Double, lat: Double) -> Int {
        let scale = cos(lat * .pi / 180)
        var best = 0, bestDistance = Double.infinity
        for i in districtLon.indices {
            let dx = (districtLon[i] - lon) * scale, dy = districtLat[i] - lat
            let d = dx * dx + dy * dy
            if d < bestDistance { (best, bestDistance) = (i, d) }
        }
        return best
    }

    /// `street, number`: the hot spot's street and a number near its position along it, or a
    /// listed street. Always four draws, so that the streams of `kyiv` and `world` stay aligned.
    private func makeAddress(_ spot: KyivLayout.HotSpot?, _ rng: inout SplitMix64) -> String {
        let pick = rng.below(Vocabulary.streets.count), position = rng.unit()
        let kind = rng.below(100), corner = 1 + rng.below(40)
        let street: String, number: Int
        if let spot {
            street = layout.streets[spot.street].name
            number = Swift.max(1, spot.houseNumber + Int(position * 9) - 4)
        } else {
            street = Vocabulary.streets[pick]
            number = 1 + Int(pow(position, 1.8) * 180)
        }
        switch kind {
        case 0..<6: return "\(street), \(number)а"
        case 6..<8: return "\(street), \(number)б"
        case 8..<11: return "\(street), \(number)/\(corner)"
        default: return "\(street), \(number)"
        }
    }

    /// One or two of the violator's numbers; on 2.5% of reports all of them plus numbers
    /// seen nowhere else, 3 to 5 in all.
    private func makePhones(rank: Int64, report id: Int64, _ rng: inout SplitMix64) -> [String] {
        let owned = violators.phoneCount(of: rank)
        if rng.chance(0.025) {
            let total = 3 + rng.below(3)
            var phones = (0..<owned).map { violators.phone(ofViolator: rank, slot: $0) }
            var extra = 0
            while phones.count < total {
                phones.append(violators.oneOffPhone(report: id, slot: extra))
                extra += 1
            }
            return phones
        }
        let first = owned == 1 || rng.chance(0.7) ? 0 : rng.below(owned)
        guard owned >= 2, rng.chance(0.35) else { return [violators.phone(ofViolator: rank, slot: first)] }
        var second = rng.below(owned - 1)
        if second >= first { second += 1 }
        return [violators.phone(ofViolator: rank, slot: first), violators.phone(ofViolator: rank, slot: second)]
    }

    /// Degrees to 6 decimals (about 0.1 m), so text exports stay short and exact.
    @inline(__always)
    static func rounded(_ degrees: Double) -> Double {
        (degrees * 1e6).rounded() / 1e6
    }
}
