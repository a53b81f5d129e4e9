import FlatFiles
import Foundation
import TestSupport
import Testing

@Suite("Flat files: arrays saved byte for byte, and anything not written refused")
struct FlatFileTests {
    struct Pair: Equatable {
        var a: UInt32
        var b: Int64
    }

    /// Writes two sections of every kind of value and returns the file's path.
    static func write(in folder: TemporaryDirectory) throws -> String {
        let path = folder.url.appendingPathComponent("test.flat").path
        let file = try FlatFileWriter(path: path)
        try file.write(Int64(-7))
        try file.write([Pair(a: 1, b: -2), Pair(a: 3, b: 4)])
        try file.write(nested: [[UInt16(1), 2], [], [3]])
        try file.write(strings: ["0671234567", "", "кашта́н"])
        try file.endSection("first")
        // Larger than the writer's buffer: written straight from the array.
        try file.write((0..<600_000).map { UInt32($0) })
        try file.endSection("second")
        try file.finish(properties: ["change": "42"])
        return path
    }

    @Test func readsBackWhatWasWritten() throws {
        let folder = try TemporaryDirectory()
        let file = try FlatFileReader(path: try Self.write(in: folder))
        #expect(file.properties == ["change": "42"])
        var first = try file.section("first")
        #expect(try first.read() == -7)
        #expect(try first.read(limit: 2) == [Pair(a: 1, b: -2), Pair(a: 3, b: 4)])
        #expect(try first.read(nestedLimit: 3, elementLimit: 3) == [[UInt16(1), 2], [], [3]])
        #expect(try first.readStrings(limit: 3, byteLimit: 100) == ["0671234567", "", "кашта́н"])
        try first.finish()
        var second = try file.section("second")
        let big: [UInt32] = try second.read(limit: 600_000)
        #expect(big == (0..<600_000).map { UInt32($0) })
        try second.finish()
    }

    /// The checksums are the CRC-32 of gzip and zlib (ISA-L's), as Python's zlib computes
    /// it over each section's bytes.
    @Test func checksumsAreZlibsCRC32() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.write(in: folder)
        let script = """
            import json, sys, zlib
            data = open(sys.argv[1], "rb").read()
            length = int.from_bytes(data[-16:-8], "little")
            header = json.loads(data[-16 - length:-16])
            for name, s in sorted(header["sections"].items()):
                ok = zlib.crc32(data[s["offset"]:s["offset"] + s["length"]]) == s["crc"]
                print(name, s["length"], "ok" if ok else "differs")
            """
        let run = try ToolRun.run("python3", ["-c", script, path])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.text.split(separator: "\n").map { $0.split(separator: " ").last.map(String.init) ?? "" } == ["ok", "ok"], "\(run.text)")
        #expect(run.text.contains("second 2400016"), "the large section checked whole: \(run.text)")
    }

    @Test func refusesWhatWasNotWritten() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.write(in: folder)
        var first = try FlatFileReader(path: path).section("first")
        // Another element type, a limit below the count, a section read short.
        #expect(throws: FlatFileError.self) { let _: [Int32] = try first.read(limit: 1) }
        var again = try FlatFileReader(path: path).section("first")
        _ = try again.read()
        #expect(throws: FlatFileError.self) { let _: [Pair] = try again.read(limit: 1) }
        var short = try FlatFileReader(path: path).section("first")
        _ = try short.read()
        #expect(throws: FlatFileError.self) { try short.finish() }
        #expect(throws: FlatFileError.self) { _ = try FlatFileReader(path: path).section("third") }
    }

    @Test func refusesAFileCutShortOrDamaged() throws {
        let folder = try TemporaryDirectory()
        let path = try Self.write(in: folder)
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        // Cut anywhere: the trailer is gone, or what it points at is.
        for cut in [0, 7, 100, whole.count / 2, whole.count - 17, whole.count - 1] {
            try whole.prefix(cut).write(to: URL(fileURLWithPath: path))
            #expect(throws: FlatFileError.self) { _ = try FlatFileReader(path: path) }
        }
        // One byte flipped in the second section's values: its checksum does not match.
        var flipped = whole
        flipped[whole.count / 2] ^= 0x10
        try flipped.write(to: URL(fileURLWithPath: path))
        var second = try FlatFileReader(path: path).section("second")
        let _: [UInt32] = try second.read(limit: 600_000)
        #expect(throws: FlatFileError.self) { try second.finish() }
        // The top bit of the first array's element size flipped: an error as it is read.
        var sized = whole
        sized[8 + 7] ^= 0x80
        try sized.write(to: URL(fileURLWithPath: path))
        var first = try FlatFileReader(path: path).section("first")
        #expect(throws: FlatFileError.self) { _ = try first.read() }
        // A missing file.
        #expect(throws: FlatFileError.self) { _ = try FlatFileReader(path: folder.url.appendingPathComponent("none").path) }
    }
}
