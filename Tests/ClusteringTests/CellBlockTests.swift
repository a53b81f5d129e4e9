import Clustering
import Testing

@Suite struct CellBlockTests {
    @Test func cellCount() {
        #expect(CellBlock(zoom: 3, columns: [0...7], rows: 0...7).cellCount == 64)
        #expect(CellBlock(zoom: 14, columns: [100...119], rows: 7...18).cellCount == 240)
        // Across the antimeridian: two column ranges.
        #expect(CellBlock(zoom: 2, columns: [3...3, 0...1], rows: 1...2).cellCount == 6)
        #expect(CellBlock(zoom: 20, columns: [0...(1 << 20) - 1], rows: 0...(1 << 20) - 1).cellCount == 1 << 40)
    }
}
