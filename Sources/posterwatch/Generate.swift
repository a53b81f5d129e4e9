import ArgumentParser
import Foundation
import Generator
import Interchange
import ReportModel

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write deterministic synthetic reports (GeoJSON text sequences by default).",
        discussion: """
            The same count, seed and distribution always give the same file. kyiv: dense hot spots
            along streets and transit stops of the real city, heavy-tailed phone reuse. world:
            uniform over the Web Mercator square, for comparisons with other clustering engines.
            The format follows the file name: .csv, .geojson, or GeoJSON text sequences otherwise.
            """)

    @Option(help: "How many reports (1 to 100,000,000).")
    var count: Int

    @Option(help: "The random seed.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Where the reports lie: \(Distribution.allCases.map(\.rawValue).joined(separator: " or ")).", valueName: "name"))
    var distribution: Distribution = .kyiv

    @Option(help: ArgumentHelp("The file to write.", valueName: "file"))
    var out: String

    func validate() throws {
        guard (1...100_000_000).contains(count) else { throw ValidationError("--count must be from 1 to 100000000, got \(count).") }
    }

    func run() throws {
        let format = InterchangeFormat.fromExtension(out) ?? .geojsonseq
        guard FileManager.default.createFile(atPath: out, contents: nil), let file = FileHandle(forWritingAtPath: out) else {
            throw CleanError("cannot create \(out)")
        }
        defer { try? file.close() }
        var writer = ReportWriter(format: format)
        var progress = ProgressBar("generate", total: count)
        writer.begin()
        for report in ReportGenerator(count: count, seed: seed, distribution: distribution, reference: try ReferenceData.bundled()) {
            writer.write(report)
            if writer.pendingByteCount >= 1 << 20 {
                try file.write(contentsOf: writer.takeOutput())
                progress.update(writer.count, reports: writer.count)
            }
        }
        writer.end()
        try file.write(contentsOf: writer.takeOutput())
        progress.finish()
        Console.error("wrote \(Format.count(count)) \(distribution.rawValue) reports to \(out) (\(format.rawValue))")
    }
}

extension Distribution: ExpressibleByArgument {}

/// An error printed as its message alone.
struct CleanError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
