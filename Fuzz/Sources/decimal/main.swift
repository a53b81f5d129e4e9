import FuzzSupport
import Geometry

/// Every number a client sends (bbox edges, coordinates) goes through this parser, which
/// takes a text whole or not at all: what it accepts is finite and made only of the
/// characters of `[+-]digits[.digits][e[+-]digits]` (no `inf`, `nan`, hex or NUL).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = text(data, size)
    guard let value = DecimalNumber.parse(input) else { return 0 }
    precondition(value.isFinite && input.utf8.allSatisfy { Array("0123456789+-.eE".utf8).contains($0) }, "took \(input.debugDescription)")
    return 0
}

runFuzzer()
