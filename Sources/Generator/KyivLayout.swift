import Foundation
import Geometry

/// The synthetic city the `kyiv` distribution draws from: a rough boundary polygon,
/// named main streets along real avenues, and the hot spots placed along them.
///
/// The layout is built once per process from ``layoutSeed``, never from the user's seed,
/// so every run and every seed sees the same city; only the reports drawn from it change.
struct KyivLayout: Sendable {
    /// The fixed seed of the city layout ("Kyiv" in ASCII).
    static let layoutSeed: UInt64 = 0x4B79_6976

    /// Share of reports drawn uniformly over the boundary polygon instead of at a hot spot.
    static let sparseShare = 0.12

    /// Weights of the hot spots. These constants are calibrated so that the 1280×800 px
    /// viewports on ``ReportGenerator/kyivCenter`` hold ≈ 44% (z12), 4.2% (z14) and
    /// 0.85% (z16) of the reports; see the module's top comment.
    enum Calibration {
        /// Tail exponent of the Pareto base weight of a hot spot, and its cap.
        static let paretoAlpha = 1.5
        static let paretoCap = 6.0
        /// A transit stop draws this many times more posters than a street point.
        static let stopFactor = 1.5
        /// The weight of a place is the product of three factors, one per viewport of the
        /// calibration (see ``KyivLayout/placeFactor(lon:lat:)``):
        ///
        /// * the historic centre, `1 + centreBoost·exp(-(d/centreRadiusKm)²)`, d from Maidan;
        /// * the residential belt, `1 + beltBoost·ramp(beltFrom, beltTo)`;
        /// * the outskirts, `1 + outerBoost·ramp(outerFrom, outerTo)`;
        ///
        /// where a ramp rises from 0 to 1 as the superelliptic distance from Maidan,
        /// `(|east/coreEastKm|⁶ + |north/coreNorthKm|⁶)^(1/6)`, crosses the two values. The
        /// core, distance 1, is a rounded 31 × 19.5 km rectangle: the z12 viewport, which
        /// covers almost all of the built-up city; the belt starts near the edge of the z14
        /// viewport (distance 0.25).
        static let centreBoost = 0.3
        static let centreRadiusKm = 1.2
        static let beltBoost = 1.2
        static let beltFrom = 0.2
        static let beltTo = 0.35
        static let outerBoost = 6.75
        static let outerFrom = 0.97
        static let outerTo = 1.07
        static let coreEastKm = 15.6
        static let coreNorthKm = 9.75
        /// Mean spacing of transit stops and of other hot spots along a street, in metres.
        static let stopSpacing = 1_100.0
        static let pointSpacing = 600.0
    }

    /// A named street: a polyline starting at its end nearest the centre, where house
    /// numbers start.
    struct Street: Sendable {
        let name: String
        let points: [(lon: Double, lat: Double)]
        /// How busy the street is: a factor on the weight of its hot spots.
        var traffic = 1.0
    }

    /// A place where posters concentrate; reports scatter around it with a Gaussian of
    /// `sigma` metres.
    struct HotSpot: Sendable {
        let lon: Double
        let lat: Double
        let sigma: Double
        let street: Int
        let houseNumber: Int
        let isStop: Bool
        /// The weight of the spot itself (Pareto × street traffic × stop factor), before
        /// the place factor of ``KyivLayout/placeFactor(lon:lat:)``.
        let intrinsicWeight: Double
        var weight: Double { intrinsicWeight * KyivLayout.placeFactor(lon: lon, lat: lat) }
    }

    let boundaryLon: [Double]
    let boundaryLat: [Double]
    let streets: [Street]
    let hotSpots: [HotSpot]
    let choice: WeightedChoice

    static let shared = KyivLayout()

    // MARK: Geography

    /// Kyiv's boundary, roughly (clockwise from the west, on the Zhytomyr highway).
    static let boundary: [(lon: Double, lat: Double)] = [
        (30.239, 50.452), (30.255, 50.490), (30.300, 50.535), (30.340, 50.575),
        (30.420, 50.591), (30.470, 50.572), (30.505, 50.560), (30.540, 50.582),
        (30.600, 50.588), (30.660, 50.560), (30.720, 50.530), (30.790, 50.490),
        (30.826, 50.440), (30.800, 50.390), (30.740, 50.355), (30.680, 50.320),
        (30.640, 50.260), (30.610, 50.213), (30.560, 50.230), (30.530, 50.290),
        (30.490, 50.330), (30.440, 50.345), (30.400, 50.380), (30.350, 50.400),
        (30.320, 50.425), (30.280, 50.435),
    ]

    /// Main streets along real avenues (approximately), each from its central end.
    static let streetData: [Street] = [
        // South: Khreshchatyk, Velyka Vasylkivska, Holosiivskyi, Hlushkova.
        Street(name: "вул. Хрещатик", points: [(30.5290, 50.4536), (30.5234, 50.4501), (30.5208, 50.4418)]),
        Street(name: "вул. Велика Васильківська", points: [
            (30.5210, 50.4418), (30.5164, 50.4392), (30.5161, 50.4318), (30.5208, 50.4209), (30.5249, 50.4133),
        ]),
        Street(name: "просп. Голосіївський", points: [
            (30.5249, 50.4133), (30.5171, 50.4049), (30.5082, 50.3973), (30.4880, 50.3932), (30.4773, 50.3826),
        ]),
        Street(name: "просп. Академіка Глушкова", points: [
            (30.4773, 50.3826), (30.4689, 50.3766), (30.4540, 50.3669), (30.4430, 50.3580),
        ]),
        // West: Shevchenko boulevard, Beresteiskyi avenue, Zhytomyr highway.
        Street(name: "бульв. Тараса Шевченка", points: [(30.5210, 50.4418), (30.5058, 50.4441), (30.4875, 50.4503)]),
        Street(name: "просп. Берестейський", points: [
            (30.4875, 50.4503), (30.4662, 50.4508), (30.4451, 50.4550), (30.4198, 50.4590),
            (30.4037, 50.4589), (30.3909, 50.4578), (30.3659, 50.4561), (30.3500, 50.4580),
        ]),
        Street(name: "Житомирське шосе", points: [(30.3500, 50.4580), (30.3000, 50.4545), (30.2500, 50.4525)]),
        // The old town, north to south, and Hrushevskoho towards Pechersk.
        Street(name: "вул. Володимирська", points: [
            (30.5165, 50.4585), (30.5140, 50.4490), (30.5105, 50.4420), (30.5110, 50.4340),
        ]),
        Street(name: "вул. Михайла Грушевського", points: [(30.5290, 50.4536), (30.5370, 50.4460), (30.5454, 50.4443)]),
        Street(name: "вул. Січових Стрільців", points: [(30.5100, 50.4560), (30.4960, 50.4590), (30.4818, 50.4623)]),
        Street(name: "вул. Саксаганського", points: [(30.5200, 50.4400), (30.5050, 50.4370), (30.4880, 50.4380)]),
        Street(name: "бульв. Лесі Українки", points: [(30.5320, 50.4380), (30.5360, 50.4280), (30.5400, 50.4180)]),
        // North: Podil, Obolon, on to the Vyshhorod border.
        Street(name: "вул. Кирилівська", points: [
            (30.5151, 50.4654), (30.5050, 50.4730), (30.4900, 50.4800), (30.4750, 50.4870),
        ]),
        Street(name: "просп. Оболонський", points: [
            (30.4978, 50.4862), (30.4980, 50.5013), (30.4985, 50.5124), (30.4988, 50.5225), (30.5000, 50.5300),
        ]),
        Street(name: "вул. Богатирська", points: [(30.5000, 50.5300), (30.5150, 50.5450), (30.5250, 50.5600)]),
        Street(name: "просп. Степана Бандери", points: [(30.4978, 50.4862), (30.4700, 50.4880), (30.4450, 50.4900)]),
        // Left bank: Brovary, Troieshchyna, Pozniaky, Kharkiv highway.
        Street(name: "Броварський просп.", points: [
            (30.5982, 50.4516), (30.6128, 50.4557), (30.6301, 50.4599), (30.6451, 50.4649),
            (30.6900, 50.4800), (30.7300, 50.4920), (30.7700, 50.4980),
        ]),
        Street(name: "вул. Закревського", points: [(30.6100, 50.4980), (30.6150, 50.5250), (30.6250, 50.5620)]),
        Street(name: "вул. Євгенія Харченка", points: [(30.6850, 50.3950), (30.7000, 50.3700), (30.7200, 50.3550)]),
        Street(name: "просп. Миколи Бажана", points: [
            (30.5900, 50.3960), (30.6046, 50.3940), (30.6163, 50.3953), (30.6342, 50.3980), (30.6525, 50.4009),
        ]),
        Street(name: "Харківське шосе", points: [
            (30.6250, 50.4380), (30.6500, 50.4150), (30.6844, 50.4035), (30.7300, 50.3850), (30.7800, 50.3860),
        ]),
        // South along the Dnipro to Koncha-Zaspa, and west to Borshchahivka.
        Street(name: "Столичне шосе", points: [
            (30.5609, 50.4017), (30.5600, 50.3600), (30.5650, 50.3200), (30.5800, 50.2800), (30.6000, 50.2400),
        ], traffic: 0.5),
        Street(name: "просп. Валерія Лобановського", points: [(30.5171, 50.4049), (30.4900, 50.4170), (30.4660, 50.4260)]),
        Street(name: "просп. Повітряних Сил", points: [(30.4882, 50.4416), (30.4750, 50.4330), (30.4620, 50.4250)]),
        Street(name: "просп. Леся Курбаса", points: [(30.3900, 50.4520), (30.3650, 50.4400), (30.3500, 50.4300)]),
    ]

    // MARK: Building

    init() {
        boundaryLon = Self.boundary.map(\.lon)
        boundaryLat = Self.boundary.map(\.lat)
        streets = Self.streetData
        var rng = SplitMix64(state: Self.layoutSeed)
        var spots: [HotSpot] = []
        for (index, street) in streets.enumerated() {
            // Lengths of the segments, in metres.
            var lengths: [Double] = []
            for (a, b) in zip(street.points, street.points.dropFirst()) {
                lengths.append(Self.metres(from: a, to: b))
            }
            let total = lengths.reduce(0, +)
            var along: [(Double, Bool)] = []
            var s = rng.unit() * Calibration.stopSpacing
            while s < total {
                along.append((s, true))
                s += Calibration.stopSpacing * (0.7 + 0.6 * rng.unit())
            }
            let points = max(1, Int((total / Calibration.pointSpacing).rounded()))
            for _ in 0..<points { along.append((rng.unit() * total, false)) }
            for (distance, isStop) in along {
                // The point at `distance` along the polyline, pushed to one side of the street.
                var rest = distance, segment = 0
                while segment < lengths.count - 1, rest > lengths[segment] {
                    rest -= lengths[segment]
                    segment += 1
                }
                let a = street.points[segment], b = street.points[segment + 1]
                let t = min(1, rest / lengths[segment])
                let metresPerLon = Self.metresPerDegreeLatitude * cos(a.lat * .pi / 180)
                let dx = (b.lon - a.lon) * metresPerLon, dy = (b.lat - a.lat) * Self.metresPerDegreeLatitude
                let norm = (dx * dx + dy * dy).squareRoot()
                let side = (rng.chance(0.5) ? 1.0 : -1.0) * (8 + 27 * rng.unit())
                let lon = a.lon + t * (b.lon - a.lon) + side * (-dy / norm) / metresPerLon
                let lat = a.lat + t * (b.lat - a.lat) + side * (dx / norm) / Self.metresPerDegreeLatitude
                let sigma = isStop ? rng.logUniform(20, 60) : rng.logUniform(40, 150)
                let base = min(Calibration.paretoCap, pow(rng.positiveUnit(), -1 / Calibration.paretoAlpha))
                guard Self.contains(lon: lon, lat: lat, polygonLon: boundaryLon, polygonLat: boundaryLat) else { continue }
                spots.append(HotSpot(
                    lon: lon, lat: lat, sigma: sigma, street: index,
                    houseNumber: max(1, Int(distance / 40)), isStop: isStop,
                    intrinsicWeight: base * street.traffic * (isStop ? Calibration.stopFactor : 1)))
            }
        }
        hotSpots = spots
        choice = WeightedChoice(spots.map(\.weight))
    }

    /// The weight factor of a place: centre × residential belt × outskirts (see ``Calibration``).
    static func placeFactor(lon: Double, lat: Double) -> Double {
        typealias C = Calibration
        let centre = ReportGenerator.kyivCenter
        let east = (lon - centre.longitude) * metresPerDegreeLatitude * cos(centre.latitude * .pi / 180) / 1000
        let north = (lat - centre.latitude) * metresPerDegreeLatitude / 1000
        let r = (east * east + north * north).squareRoot() / C.centreRadiusKm
        let e = pow(pow(abs(east / C.coreEastKm), 6) + pow(abs(north / C.coreNorthKm), 6), 1.0 / 6)
        func ramp(_ from: Double, _ to: Double) -> Double { min(1, max(0, (e - from) / (to - from))) }
        return (1 + C.centreBoost * exp(-r * r)) * (1 + C.beltBoost * ramp(C.beltFrom, C.beltTo))
            * (1 + C.outerBoost * ramp(C.outerFrom, C.outerTo))
    }

    // MARK: Geometry helpers

    static let metresPerDegreeLatitude = 111_229.0

    /// Equirectangular distance, good to a fraction of a percent over a city.
    static func metres(from a: (lon: Double, lat: Double), to b: (lon: Double, lat: Double)) -> Double {
        let dx = (b.lon - a.lon) * metresPerDegreeLatitude * cos((a.lat + b.lat) / 2 * .pi / 180)
        let dy = (b.lat - a.lat) * metresPerDegreeLatitude
        return (dx * dx + dy * dy).squareRoot()
    }

    /// Whether the boundary polygon holds the point (even–odd rule).
    @inline(__always)
    func contains(lon: Double, lat: Double) -> Bool {
        Self.contains(lon: lon, lat: lat, polygonLon: boundaryLon, polygonLat: boundaryLat)
    }

    static func contains(lon: Double, lat: Double, polygonLon: [Double], polygonLat: [Double]) -> Bool {
        var inside = false
        var j = polygonLon.count - 1
        for i in 0..<polygonLon.count {
            let yi = polygonLat[i], yj = polygonLat[j]
            if (yi > lat) != (yj > lat) {
                let x = polygonLon[i] + (lat - yi) / (yj - yi) * (polygonLon[j] - polygonLon[i])
                if lon < x { inside.toggle() }
            }
            j = i
        }
        return inside
    }
}
