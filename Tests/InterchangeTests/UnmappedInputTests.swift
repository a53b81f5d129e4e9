import Geometry
@testable import Interchange
import Testing

@Suite("Inputs that cannot be mapped")
struct UnmappedInputTests {
    @Test("a device or pipe is read into memory up to a limit, and past it refused by rule, where it grew without bound")
    func bounded() throws {
        let refused = #expect(throws: ValidationError.self) { _ = try ByteSource(path: "/dev/zero", unmappedLimit: 4 << 20) }
        #expect(refused?.field == "file" && refused?.message.contains("4 MiB") == true, "\(String(describing: refused))")
        #expect(try ByteSource(path: "/dev/null", unmappedLimit: 4 << 20).count == 0)
    }
}
