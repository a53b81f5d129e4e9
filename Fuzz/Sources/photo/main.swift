import FuzzSupport
import Photos

/// An uploaded photo as the server gets it: sniffed, size-checked, decoded (libjpeg-turbo
/// or libpng), turned upright by its EXIF, shrunk and encoded again. Bad bytes must be an
/// ImageRejected, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    _ = try? PhotoProcessor().process(Array(bytes(data, size)))
    return 0
}

runFuzzer()
