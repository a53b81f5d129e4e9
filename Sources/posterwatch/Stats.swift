import ArgumentParser
import Foundation
import Interchange
import ReportModel

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print report counts by status, district and object type.")

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let reports = try await store.reader()
        let stats = try await reports.statistics()
        let reference = reports.reference
        var lines = ["\(store.name): \(Format.count(stats.total)) reports"]
        if let extent = stats.extent { lines.append("extent: \(extent)") }
        if let created = stats.created {
            lines.append("created: \(RFC3339.string(from: created.lowerBound)) … \(RFC3339.string(from: created.upperBound))")
        }
        func section(_ title: String, _ counts: [StoreStatistics.Count], _ names: [String: String]) {
            lines.append("")
            lines.append(title)
            let width = counts.map(\.code.count).max() ?? 0
            for c in counts {
                let code = c.code.padding(toLength: width, withPad: " ", startingAt: 0)
                let count = Format.count(c.count)
                lines.append("  \(code)  \(String(repeating: " ", count: max(0, 9 - count.count)))\(count)  \(names[c.code] ?? "")")
            }
        }
        section("by status", stats.byStatus, Dictionary(uniqueKeysWithValues: reference.statuses.map { ($0.code, $0.nameEn) }))
        section("by district", stats.byDistrict, Dictionary(uniqueKeysWithValues: reference.districts.map { ($0.code, $0.nameEn) }))
        section("by object type", stats.byObjectType, Dictionary(uniqueKeysWithValues: reference.objectTypes.map { ($0.code, $0.nameEn) }))
        print(lines.joined(separator: "\n"))
    }
}
