import Dispatch
import ReportModel
import Synchronization

/// Batches of rows made into reports by two threads: a helper thread (started with the
/// second batch, so small answers stay on the caller's thread) and, once SQLite has
/// stepped through every row, the caller. Reports come out in the rows' order, moved
/// (not copied) from each batch's storage into the answer: a copy would retain and then
/// release every string of every report.
final class DecodingPipeline: Sendable {
    static let batchSize = 256

    /// A batch's reports in memory of their own, until they are moved into the answer.
    private struct Decoded: @unchecked Sendable {
        var reports: UnsafeMutableBufferPointer<Report>
    }

    private struct State {
        var waiting: [(index: Int, batch: ReportRow.RowBatch)] = []
        var decoded: [Int: Decoded] = [:]
        var submitted = 0
        var closed = false
        /// Whether the helper is decoding a batch it took.
        var helperBusy = false
    }

    private let state = Mutex(State())
    /// Signalled for each batch submitted, and once on closing.
    private let ready = DispatchSemaphore(value: 0)
    /// Signalled each time the helper finishes a batch.
    private let idle = DispatchSemaphore(value: 0)

    func submit(_ batch: ReportRow.RowBatch) {
        guard batch.count > 0 else { return }
        let index = state.withLock { state in
            state.waiting.append((state.submitted, batch))
            state.submitted += 1
            return state.submitted - 1
        }
        if index == 1 {
            // The caller never waits for this block to start (a busy pool may run it late,
            // or after the answer is made); it waits only for a batch the helper took.
            DispatchQueue.global().async { [self] in
                var decoder = ReportRow.Decoder()
                while true {
                    ready.wait()
                    let next = state.withLock { state -> (index: Int, batch: ReportRow.RowBatch)?? in
                        guard !state.waiting.isEmpty else { return state.closed ? .some(nil) : nil }
                        state.helperBusy = true
                        return state.waiting.removeFirst()
                    }
                    guard let taken = next else { continue }  // woken for a batch the caller took
                    guard let taken else { return }  // closed, nothing left
                    let reports = decode(taken.batch, &decoder)
                    state.withLock { state in
                        state.decoded[taken.index] = reports
                        state.helperBusy = false
                    }
                    idle.signal()
                }
            }
        }
        ready.signal()
    }

    /// Decodes what is left on this thread, waits for the helper, and returns every report.
    func finish() -> [Report] {
        state.withLock { $0.closed = true }
        ready.signal()
        var decoder = ReportRow.Decoder()
        while let taken = take() { store(taken.index, decode(taken.batch, &decoder)) }
        while state.withLock({ $0.helperBusy }) { idle.wait() }
        return state.withLock { state in
            let total = state.decoded.values.reduce(0) { $0 + $1.reports.count }
            return Array(unsafeUninitializedCapacity: total) { answer, count in
                count = 0
                for index in 0..<state.submitted {
                    guard let batch = state.decoded.removeValue(forKey: index)?.reports else { continue }
                    _ = answer[count..<(count + batch.count)].moveInitialize(fromContentsOf: batch)
                    count += batch.count
                    batch.deallocate()
                }
            }
        }
    }

    private func take() -> (index: Int, batch: ReportRow.RowBatch)? {
        state.withLock { $0.waiting.isEmpty ? nil : $0.waiting.removeFirst() }
    }

    private func store(_ index: Int, _ reports: Decoded) {
        state.withLock { $0.decoded[index] = reports }
    }

    private func decode(_ batch: ReportRow.RowBatch, _ decoder: inout ReportRow.Decoder) -> Decoded {
        let reports = UnsafeMutableBufferPointer<Report>.allocate(capacity: batch.count)
        for row in 0..<batch.count { (reports.baseAddress! + row).initialize(to: decoder.decode(batch, row: row)) }
        return Decoded(reports: reports)
    }
}
