import FuzzSupport
import Interchange

/// A `datetime` query parameter as the server gets it, then its milliseconds (what the
/// store compares) and its ends written back as RFC 3339, which must read again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let interval = try? DateTimeInterval(parsing: text(data, size)) else { return 0 }
    _ = interval.milliseconds
    for end in [interval.start, interval.end].compactMap(\.self) {
        precondition(RFC3339.date(from: RFC3339.string(from: end)) != nil, "\(end) does not read back")
    }
    return 0
}

runFuzzer()
