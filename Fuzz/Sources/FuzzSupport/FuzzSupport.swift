import CLibFuzzer

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Hands the process to libFuzzer, which calls the target's `LLVMFuzzerTestOneInput` with
/// each input, and exits with its status.
///
/// Why not libFuzzer's own `main`: SwiftPM compiles an executable's entry point as
/// `<module>_main` and links it with `--defsym main=<module>_main`, which takes the place of
/// the `main` that `-sanitize=fuzzer` brings. So each target's `main.swift` ends with this
/// call, and libFuzzer still reads its options (`-max_total_time=…`, corpus directories, a
/// crash file to replay) from the command line.
public func runFuzzer() -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput))
}

/// The fuzzer's bytes as a buffer (a null pointer, should libFuzzer pass one, as no bytes).
@inlinable
public func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: data, count: data == nil ? 0 : size)
}

/// The fuzzer's bytes as text, invalid UTF-8 repaired as a server's request decoding does.
@inlinable
public func text(_ data: UnsafePointer<UInt8>?, _ size: Int) -> String {
    String(decoding: bytes(data, size), as: UTF8.self)
}
