import ArgumentParser
import Foundation
import Server

struct BlocklistCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocklist", abstract: "Print every blocked number, as GET /v1/blocklist answers it (JSON, or CSV).")

    @OptionGroup var store: ExistingStoreOptions

    @Option(help: ArgumentHelp("json or csv.", valueName: "format"))
    var format = "json"

    func validate() throws {
        guard ["json", "csv"].contains(format) else { throw ValidationError("--format must be json or csv, got \(format)") }
    }

    func run() async throws {
        let blocked = try await store.reader().blocklist()
        FileHandle.standardOutput.write(Data(try Blocklist.render(blocked, csv: format == "csv")))
    }
}
