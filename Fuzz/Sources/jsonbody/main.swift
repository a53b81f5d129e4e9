import FuzzSupport
import Interchange

/// A request body as the server reads it (`JSONValue.members(parsing:)`); an object read
/// is written back as compact JSON, which must read again as the same members.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let members = try? JSONValue.members(parsing: UnsafeRawBufferPointer(bytes(data, size))) else { return 0 }
    let text = JSONValue.object(members.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }).text
    let again = try? Array(text.utf8).withUnsafeBytes { bytes throws(JSONSyntaxError) in try JSONValue.members(parsing: bytes) }
    precondition(again == members, "\(text) does not read back as what it was written from")
    return 0
}

runFuzzer()
