import ArgumentParser
import Interchange

struct Search: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find reports by a fragment of a phone number or a report id; print them as GeoJSON.",
        discussion: """
            Any written form works: "067 12", "+38(067)123", "#1234". The report whose id is the
            digits comes first, then the others newest first. numberMatched counts all matches.
            """)

    @Argument(help: "Digits of a phone number or report id, in any written form.")
    var text: String

    @Option(help: "How many reports to print at most (1 to 10,000).")
    var limit = 50

    @OptionGroup var store: StoreOptions

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be from 1 to 10000, got \(limit).") }
    }

    func run() async throws {
        let (found, matched) = try await store.reader().search(text, limit: limit)
        Console.printFeatureCollection(found, members: [
            ("query", GeoJSON.string(text)), ("numberMatched", "\(matched)"), ("numberReturned", "\(found.count)"),
        ])
    }
}
