import FuzzSupport
import ReportModel

/// Each line is one number as a reporter typed it; all the lines together are one report's
/// list. A normalized number (the digits of the international number), both as it is
/// written out (``Phone/written(_:)``: exports, answers) and with its `+`, must normalize
/// to itself: that is how it is shown, searched, re-entered and imported again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let lines = text(data, size).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    for line in lines {
        if let phone = try? Phone.normalize(line) {
            precondition((try? Phone.normalize("+" + phone)) == phone, "\(line.debugDescription) gives \(phone), which is not stable")
            precondition((try? Phone.normalize(Phone.written(phone))) == phone, "\(line.debugDescription) gives \(phone), written \(Phone.written(phone))")
        }
        _ = Phone.searchDigits(line)
    }
    _ = try? Phone.normalizeList(lines)
    return 0
}

runFuzzer()
