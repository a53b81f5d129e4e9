import ArgumentParser
import Foundation

/// #33: how soon `posterwatch serve` answers after it is started, from the rows and from
/// the index it saved on its last stop: the real command, timed from its start to its
/// first `/v1/clusters` answer (polled every 20 ms), its resident memory then, and what
/// its stop's save took.
extension Bench {
    func measureStart(_ dbPath: String, _ report: inout Report) async throws {
        let saved = dbPath + ".index"
        try? FileManager.default.removeItem(atPath: saved)
        let fromRows = try await startServe(dbPath)
        let fromSaved = try await startServe(dbPath)
        let size = (try? FileManager.default.attributesOfItem(atPath: saved)[.size] as? Int) ?? 0
        report.section(
            "A server's start (#33): `posterwatch serve` on the \(fmt(count)) reports, from the command to its first `/v1/clusters` answer",
            header: ["start", "first answer (s)", "first 200 (s)", "resident then (MB)", "its stop's save (s)"])
        report.row(["no saved index: built from the rows in the background (503 meanwhile)", f2(fromRows.first), f2(fromRows.ready), fmt(Int(fromRows.residentMB)), fromRows.save ?? "–"])
        report.row(["from the index saved on the stop before", f2(fromSaved.first), f2(fromSaved.ready), fmt(Int(fromSaved.residentMB)), fromSaved.save ?? "–"])
        report.note("The saved index: \(fmt(size)) bytes (\(f2(Double(size) / Double(count))) a report), the page cache warm (read just before).")
        report.goal("serve's first answer (#33): ≤ 1 s at \(fmt(count))", "\(f2(fromSaved.ready)) s", fromSaved.ready <= 1)
    }

    /// Starts `serve` on `db`, waits for its first answer and its first 200, and stops it.
    private func startServe(_ db: String) async throws -> (first: Double, ready: Double, residentMB: Double, save: String?) {
        let tool = Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("posterwatch").path
        let port = 18_000 + Int.random(in: 0..<2_000)
        let log = "\(work)/serve-start.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["serve", "--db", db, "--port", String(port), "--log-format", "json"]
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        let started = DispatchTime.now().uptimeNanoseconds
        try process.run()
        var first: Double?
        let url = "http://127.0.0.1:\(port)/v1/clusters?bbox=30.2,50.2,30.9,50.7&zoom=10"
        while true {
            let status = try Self.status(of: url)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            if status != nil, first == nil { first = seconds }
            if status == 200 {
                let resident = residentMB(of: process.processIdentifier)
                process.terminate()
                process.waitUntilExit()
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                let save = text.split(separator: "\n").first { $0.hasPrefix("saved the index") }.flatMap { $0.split(separator: " ").dropLast().last }
                return (first ?? seconds, seconds, resident, save.map(String.init))
            }
            guard process.isRunning, seconds < 600 else {
                throw ValidationError("serve did not answer: \(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(500))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The HTTP status curl got, nil when nothing answered.
    private static func status(of url: String) throws -> Int? {
        let code = Int(try curl(url, writeOut: "%{http_code}").text) ?? 0
        return code == 0 ? nil : code
    }
}
