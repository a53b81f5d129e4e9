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
        let stdin = Pipe.unshared(), stdout = Pipe.unshared(), stderr = Pipe.unshared()
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

    /// The same from async code, waited for on a thread of its own. Blocking one of the
    /// cooperative pool's threads (two on a 2-core machine) deadlocked `make test`: a tool
    /// waiting for a server of this process, which needed that pool to answer, while the
    /// other thread waited for another tool whose output pipe the first had inherited.
    public static func run(_ executable: String, _ arguments: [String], input: Data? = nil) async throws -> ToolRun {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try run(executable, arguments, input: input) as ToolRun }) }.start()
        }
    }
}

extension Pipe {
    /// A pipe whose ends are closed in every process started after it, but for the one it
    /// is handed to (`dup2` into its standard streams drops the flag). Foundation's
    /// `Process` leaves other descriptors open in a child: a tool's output pipe was once
    /// inherited by a server another test started that moment, and the tool's reader
    /// waited for that server to end.
    public static func unshared() -> Pipe {
        let pipe = Pipe()
        for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] { _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC) }
        return pipe
    }
}
