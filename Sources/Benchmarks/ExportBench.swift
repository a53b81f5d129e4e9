import Foundation
import ReportService
import ReportStore
import Server

/// The export section of `make bench`: the whole data set through the real server
/// (`/v1/export`), fetched by curl, with this process's resident memory sampled meanwhile.
extension Bench {
    func measureExport(_ store: ReportStore, _ report: inout Report) async throws {
        let service = try ReportService(store: store)
        let port = 18_000 + Int.random(in: 0..<1_000)
        let app = makeApplication(service: service, configuration: ServerConfiguration(port: port, logLevel: .warning))
        let server = Task { try await app.runService() }
        defer { server.cancel() }
        for _ in 0..<100 where (try? curl("http://127.0.0.1:\(port)/health").status) != 0 {
            try await Task.sleep(for: .milliseconds(100))
        }
        report.section(
            "Export of all \(fmt(try store.count())) reports through `GET /v1/export` (curl to /dev/null)",
            header: ["request", "seconds", "reports/s", "MB sent", "resident memory before → peak (MB)"])
        for query in ["format=geojson", "format=csv", "format=geojsonseq&crs=EPSG:6384"] {
            let before = residentMB()
            let sampler = Task.detached {
                var peak = 0.0
                while !Task.isCancelled {
                    peak = max(peak, residentMB())
                    try? await Task.sleep(for: .milliseconds(20))
                }
                return peak
            }
            var result = (status: Int32(0), bytes: 0)
            let seconds = try time { result = try curl("http://127.0.0.1:\(port)/v1/export?\(query)") }
            sampler.cancel()
            let peak = max(await sampler.value, residentMB())
            precondition(result.status == 0, "curl failed on \(query)")
            let count = try store.count()
            report.row(["`\(query)`", f2(seconds), fmt(Int(Double(count) / seconds)), f1(Double(result.bytes) / 1e6), "\(f1(before)) → \(f1(peak))"])
        }
        report.note("Pages of 2,000 reports are read and written in turn, so the server's memory stays flat however large the export.")
    }
}

/// Fetches a URL with curl into /dev/null; curl's exit status and the bytes received.
func curl(_ url: String) throws -> (status: Int32, bytes: Int) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-o", "/dev/null", "-w", "%{size_download}", url]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, Int(text) ?? 0)
}

/// This process's resident memory (VmRSS) in MB.
func residentMB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kB = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kB / 1024
}
