import ArgumentParser
import Clustering
import Geometry
import Interchange
import ReportService

struct Clusters: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the clusters and lone reports of an area at a zoom as a GeoJSON FeatureCollection.",
        discussion: """
            Reports are grouped by square cells of --cell-size pixels on 256-px Web Mercator tiles.
            A cell with fewer than --min-points matching reports shows them one by one. Cluster
            features carry cluster: true, count, count_abbrev, expansion_zoom, statuses and a bbox;
            lone reports carry their own properties.
            """)

    // Unconditional: the value may start with "-" (a western or southern edge).
    @Option(parsing: .unconditional, help: ArgumentHelp("The area: west,south,east,north in degrees (west > east crosses the antimeridian).", valueName: "W,S,E,N"))
    var bbox: String

    @Option(help: "The map zoom, from 0 to --max-zoom.")
    var zoom: Int

    @OptionGroup var filter: FilterOptions

    @Option(help: "The cell size in pixels: 32, 64, 128 or 256.")
    var cellSize = 64

    @Option(help: "The highest clustered zoom.")
    var maxZoom = 20

    @Option(help: "The fewest reports a cell needs to show as a cluster.")
    var minPoints = 2

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let grid = try ClusterGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: minPoints)
        try grid.checkZoom(zoom, field: "--zoom")
        let box = try BoundingBox(parsing: bbox)
        let service = try await ReportService(storage: store.stores().reports, grid: grid)
        let filter = try service.filter(statuses: self.filter.statuses, created: self.filter.created())
        let answer = try await service.clusters(in: box, zoom: zoom, filter: filter)
        Console.write(ClusterGeoJSON.featureCollection(answer.items, reports: answer.reports, statusCodes: service.statusCodes, members: [
            ("bbox", "[\(box.west),\(box.south),\(box.east),\(box.north)]"), ("zoom", "\(zoom)"),
        ]))
    }
}
