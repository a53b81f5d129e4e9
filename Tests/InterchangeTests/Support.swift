import Foundation
import Geometry
import Interchange
import ReportModel
import Testing

/// 2025-03-01T10:20:30Z
let march1 = Date(timeIntervalSince1970: 1_740_824_430)

/// A report that exercises escaping: quotes, a backslash, a tab, a newline, a control
/// character, a comma and Ukrainian text.
let tricky = Report(
    id: 42, coordinate: Coordinate(longitude: 30.5234, latitude: 50.4501), address: "вул. Хрещатик, 22", city: "Київ",
    district: "shevchenkivskyi", objectType: "lamp_post", balanceHolder: "kyivmisksvitlo", violator: "ТОВ \"Ромашка\"",
    phones: ["380671234567", "380501234567"], comment: "back\\slash\tTab\nnew line\u{1}", status: "new",
    createdAt: march1, updatedAt: march1.addingTimeInterval(86_400.123))

/// A plain report whose optional fields are absent.
let plain = Report(
    id: 7, coordinate: Coordinate(longitude: -0.5, latitude: 51), address: "1 Main St", city: "London",
    district: "podilskyi", objectType: "fence", balanceHolder: "kyivavtodor", violator: nil, phones: ["380441234567"],
    comment: nil, status: "in_progress", createdAt: march1, updatedAt: march1)

/// Reports with varied text, coordinates and times, deterministic.
func sampleReports(_ count: Int) -> [Report] {
    let words = ["вул. Січових Стрільців", "Kyiv \"Center\"", "a,b;c", "line\nbreak", "tab\there", "emoji 🇺🇦", "back\\slash", "ґанок Їжак"]
    var reports: [Report] = []
    for i in 0..<count {
        let lon = -180 + Double((i * 7919) % 360_000_000) / 1_000_000
        let lat = -90 + Double((i * 104_729) % 180_000_000) / 1_000_000
        let created = march1.addingTimeInterval(Double(i * 3607) + Double(i % 1000) / 1000)
        reports.append(Report(
            id: Int64(i + 1), coordinate: Coordinate(longitude: lon, latitude: lat), address: "\(words[i % words.count]) \(i)",
            city: i % 2 == 0 ? "Київ" : "Бровари", district: "district_\(i % 10)", objectType: "type_\(i % 5)",
            balanceHolder: "holder_\(i % 7)", violator: i % 3 == 0 ? nil : words[(i + 1) % words.count],
            phones: Array(["380671234567", "442079460958", "123456789"].prefix(1 + i % 3)),
            comment: i % 4 == 0 ? nil : words[(i + 2) % words.count] + "\r\n\u{7}end", status: ["new", "done"][i % 2],
            createdAt: created, updatedAt: created.addingTimeInterval(Double(i % 50) * 0.001 + 60)))
    }
    return reports
}

/// Every record of an input, reading all its batches.
func readAll(
    _ text: String, _ format: InterchangeFormat? = nil, batchSize: Int = 10_000, parallelism: Int? = nil
) throws -> [DraftRecord] {
    try readAll(bytes: Array(text.utf8), format, batchSize: batchSize, parallelism: parallelism)
}

func readAll(
    bytes: [UInt8], _ format: InterchangeFormat? = nil, batchSize: Int = 10_000, parallelism: Int? = nil
) throws -> [DraftRecord] {
    var reader = try ReportReader(data: bytes, format: format, batchSize: batchSize)
    if let parallelism { reader.parallelism = parallelism }
    var records: [DraftRecord] = []
    while let batch = try reader.next() { records += batch.records }
    return records
}

/// The file-level error an input throws, from the initializer or from a batch.
func fileError(_ text: String, _ format: InterchangeFormat? = nil) -> ValidationError? {
    do {
        _ = try readAll(text, format)
        return nil
    } catch let error as ValidationError {
        return error
    } catch {
        Issue.record("unexpected error type \(error)")
        return nil
    }
}

extension DraftRecord {
    var value: ReportDraft? { try? draft.get() }
    var error: ValidationError? {
        if case .failure(let error) = draft { return error }
        return nil
    }
}

/// Checks that a draft read back carries the report, coordinates to 1e-6°, times to 1 ms.
func expectSame(_ draft: ReportDraft?, _ report: Report, sourceLocation: SourceLocation = #_sourceLocation) {
    guard let draft else {
        Issue.record("no draft for report \(report.id)", sourceLocation: sourceLocation)
        return
    }
    #expect(draft.id == report.id, sourceLocation: sourceLocation)
    #expect(abs(draft.coordinate.longitude - report.coordinate.longitude) <= 0.5e-6, sourceLocation: sourceLocation)
    #expect(abs(draft.coordinate.latitude - report.coordinate.latitude) <= 0.5e-6, sourceLocation: sourceLocation)
    #expect(draft.address == report.address, sourceLocation: sourceLocation)
    #expect(draft.city == report.city, sourceLocation: sourceLocation)
    #expect(draft.district == report.district, sourceLocation: sourceLocation)
    #expect(draft.objectType == report.objectType, sourceLocation: sourceLocation)
    #expect(draft.balanceHolder == report.balanceHolder, sourceLocation: sourceLocation)
    #expect(draft.violator == report.violator, sourceLocation: sourceLocation)
    // Read as written; the import's validation normalizes them back to what was stored.
    #expect(draft.phones.map { try? Phone.normalize($0) } == report.phones.map(Optional.some), sourceLocation: sourceLocation)
    #expect(draft.comment == report.comment, sourceLocation: sourceLocation)
    #expect(draft.status == report.status, sourceLocation: sourceLocation)
    #expect(abs((draft.createdAt?.timeIntervalSince1970 ?? .nan) - report.createdAt.timeIntervalSince1970) < 0.0005, sourceLocation: sourceLocation)
    #expect(abs((draft.updatedAt?.timeIntervalSince1970 ?? .nan) - report.updatedAt.timeIntervalSince1970) < 0.0005, sourceLocation: sourceLocation)
}

/// A minimal valid Feature line, with `properties` members replaced or added.
func featureLine(id: String = "1", geometry: String = #"{"type":"Point","coordinates":[30.5,50.4]}"#, properties: String? = nil, extra: String = "") -> String {
    let props = properties
        ?? #""address":"a","city":"c","district":"d","object_type":"o","balance_holder":"b","phones":["380671234567"]"#
    return #"{"type":"Feature","id":\#(id),"geometry":\#(geometry),"properties":{\#(props)}\#(extra)}"#
}

let requiredProperties = #""address":"a","city":"c","district":"d","object_type":"o","balance_holder":"b","phones":["380671234567"]"#

let requiredPairs: [(String, String)] = [
    ("address", #""a""#), ("city", #""c""#), ("district", #""d""#), ("object_type", #""o""#), ("balance_holder", #""b""#),
    ("phones", #"["380671234567"]"#),
]

/// The members of a valid `properties` object, with `name` set to the JSON `value`
/// (added if it is not a required one) or left out when `value` is nil.
func properties(setting name: String, to value: String?) -> String {
    var members = requiredPairs.filter { $0.0 != name }
    if let value { members.append((name, value)) }
    return members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",")
}
