import ArgumentParser
import Geometry
import Interchange

struct Query: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the reports inside a box as a GeoJSON FeatureCollection, in id order.",
        discussion: """
            A box whose west edge is east of its east edge crosses the antimeridian. Page with
            --after: pass the last id of one page to get the next.
            """)

    // Unconditional: the value may start with "-" (a western or southern edge).
    @Option(parsing: .unconditional, help: ArgumentHelp("The box: west,south,east,north in degrees.", valueName: "W,S,E,N"))
    var bbox: String

    @Option(help: "How many reports to print at most (1 to 1,000,000).")
    var limit = 1_000

    @Option(help: ArgumentHelp("Print only reports with ids greater than this one (the last id of the previous page).", valueName: "id"))
    var after: Int64?

    @OptionGroup var store: StoreOptions

    func validate() throws {
        guard (1...1_000_000).contains(limit) else { throw ValidationError("--limit must be from 1 to 1000000, got \(limit).") }
    }

    func run() async throws {
        let box = try BoundingBox(parsing: bbox)
        let (page, matched) = try await store.reader().page(in: box, after: after, limit: limit)
        Console.printFeatureCollection(page, members: [
            ("bbox", "[\(box.west),\(box.south),\(box.east),\(box.north)]"),
            ("numberMatched", "\(matched)"), ("numberReturned", "\(page.count)"),
        ])
    }
}
