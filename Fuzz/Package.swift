// swift-tools-version:6.1
//
// libFuzzer targets for PosterWatch's parsers (issue #17), kept out of the main package so
// that `swift build` and `make test` never compile them: each needs `-sanitize=fuzzer`,
// whose libFuzzer supplies `main`. Built and run by scripts/fuzz.sh (`make fuzz`).
//
// One executable per entry point, each calling the real public API on the fuzzer's bytes:
//   phone       Phone.normalize / normalizeList, one number a line
//   bbox        BoundingBox(parsing:), then the cluster cells of the box at every zoom
//   decimal     DecimalNumber.parse, against Double's own reading
//   datetime    DateTimeInterval(parsing:), its milliseconds and RFC 3339 written back
//   clusterid   ClusterID(parsing:) and the cell it names in each cell size's grid
//   geojson     ReportReader over a FeatureCollection
//   geojsonseq  ReportReader over a GeoJSON text sequence (lines or RFC 8142)
//   csv         ReportReader over CSV
//   jsonbody    JSONValue.members(parsing:), a request body, written back and read again
//   photo       PhotoProcessor.process: JPEG (libjpeg-turbo) and PNG (libpng) uploads
import PackageDescription

let package = Package(
    name: "PosterWatchFuzz",
    dependencies: [.package(name: "PosterWatch", path: "..")],
    targets: [
        .systemLibrary(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        fuzzer("phone", ["ReportModel"]),
        fuzzer("bbox", ["Geometry", "Clustering"]),
        fuzzer("decimal", ["Geometry"]),
        fuzzer("datetime", ["Interchange"]),
        fuzzer("clusterid", ["Clustering"]),
        fuzzer("geojson", ["Interchange", "ReportModel"]),
        fuzzer("geojsonseq", ["Interchange", "ReportModel"]),
        fuzzer("csv", ["Interchange", "ReportModel"]),
        fuzzer("jsonbody", ["Interchange"]),
        fuzzer("photo", ["Photos"]),
    ],
    swiftLanguageModes: [.v6]
)

/// A fuzz target: `Sources/<name>/main.swift`, with the main package's library products it calls.
func fuzzer(_ name: String, _ products: [String]) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport"] + products.map { .product(name: $0, package: "PosterWatch") })
}
