import Clustering
import FuzzSupport
import Geometry

/// A `bbox` query parameter as the server gets it, then what the cluster and tile queries
/// do with it: its cells at every zoom. A box must read back from its own text.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let box = try? BoundingBox(parsing: text(data, size)) else { return 0 }
    precondition((try? BoundingBox(parsing: box.description)) == box, "\(box) does not read back")
    for zoom in 0...ClusterGrid.standard.maxZoom { _ = ClusterGrid.standard.cells(in: box, zoom: zoom) }
    _ = box.parts
    return 0
}

runFuzzer()
