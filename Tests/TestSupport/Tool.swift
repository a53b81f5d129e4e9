import Foundation

/// A program the tests run to its end (a GDAL tool, Python with a client library): what it
/// printed, what it complained of, and how it ended.
public struct ToolRun: Sendable {
    public var status: Int32
    public var output: Data
    public var errors: String

    public var text: String { String(decoding: output, as: UTF8.self) }

    /// Runs `executable` (a path, or a name looked up through `env`) with `arguments`,
    /// `input` on its standard input. The input is written whole before the output is read:
    /// for the small inputs tests give.
    public static func run(_ executable: String, _ arguments: [String], input: Data? = nil) throws -> ToolRun {
        let process = Process()
        if executable.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        if let input {
            stdin.fileHandleForWriting.write(input)
            try stdin.fileHandleForWriting.close()
        }
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return ToolRun(status: process.terminationStatus, output: output, errors: errors)
    }
}
