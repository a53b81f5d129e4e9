import ArgumentParser
import Foundation
import Geometry
import ReportService
import Tiles

struct Render: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw a map tile, or a picture of an area, of the clustered reports as a PNG.",
        discussion: """
            A tile: --z, --x and --y (256 px, or 256·--scale). A picture: --bbox, --zoom and --size,
            centred on the box. Transparent where there is nothing; the same drawing as the server's
            /v1/tiles. An empty tile writes no file and says so.
            """)

    @Option(help: "The tile's zoom.")
    var z: Int?
    @Option(help: "The tile's column (0 at 180° W).")
    var x: Int?
    @Option(help: "The tile's row (0 at the north).")
    var y: Int?

    // Unconditional: the value may start with "-" (a western or southern edge).
    @Option(parsing: .unconditional, help: ArgumentHelp("The area to picture: west,south,east,north in degrees.", valueName: "W,S,E,N"))
    var bbox: String?
    @Option(help: "The picture's zoom.")
    var zoom: Int?
    @Option(help: ArgumentHelp("The picture's size in pixels (each side 1 to \(MapWindow.maxSide)).", valueName: "WxH"))
    var size = "1024x768"

    @Option(help: "Pixels per pixel of a 256-px tile: 2 for high-density screens.")
    var scale = 1

    @OptionGroup var filter: FilterOptions

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp("The PNG file to write.", valueName: "file"))
    var output: String

    @OptionGroup var store: StoreOptions

    func validate() throws {
        let tile = [z, x, y].contains { $0 != nil }, picture = bbox != nil || zoom != nil
        guard tile != picture else { throw ValidationError("Give either --z, --x and --y (a tile) or --bbox and --zoom (a picture).") }
        if tile, [z, x, y].contains(where: { $0 == nil }) { throw ValidationError("A tile needs all of --z, --x and --y.") }
        if picture, bbox == nil || zoom == nil { throw ValidationError("A picture needs both --bbox and --zoom.") }
    }

    func run() async throws {
        // What to draw is checked before the index is built.
        let tile = try z.map { z in try TileID(z: z, x: x!, y: y!) }
        let picture = try bbox.map { text in (box: try BoundingBox(parsing: text), size: try Self.size(size)) }
        let created = try filter.created()
        let service = try await store.reports()
        let renderer = TileRenderer(clusters: service.clusterView)
        let filter = try service.filter(statuses: self.filter.statuses, created: created)
        let image: RenderedImage
        if let tile {
            guard let drawn = try renderer.render(tile: tile, scale: scale, filter: filter) else {
                Console.error("tile \(tile) is empty: no report shows on it; \(output) not written")
                return
            }
            image = drawn
        } else {
            let (box, (width, height)) = picture!
            image = try renderer.render(box: box, zoom: zoom!, width: width, height: height, scale: scale, filter: filter)
        }
        try Data(image.png).write(to: URL(fileURLWithPath: output))
        Console.error("wrote \(output): \(image.width)×\(image.height) px, \(Format.count(image.png.count)) bytes, \(Format.count(image.markerCount)) markers")
    }

    /// `WxH`, e.g. `1024x768`.
    static func size(_ text: String) throws(Geometry.ValidationError) -> (Int, Int) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]) else {
            throw Geometry.ValidationError(field: "--size", "must be WIDTHxHEIGHT in pixels, e.g. 1024x768; got \"\(text.prefix(40))\"")
        }
        return (width, height)
    }
}
