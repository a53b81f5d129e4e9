import Foundation
import Generator
@testable import SQLiteStore
import Testing
import TestSupport

@Suite("A bulk load's sorted runs against a stable sort in memory")
struct SortedRunsTests {
    /// Adds `records` and reads them back merged.
    static func roundTrip<Key: Comparable & BitwiseCopyable & Sendable>(_ records: [(Key, [Int64])], budget: Int, in folder: TemporaryDirectory) throws -> [(Key, [UInt8])] {
        let runs = SortedRuns<Key>(budget: budget, scratch: folder.path("runs"))
        var payload = RecordBytes()
        for (key, values) in records {
            payload.reset()
            for value in values { payload.int(value) }
            try runs.append(key, payload)
        }
        #expect(runs.count == records.count)
        let merge = try runs.merged()
        var out: [(Key, [UInt8])] = []
        while let (key, bytes) = try merge.next() { out.append((key, Array(bytes))) }
        #expect(try merge.next() == nil)
        return out
    }

    /// Budgets below 128 KiB are raised to it (batches of 64 KiB: each run read back in one
    /// window); with 1 MiB, runs of 512 KiB are read through windows of at most 256 KiB,
    /// so records straddle them.
    @Test("every record once, in key order, equal keys as added: in memory, in many runs, runs larger than their windows, records larger than a batch", arguments: [
        (count: 0, budget: 1 << 17), (count: 300, budget: 1 << 20), (count: 6_000, budget: 1 << 17), (count: 20_000, budget: 1 << 17),
        (count: 20_000, budget: 1 << 20),
    ])
    func merged(count: Int, budget: Int) throws {
        let folder = try TemporaryDirectory()
        var rng = SplitMix64(state: UInt64(count))
        let records: [(Int64, [Int64])] = (0..<count).map { i in
            // Few distinct keys, so that ties are many; now and then a record of 104 KB,
            // larger than the smallest budget, and empty ones.
            let length = i % 997 == 5 ? 13_000 : Int.random(in: 0...40, using: &rng)
            return (Int64.random(in: -50...50, using: &rng), (0..<length).map { _ in Int64.random(in: .min ... .max, using: &rng) })
        }
        let out = try Self.roundTrip(records, budget: budget, in: folder)
        let expected = records.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element)
        // Compared whole, reported short: a failure would otherwise print megabytes.
        let keys = out.map(\.0) == expected.map(\.0)
        let payloads = out.map(\.1) == expected.map { $0.1.flatMap { value in withUnsafeBytes(of: value) { Array($0) } } }
        #expect(keys, "the keys are not those of a stable sort")
        #expect(payloads, "the payloads are not those of a stable sort")
        // The scratch file was unlinked as soon as it was made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    @Test("a scratch file that cannot be made is an error naming it, at the next spill after the first run")
    func noScratch() throws {
        let folder = try TemporaryDirectory()
        let runs = SortedRuns<Int64>(budget: 1 << 17, scratch: folder.path("missing/runs"))
        var payload = RecordBytes()
        for value in 0..<1_000 { payload.int(Int64(value)) }  // 8 KB a record: the ninth spills
        let error = #expect(throws: SortedRunsError.self) {
            for key in 0..<20 { try runs.append(Int64(key), payload) }
        }
        #expect(error?.description.hasPrefix("cannot make the scratch file \(folder.path("missing/runs")): No such file or directory") == true)
    }

    @Test("doubles as keys: the R*Tree's longitudes")
    func doubles() throws {
        let folder = try TemporaryDirectory()
        var rng = SplitMix64(state: 5)
        let records = (0..<10_000).map { i in (Double.random(in: -180...180, using: &rng), [Int64(i)]) }
        let out = try Self.roundTrip(records, budget: 1 << 17, in: folder)
        let expected = records.sorted { $0.0 < $1.0 }
        #expect(out.map(\.0) == expected.map(\.0))
        #expect(out.map(\.1) == expected.map { withUnsafeBytes(of: $0.1[0]) { Array($0) } })
    }

    @Test("a number's key orders rows as report_phone's text and id do")
    func phoneKeys() {
        var rng = SplitMix64(state: 9)
        let rows: [(phone: String, id: Int64)] = (0..<4_000).map { _ in
            let digits = Int.random(in: 1...15, using: &rng)
            let phone = String((0..<digits).map { _ in Character(String(Int.random(in: 0...9, using: &rng))) })
            return (Int.random(in: 0..<4, using: &rng) == 0 ? "380" : phone, Int64.random(in: 1...50, using: &rng))
        }
        let byKey = rows.sorted { PhoneRowKey($0.phone, id: $0.id) < PhoneRowKey($1.phone, id: $1.id) }
        let byText = rows.sorted { (Array($0.phone.utf8).lexicographicallyPrecedes($1.phone.utf8) || ($0.phone == $1.phone && $0.id < $1.id)) }
        #expect(byKey.map(\.phone) == byText.map(\.phone) && byKey.map(\.id) == byText.map(\.id))
    }

    @Test("a payload reads back as written: integers, doubles, texts, none, empty, joined")
    func payloads() {
        var record = RecordBytes()
        record.int(-7)
        record.double(30.5)
        record.text(nil)
        record.text("")
        record.text("вул. Хрещатик, 1")
        record.text(joining: ["380671234567", "380501112233"], separator: UInt8(ascii: ";"))
        record.text(joining: [], separator: UInt8(ascii: ";"))
        record.int(Int64.max)
        record.bytes.withUnsafeBytes { payload in
            var reader = RecordReader(payload)
            #expect(reader.int() == -7)
            #expect(reader.double() == 30.5)
            #expect(reader.text() == nil)
            #expect(reader.text().map { String(decoding: $0, as: UTF8.self) } == "")
            #expect(reader.text().map { String(decoding: $0, as: UTF8.self) } == "вул. Хрещатик, 1")
            #expect(reader.text().map { String(decoding: $0, as: UTF8.self) } == "380671234567;380501112233")
            #expect(reader.text().map { String(decoding: $0, as: UTF8.self) } == "")
            #expect(reader.int() == Int64.max)
        }
    }
}
