import Foundation
import Geometry

extension QuadTree {
    /// The `limit` matching slots nearest to (`x`, `y`) within `radius` fixed-point units,
    /// nearest first (ties by id).
    ///
    /// Branch and bound: a subtree is entered only if its cell comes within the radius and
    /// within the distance of the `limit`-th slot found so far, and if any of its reports
    /// match (the per-status aggregates say so without looking): a dense spot of closed
    /// reports costs nothing when only open ones are asked for. Children are entered
    /// nearest cell first, so the bound tightens early.
    func nearest(x: UInt32, y: UInt32, radius: Double, filter: ClusterFilter, limit: Int) -> [Slot] {
        withReader { reader in
            var found: [(distance: Double, slot: Slot)] = []
            var bound = radius * radius
            func distance2(_ sx: UInt32, _ sy: UInt32) -> Double {
                let dx = Double(sx) - Double(x), dy = Double(sy) - Double(y)
                return dx * dx + dy * dy
            }
            /// The squared distance from the point to a cell of level `depth`.
            func cellDistance2(_ cx: UInt64, _ cy: UInt64, _ depth: Int) -> Double {
                let shift = UInt64(32 - depth)
                let x0 = Double(cx << shift), x1 = Double(((cx + 1) << shift) - 1)
                let y0 = Double(cy << shift), y1 = Double(((cy + 1) << shift) - 1)
                let dx = max(0, x0 - Double(x), Double(x) - x1), dy = max(0, y0 - Double(y), Double(y) - y1)
                return dx * dx + dy * dy
            }
            func consider(_ slot: Slot) {
                guard filter.matches(status: slot.status, createdAt: slot.createdAt) else { return }
                let d = distance2(slot.x, slot.y)
                guard d <= bound else { return }
                let at = found.firstIndex { ($0.distance, $0.slot.id) > (d, slot.id) } ?? found.count
                found.insert((d, slot), at: at)
                if found.count > limit { found.removeLast() }
                if found.count == limit { bound = min(bound, found[limit - 1].distance) }
            }
            func visit(_ ref: Ref, depth: Int, cx: UInt64, cy: UInt64) {
                if ref < 0 {
                    reader.withLeaf(Int(~ref)) { list in for i in list { consider(reader.slots[Int(i)]) } }
                    return
                }
                var tally = Tally()
                reader.summarize(ref, filter: filter, cellKey: nil, depth: depth, into: &tally)
                guard tally.aggregate.count > 0 else { return }
                let node = Int(ref)
                var next: [(distance: Double, ref: Ref, cx: UInt64, cy: UInt64)] = []
                for q in 0..<4 {
                    let child = reader.children[node * 4 + q]
                    if child == QuadTree.none { continue }
                    let x = cx << 1 | UInt64(q & 1), y = cy << 1 | UInt64(q >> 1)
                    let d = cellDistance2(x, y, depth + 1)
                    if d <= bound { next.append((d, child, x, y)) }
                }
                for child in next.sorted(by: { $0.distance < $1.distance }) where child.distance <= bound {
                    visit(child.ref, depth: depth + 1, cx: child.cx, cy: child.cy)
                }
            }
            visit(root, depth: 0, cx: 0, cy: 0)
            return found.map(\.slot)
        }
    }
}

extension ClusterIndex {
    /// The matching reports nearest to `c`, within `metres` (by their positions in the
    /// index, to about a centimetre), nearest first, at most `limit`.
    public func nearest(to c: Coordinate, within metres: Double, filter: ClusterFilter = .all, limit: Int) -> [ClusterMember] {
        guard limit > 0, let valid = try? c.validated() else { return [] }
        let p = FixedPoint(valid)
        // Metres to fixed-point units of normalized Mercator at this latitude (a local
        // scale; the callers' radii are metres to kilometres), with a margin for rounding.
        let cosLat = max(1e-9, cos(valid.latitude * .pi / 180))
        let units = metres / (2 * .pi * Coordinate.earthRadius * cosLat) * FixedPoint.scale * 1.01 + 2
        return lock.read {
            tree.nearest(x: p.x, y: p.y, radius: units, filter: filter, limit: limit).map { slot in
                ClusterMember(
                    id: Int64(slot.id), x: FixedPoint.position(slot.x), y: FixedPoint.position(slot.y), status: Int(slot.status),
                    createdAt: slot.createdAt)
            }
        }
    }
}
