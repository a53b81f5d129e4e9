import CPNG
import CProj
import Testing

/// The module maps for the tiles (libpng) and reprojection (PROJ) issues link and answer.
@Suite("System libraries")
struct SystemLibraryTests {
    @Test("libpng 1.6 is linked")
    func png() {
        let version = png_access_version_number()
        #expect(version >= 10600 && version < 10700)
    }

    @Test("PROJ knows EPSG:3857")
    func proj() throws {
        let info = proj_info()
        #expect(info.major >= 6)
        let context = proj_context_create()
        defer { proj_context_destroy(context) }
        let crs = proj_create(context, "EPSG:3857")
        #expect(crs != nil)
        if let crs { proj_destroy(crs) }
    }
}
