import Foundation
import Interchange
import ReportModel

/// Standard output and standard error, written in large chunks.
enum Console {
    static func write(_ bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes))
    }

    /// Writes a message and a line break to standard error. Control characters but line
    /// breaks and tabs are written as `\u{1B}`: a message may quote a value from an input
    /// file, whose escape sequences would otherwise drive the operator's terminal.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((printable(line) + "\n").utf8))
    }

    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar) { out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars) } else { out.append(scalar) }
        }
        return String(out)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control && scalar != "\n" && scalar != "\t"
    }

    /// Whether standard error is a terminal (progress bars are drawn only there).
    static var errorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Prints reports as a GeoJSON FeatureCollection with the given top-level members.
    static func printFeatureCollection(_ reports: [Report], members: [ReportWriter.Member]) {
        var writer = ReportWriter(format: .geojson)
        writer.begin(members: members)
        for report in reports {
            writer.write(report)
            if writer.pendingByteCount >= 1 << 16 { write(writer.takeOutput()) }
        }
        writer.end()
        write(writer.takeOutput())
    }
}

/// A one-line progress bar on standard error, redrawn at most ten times a second, and
/// silent when standard error is not a terminal.
struct ProgressBar {
    let label: String
    var total: Int
    private let enabled = Console.errorIsTerminal
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var lastReports = 0

    init(_ label: String, total: Int) {
        self.label = label
        self.total = total
    }

    /// Redraws with `done` of `total` (in any unit, e.g. bytes read) and `reports` done
    /// (their rate is shown when given).
    mutating func update(_ done: Int, reports: Int? = nil, force: Bool = false) {
        guard enabled else { return }
        let now = Date()
        guard force || now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        let fraction = total > 0 ? min(Double(done) / Double(total), 1) : 0
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        var line = String(format: "\r%@ %@ %3.0f%%", label, bar, fraction * 100)
        if let reports {
            lastReports = reports
            line += "  \(Format.count(Int(Double(reports) / max(now.timeIntervalSince(start), 1e-6)))) reports/s "
        }
        FileHandle.standardError.write(Data(line.utf8))
    }

    mutating func finish() {
        guard enabled else { return }
        update(total, reports: lastReports > 0 ? lastReports : nil, force: true)
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

enum Format {
    /// 1234567 → "1,234,567".
    static func count(_ n: Int) -> String { n.formatted() }

    static func seconds(_ s: Double) -> String { String(format: "%.2f s", s) }
}
