import Clustering
import FuzzSupport

/// Every grid a server may be configured with (each cell size, the deepest zooms).
enum Grids {
    static let all = ClusterGrid.cellSizes.map { size in try! ClusterGrid(cellSize: size, maxZoom: 26 - (8 - size.trailingZeroBitCount)) }
}

/// A cluster id from a URL (`/v1/clusters/{id}`), then the cell it names in each grid:
/// a cell's id must be the id it was found by.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let id = try? ClusterID(parsing: text(data, size)[...]) else { return 0 }
    for grid in Grids.all {
        if let cell = try? grid.cell(of: id) { precondition(grid.id(of: cell) == id, "\(id) names \(cell), whose id differs") }
    }
    return 0
}

runFuzzer()
