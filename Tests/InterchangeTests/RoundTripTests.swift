import Foundation
import Geometry
import Interchange
import ReportModel
import Testing
import TestSupport

@Suite struct RoundTripTests {
    @Test(arguments: InterchangeFormat.allCases)
    func writtenReportsReadBackEqual(format: InterchangeFormat) throws {
        let reports = [tricky, plain] + sampleReports(500)
        let text = ReportWriter.encode(reports, format: format)
        let records = try readAll(text, format, batchSize: 64)
        #expect(records.count == reports.count)
        for (k, (record, report)) in zip(records, reports).enumerated() {
            switch format {
            case .geojson: #expect(record.location == .feature(k + 1))
            case .geojsonseq: #expect(record.location == .line(k + 1))
            case .csv: break  // quoted newlines move the lines on
            }
            expectSame(record.value, report)
        }
    }

    @Test(arguments: InterchangeFormat.allCases)
    func parallelDecodingGivesTheSameRecords(format: InterchangeFormat) throws {
        var text = ReportWriter.encode(sampleReports(3000), format: format)
        switch format {
        case .geojson: text = text.replacingOccurrences(of: "\"id\":2999,", with: "\"id\":-1,")
        case .geojsonseq: text += "{}\n"
        case .csv: text += "1,2,3\n"
        }
        let single = try readAll(text, format, batchSize: 2000, parallelism: 1)
        let parallel = try readAll(text, format, batchSize: 2000, parallelism: 4)
        #expect(single.count == (format == .geojson ? 3000 : 3001))
        #expect(single.filter { $0.error != nil }.count == 1)
        #expect(single == parallel)
    }

    @Test(arguments: InterchangeFormat.allCases)
    func batchesReportProgress(format: InterchangeFormat) throws {
        let bytes = Array(ReportWriter.encode(sampleReports(10), format: format).utf8)
        var reader = try ReportReader(data: bytes, format: format, batchSize: 3)
        #expect(reader.totalBytes == bytes.count)
        var sizes: [Int] = []
        var progress: [Int] = []
        while let batch = try reader.next() {
            sizes.append(batch.records.count)
            progress.append(batch.bytesRead)
        }
        #expect(sizes == [3, 3, 3, 1])
        #expect(progress == progress.sorted())
        #expect(progress.last == bytes.count)
        #expect(reader.bytesRead == bytes.count)
        #expect(try reader.next() == nil)
    }

    @Test("a file read in many batches, its pages given back as the reader passes them, still reads whole and names a late error's line")
    func pagesGivenBack() throws {
        let directory = try TemporaryDirectory()
        let reports = sampleReports(3_000)
        let url = directory.url.appendingPathComponent("reports.geojson")
        let text = ReportWriter.encode(reports, format: .geojson)
        // Cut inside the last feature: the error is found after every page before it was given back.
        try Data(text.utf8.prefix(text.utf8.count - 40)).write(to: url)
        #expect(text.utf8.count > 64 * 4096)
        var reader = try ReportReader(url: url, batchSize: 7)
        var read: [Int64] = []
        var failure: ValidationError?
        while true {
            do throws(ValidationError) {
                guard let batch = try reader.next() else { break }
                read += batch.records.compactMap { $0.value?.id }
            } catch {
                failure = error
            }
        }
        #expect(read == reports.dropLast().map(\.id))
        let lines = text.utf8.prefix(text.utf8.count - 40).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
        #expect(failure?.field == "file")
        #expect(failure?.message.hasSuffix("(line \(lines))") == true, "\(failure?.message ?? "no error")")
    }

    @Test func readsAFileFromDisk() throws {
        let directory = try TemporaryDirectory()
        let reports = sampleReports(50)
        for format in InterchangeFormat.allCases {
            let url = directory.url.appendingPathComponent("reports.\(format.fileExtension)")
            try Data(ReportWriter.encode(reports, format: format).utf8).write(to: url)
            var reader = try ReportReader(url: url)
            #expect(reader.format == format)
            var records: [DraftRecord] = []
            while let batch = try reader.next() { records += batch.records }
            #expect(records.count == 50)
            expectSame(records.last?.value, reports[49])
        }
        let empty = directory.url.appendingPathComponent("empty.geojsonl")
        try Data().write(to: empty)
        var reader = try ReportReader(url: empty)
        #expect(try reader.next() == nil)

        let missing = #expect(throws: ValidationError.self) { try ReportReader(url: directory.url.appendingPathComponent("nope.csv")) }
        #expect(missing?.field == "file")
        #expect(missing?.message.contains("nope.csv") == true)
        let folder = #expect(throws: ValidationError.self) { try ReportReader(url: directory.url) }
        #expect(folder?.field == "file")
    }
}

