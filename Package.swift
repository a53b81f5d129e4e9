// swift-tools-version:6.1
//
// PosterWatch: a map service for reports of illegally placed posters.
//
// The targets read bottom-up, each a single job:
//   Geometry      coordinates, bounding boxes (antimeridian aware), Web Mercator and tile math
//   FlatFiles     arrays of plain values saved to a file of checked sections and read back (the indexes' snapshots)
//   Offloading    work kept off Swift's cooperative pool (a task executor of blocking threads), and lanes that bound how much runs at once
//   ReportModel   the domain, with no I/O: reports and their validation, history, changes, phones, photos' rows,
//                 accounts and roles; phone-number normalization, reference data
//   StorePorts    what every store implements (report reads, the write transaction, the change log, imports, photos'
//                 bytes, accounts, webhooks), with the rules its conformance suite checks
//   SQLiteStore   SQLite (GRDB): schema, R*Tree box queries, FTS5 phone search, bulk import
//   PostgresStore PostgreSQL with PostGIS (postgres-nio): every port, for several replicas on one database
//   Clustering    grid clusters per zoom: a quadtree of per-status aggregates, updated write by write
//   Tally         the reports of any area and period counted from memory: numbers ranked, counts by status, district, type, month
//   ReportService a store (through its ports), the cluster index and the tally kept in step; what the CLI and the server call
//   Accounts      users, roles, passwords (bcrypt), sessions and access tokens (JWT), API keys
//   ChangeFeed    the numbered writes as a feed: what each reader may see of them, and its JSON
//   Webhooks      endpoints that subscribe to changes, their durable outbox, and its signed delivery
//   Server        the HTTP API (Hummingbird 2): thin handlers over the services of one database (Backend)
//   Interchange   GeoJSON, GeoJSON text sequences and CSV, read and written in one vocabulary; JSON request bodies read strictly
//   Tiles         PNG map tiles of the clusters: anti-aliased discs, our own digit font, libpng
//   Photos        uploaded photos re-encoded from their pixels (libjpeg-turbo, libpng): upright, shrunk, no metadata
//   Backup        a consistent copy of a served database and its photos, and its restore
//   Reprojection  WGS84 longitude/latitude to other CRSs through PROJ (EPSG codes, OGC CRS URIs)
//   Autodial      the robot that calls a violator's number: the city's rules, when each call may go out,
//                 the message's audio, and the dialer that places calls over SIP (baresip)
//   Generator     deterministic synthetic reports (a realistic Kyiv and a uniform world)
//   posterwatch   the command-line tool: parses, calls the libraries above, formats
//   Benchmarks    `make bench`: measures the store and writes BENCHMARKS.md
//   TestSupport   what the test targets share: temporary directories and stores, seeded drafts, the random draws
//   CPNG, CProj   module maps for libpng and PROJ (tiles and reprojection); CJPEG: libjpeg-turbo (photos); CZlib: gzip for the server; CISAL: ISA-L's CRC-32 for FlatFiles;
//                 CSQLiteConfig: SQLite's process-wide settings, which GRDB does not reach; CMalloc: glibc's allocator settings
import PackageDescription

let package = Package(
    name: "PosterWatch",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "posterwatch", targets: ["posterwatch"]),
        .executable(name: "posterwatch-bench", targets: ["Benchmarks"]),
        .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
        .library(name: "Clustering", targets: ["Clustering"]),
        .library(name: "Geometry", targets: ["Geometry"]),
        .library(name: "ReportModel", targets: ["ReportModel"]),
        .library(name: "Interchange", targets: ["Interchange"]),
        .library(name: "Photos", targets: ["Photos"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // Already in the graph through Hummingbird; named for the change stream, which ends on graceful shutdown.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Already in the graph through Hummingbird; named for the HTTP parts the change stream writes to its connections.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .systemLibrary(name: "CPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CProj", pkgConfig: "proj", providers: [.apt(["libproj-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CISAL", pkgConfig: "libisal", providers: [.apt(["libisal-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CSQLiteConfig", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CMalloc"),

        .target(name: "Geometry"),
        .target(name: "Offloading"),
        .target(name: "StorePorts", dependencies: ["Geometry", "ReportModel"]),
        .target(name: "ReportModel", dependencies: ["Geometry"], resources: [.embedInCode("reference")]),
        .target(
            name: "SQLiteStore",
            dependencies: [
                "Geometry", "ReportModel", "StorePorts", "CSQLiteConfig",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        .target(
            name: "PostgresStore",
            dependencies: [
                "Geometry", "ReportModel", "StorePorts", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .target(name: "FlatFiles", dependencies: ["CISAL"]),
        .target(name: "Clustering", dependencies: ["FlatFiles", "Geometry"]),
        .target(name: "Tally", dependencies: ["Clustering", "FlatFiles"]),
        .target(
            name: "ReportService",
            dependencies: [
                "Clustering", "FlatFiles", "Geometry", "Offloading", "Tally", "Photos", "ReportModel", "StorePorts", .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .target(
            name: "Accounts",
            dependencies: [
                "Offloading", "ReportModel", "StorePorts", .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.embedInCode("common-passwords.txt")]),
        .target(name: "Interchange", dependencies: ["Clustering", "Geometry", "ReportModel"]),
        .target(name: "Tiles", dependencies: ["Clustering", "Geometry", "CPNG"]),
        .target(
            name: "ChangeFeed", dependencies: ["Interchange", "Offloading", "ReportModel", "StorePorts", .product(name: "NIOCore", package: "swift-nio")]),
        .target(
            name: "Webhooks",
            dependencies: [
                "ChangeFeed", "Geometry", "Interchange", "Offloading", "ReportModel", "StorePorts",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .target(name: "Photos", dependencies: ["CJPEG", "CPNG", "StorePorts", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "Backup", dependencies: ["Photos", "SQLiteStore", "StorePorts"]),
        .target(name: "Reprojection", dependencies: ["CProj", "Geometry"]),
        .target(
            name: "Server",
            dependencies: [
                "Accounts", "ChangeFeed", "Clustering", "CZlib", "Offloading", "Geometry", "Interchange", "ReportModel", "ReportService", "StorePorts", "Reprojection",
                "Photos", "Tiles", "Webhooks", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"), .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"), .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("Map")]),
        .target(name: "Autodial", dependencies: ["Geometry", "ReportModel", "ReportService", .product(name: "Logging", package: "swift-log")]),
        .target(name: "Generator", dependencies: ["Geometry", "ReportModel"]),
        .executableTarget(
            name: "posterwatch",
            dependencies: [
                "Accounts", "Autodial", "Backup", "ChangeFeed", "CMalloc", "Photos", "SQLiteStore", "PostgresStore", "ReportService", "Clustering", "Interchange", "Generator", "Server",
                "Tiles", "Webhooks", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "Accounts", "Autodial", "Offloading", "ChangeFeed", "CJPEG", "CMalloc", "Photos", "SQLiteStore", "PostgresStore", "StorePorts", "ReportService", "Clustering", "Interchange", "Generator", "Server",
                "Tiles", "Webhooks", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .target(
            name: "TestSupport",
            dependencies: [
                "Accounts", "Autodial", "CJPEG", "CZlib", "Clustering", "Generator", "Geometry", "PostgresStore", "ReportModel", "SQLiteStore", "StorePorts",
            ],
            path: "Tests/TestSupport"),
        .testTarget(name: "GeometryTests", dependencies: ["Geometry"]),
        .testTarget(name: "ReportModelTests", dependencies: ["ReportModel"]),
        .testTarget(name: "SQLiteStoreTests", dependencies: ["SQLiteStore", "StorePorts", "Generator", "TestSupport"]),
        .testTarget(name: "OffloadingTests", dependencies: ["Offloading", "TestSupport"]),
        .testTarget(name: "FlatFilesTests", dependencies: ["FlatFiles", "TestSupport"]),
        // One suite every store passes: the ports' requirements against brute-force models.
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: [
                "Accounts", "Backup", "ChangeFeed", "Photos", "Generator", "Geometry", "Offloading", "PostgresStore", "ReportModel", "ReportService", "SQLiteStore",
                "StorePorts", "TestSupport", "Webhooks", .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        .testTarget(name: "ClusteringTests", dependencies: ["Clustering", "FlatFiles", "Generator", "TestSupport"]),
        .testTarget(name: "ReportServiceTests", dependencies: ["Accounts", "ChangeFeed", "Interchange", "ReportService", "Generator", "Tally", "TestSupport"]),
        .testTarget(name: "WebhooksTests", dependencies: ["ChangeFeed", "Generator", "ReportService", "SQLiteStore", "TestSupport", "Webhooks", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "AccountsTests", dependencies: ["Accounts", "SQLiteStore", "TestSupport"]),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "Accounts", "Server", "ReportService", "Interchange", "Generator", "Tiles", "TestSupport", "Webhooks",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .testTarget(name: "InterchangeTests", dependencies: ["Interchange", "Generator", "TestSupport"]),
        .testTarget(name: "TilesTests", dependencies: ["Tiles", "Clustering", "Geometry", "Generator", "CPNG"]),
        .testTarget(name: "ReprojectionTests", dependencies: ["Reprojection"]),
        .testTarget(name: "GeneratorTests", dependencies: ["Generator"]),
        .testTarget(name: "AutodialTests", dependencies: ["Autodial", "Generator", "Geometry", "ReportModel", "ReportService", "StorePorts", "TestSupport"]),
        .testTarget(
            name: "CLITests",
            dependencies: ["posterwatch", "Autodial", "Generator", "Geometry", "ReportModel", "SQLiteStore", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "PhotosTests", dependencies: ["CJPEG", "CPNG", "CZlib", "Photos", "TestSupport"]),
        .testTarget(name: "SystemLibraryTests", dependencies: ["CPNG", "CProj"]),
    ],
    swiftLanguageModes: [.v6]
)
