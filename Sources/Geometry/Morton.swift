/// The Z-order (Morton) curve over the Web Mercator tile grid: the bits of a cell's x and
/// y interleaved, so that cells near each other on the map mostly get numbers near each
/// other, and every tile at any coarser zoom is one contiguous range of numbers.
///
/// ```swift
/// let code = Morton.code(x: 5, y: 3)          // 0b011011 = 27
/// Morton.cell(code) == (x: 5, y: 3)
/// ```
public enum Morton {
    /// Interleaves x (even bits) and y (odd bits), each of up to 32 bits.
    @inlinable
    public static func code(x: UInt32, y: UInt32) -> UInt64 {
        spread(x) | (spread(y) << 1)
    }

    /// The x and y whose code this is.
    @inlinable
    public static func cell(_ code: UInt64) -> (x: UInt32, y: UInt32) {
        (compact(code), compact(code >> 1))
    }

    /// The code of the Web Mercator cell at `zoom` (0...32) holding a position; latitudes
    /// beyond the Mercator square fall into its top or bottom row.
    @inlinable
    public static func code(of c: Coordinate, zoom: Int) -> UInt64 {
        let n = Double(UInt64(1) << zoom)
        let x = min(max(WebMercator.x(longitude: c.longitude) * n, 0), n - 1)
        let y = min(max(WebMercator.y(latitude: c.latitude) * n, 0), n - 1)
        return code(x: UInt32(x), y: UInt32(y))
    }

    @usableFromInline
    static func spread(_ v: UInt32) -> UInt64 {
        var x = UInt64(v)
        x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF
        x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF
        x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F
        x = (x | (x << 2)) & 0x3333_3333_3333_3333
        x = (x | (x << 1)) & 0x5555_5555_5555_5555
        return x
    }

    @usableFromInline
    static func compact(_ v: UInt64) -> UInt32 {
        var x = v & 0x5555_5555_5555_5555
        x = (x | (x >> 1)) & 0x3333_3333_3333_3333
        x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F
        x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF
        x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF
        x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF
        return UInt32(x)
    }
}
