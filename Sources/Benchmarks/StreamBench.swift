import Dispatch
import Foundation
import Glibc
import Offloading
import ReportModel
import ReportService
import SQLiteStore
import Synchronization

/// `GET /v1/changes/stream` under load: subscribers of the whole city on sockets of this
/// process, while filings are committed through the service at a steady rate; the time
/// from a filing's commit (and from its submission) to its event on a subscriber's
/// socket, and the memory each subscriber costs.
struct StreamBench {
    /// The goal's subscribers; other counts show how delivery scales.
    static let goalSubscribers = 1_000
    /// Subscribers whose events are timed (all are read): at most 100.
    static func timed(of subscribers: Int) -> Int { min(100, subscribers) }
    let rate = 1_000
    let seconds = 10

    /// When a filing was submitted, and when its 201 came back (its commit lies between).
    struct Filed {
        var submitted: UInt64
        var answered: UInt64
    }

    /// When each report was committed: stamped by an observer of the service's commits,
    /// which runs after each commit and before its writers are answered.
    final class Commits: Sendable {
        let stamps = Mutex<[Int64: UInt64]>([:])
    }

    /// One observer for every run on the service (``observe(_:)``); ids never repeat.
    let commits = Commits()

    /// Stamps the commits of `service` from now on; once per service, before the runs.
    func observe(_ service: ReportService) {
        let commits = self.commits
        service.onWrite { touched in
            let now = DispatchTime.now().uptimeNanoseconds
            commits.stamps.withLock { for entry in touched { $0[entry.id] = now } }
        }
    }

    /// What the filers and the reader share: when each filing was made and committed, and
    /// whether to go on reading.
    final class Shared: Sendable {
        let filed = Mutex<[Int64: Filed]>([:])
        let commits: Commits
        let reading = Atomic<Bool>(true)

        init(commits: Commits) {
            self.commits = commits
        }
    }

    struct Result {
        /// From a filing's submission to its event (its time to commit included).
        var latencies: Samples
        /// From a filing's commit to its event.
        var afterCommit: Samples
        /// From a filing's submission to its answer.
        var filingTimes: Samples
        var filings: Int
        var eventsRead: Int
        var bytesPerSubscriber: Double
    }

    /// Subscribes, files at ``rate`` for ``seconds`` through `service` (which ``observe(_:)``
    /// already watches) and times the events.
    func run(_ service: ReportService, filer: Caller, port: Int, subscribers: Int) async throws -> Result {
        let before = heapInUse()
        let sockets = try (0..<subscribers).map { _ in try Self.subscribe(port: port) }
        defer { for fd in sockets { close(fd) } }
        for fd in sockets { _ = Self.read(fd, until: ": live") }
        let perSubscriber = Double(heapInUse() - before) / Double(subscribers)

        let shared = Shared(commits: commits)
        let timed = Self.timed(of: subscribers)
        // The reader blocks in poll(2): on a thread of its own, not on one of the concurrency
        // pool's (as many as cores: one of two here), which the server's subscribers need.
        let reader = Task { try await Blocking.run { Self.readAll(sockets, timed: timed, shared) } }
        let drafts = Bench.drafts(rate * seconds, seed: 91, reference: service.reference)
        let started = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            let lanes = 16
            for lane in 0..<lanes {
                group.addTask {
                    for k in stride(from: lane, to: drafts.count, by: lanes) {
                        let due = started + UInt64(k) * 1_000_000_000 / UInt64(rate)
                        let now = DispatchTime.now().uptimeNanoseconds
                        if due > now { try await Task.sleep(for: .nanoseconds(Int(due - now))) }
                        let t0 = DispatchTime.now().uptimeNanoseconds
                        let id = try await service.file(drafts[k], by: filer).report.id
                        let t1 = DispatchTime.now().uptimeNanoseconds
                        shared.filed.withLock { $0[id] = Filed(submitted: t0, answered: t1) }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await Task.sleep(for: .seconds(1))  // the last events on their way
        shared.reading.store(false, ordering: .relaxed)
        let (latencies, events) = try await reader.value
        let filingTimes = shared.filed.withLock { $0.values.map { Double($0.answered - $0.submitted) / 1e6 } }
        return Result(
            latencies: Samples(milliseconds: latencies.map(\.fromSubmission)), afterCommit: Samples(milliseconds: latencies.map(\.fromCommit)),
            filingTimes: Samples(milliseconds: filingTimes), filings: drafts.count, eventsRead: events, bytesPerSubscriber: perSubscriber)
    }

    /// A socket subscribed to the whole stream from now.
    static func subscribe(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let request = Array("GET /v1/changes/stream HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    /// Reads (blocking) until `marker` has come.
    static func read(_ fd: Int32, until marker: String) -> Bool {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            received += buffer[..<n]
        }
        return true
    }

    /// An event's delay, in ms, from its filing's submission and from its filing's commit.
    typealias Delay = (fromSubmission: Double, fromCommit: Double)

    /// Drains every socket until told to stop; for the first `timed`, the delay of each
    /// event, found by the report id in the event's data. Its buffers are allocated once
    /// and read through pointers: it stands for clients on other machines, so it
    /// should take as little of this one's cores from the server as it can.
    static func readAll(_ sockets: [Int32], timed: Int, _ shared: Shared) -> ([Delay], Int) {
        let polls = UnsafeMutableBufferPointer<pollfd>.allocate(capacity: sockets.count)
        defer { polls.deallocate() }
        for (i, fd) in sockets.enumerated() { polls[i] = pollfd(fd: fd, events: Int16(POLLIN), revents: 0) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { buffer.deallocate() }
        var tails = [[UInt8]](repeating: [], count: timed)
        var pending: [(id: Int64, at: UInt64)] = []
        var latencies: [Delay] = []
        var events = 0
        while shared.reading.load(ordering: .relaxed) {
            guard poll(polls.baseAddress, nfds_t(polls.count), 100) > 0 else { continue }
            let now = DispatchTime.now().uptimeNanoseconds
            for i in 0..<polls.count where polls[i].revents & Int16(POLLIN) != 0 {
                let n = recv(polls[i].fd, buffer.baseAddress, buffer.count, 0)
                guard n > 0, i < timed else { continue }
                tails[i] += UnsafeRawBufferPointer(rebasing: buffer[..<n])
                events += Self.eventIDs(in: &tails[i]) { pending.append(($0, now)) }
            }
            if pending.count > 10_000 { settle(&pending, &latencies, shared) }
        }
        settle(&pending, &latencies, shared)
        return (latencies, events)
    }

    /// Calls `found` with the report id of each whole event's data in `text`, and leaves
    /// in it what follows the last one (the start of an event still coming); the count.
    static func eventIDs(in text: inout [UInt8], _ found: (Int64) -> Void) -> Int {
        let marker = Array(#"data: {"seq":"#.utf8), idKey = Array(#""id":"#.utf8)
        var start = 0, count = 0
        while let m = find(marker, in: text, from: start), let k = find(idKey, in: text, from: m + marker.count) {
            var j = k + idKey.count, id: Int64 = 0
            while j < text.count, text[j] >= 48, text[j] <= 57 { id = id * 10 + Int64(text[j] - 48); j += 1 }
            guard j < text.count else { break }
            found(id)
            count += 1
            start = j
        }
        text.removeFirst(min(start, text.count))
        if text.count > 4_096 { text.removeFirst(text.count - 4_096) }
        return count
    }

    private static func settle(_ pending: inout [(id: Int64, at: UInt64)], _ latencies: inout [Delay], _ shared: Shared) {
        func ms(_ from: UInt64, _ to: UInt64) -> Double { Double(to > from ? to - from : 0) / 1e6 }
        // Looked up under the lock, not copied out: a copy held here would make the next
        // commit's stamp copy the whole table, on the writer's thread.
        shared.filed.withLock { filed in
            shared.commits.stamps.withLock { committed in
                pending.removeAll { event in
                    // Answered after its event: settled later.
                    guard let times = filed[event.id], let commit = committed[event.id] else { return false }
                    latencies.append((ms(times.submitted, event.at), ms(commit, event.at)))
                    return true
                }
            }
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count >= needle.count, from <= haystack.count - needle.count else { return nil }
        var i = from
        while i <= haystack.count - needle.count {
            if haystack[i] == needle[0], haystack[i..<i + needle.count].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
