import FuzzSupport
import Interchange
import ReportModel

enum Reference { static let data = try! ReferenceData.bundled() }

/// An import file in memory, read to its end as the importer reads it (small batches, so
/// that reading resumes across batch boundaries often), each draft checked against the
/// reference data as the importer checks it. File-level problems throw ValidationError.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard var reader = try? ReportReader(data: bytes(data, size), format: .geojsonseq, batchSize: 3) else { return 0 }
    while let batch = try? reader.next() {
        for case .success(let draft) in batch.records.map(\.draft) { _ = Reference.data.check(draft) }
        precondition(batch.bytesRead <= reader.totalBytes)
    }
    return 0
}

runFuzzer()
