import Clustering
import Foundation
import Generator
import Geometry
import Testing
import TestSupport

@Suite("ClusterGrid")
struct GridTests {
    /// The deepest grid each cell size allows (ids must stay below 2^53).
    static let deepest: [(cellSize: Int, maxZoom: Int)] = [(32, 23), (64, 24), (128, 25), (256, 26)]

    @Test("cell(of:zoom:) is floor(x · 2^z · 256 / C) at every zoom and cell size", arguments: deepest)
    func cellFormula(cellSize: Int, maxZoom: Int) throws {
        let grid = try ClusterGrid(cellSize: cellSize, maxZoom: maxZoom)
        let ref = RefGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: 2)
        var rng = SplitMix64(state: 0xC311 &+ UInt64(cellSize))
        var coords: [Coordinate] = (0..<300).map { _ in
            rng.chance(0.7)
                ? Coordinate(longitude: rng.uniform(-180, 180), latitude: rng.uniform(-90, 90))
                : boundaryCoordinate(&rng, maxLevel: maxZoom + ref.shift)
        }
        for lon in specialLongitudes { for lat in specialLatitudes { coords.append(Coordinate(longitude: lon, latitude: lat)) } }
        var problems: [String] = []
        for c in coords {
            let x = mercX(c.longitude), y = mercY(c.latitude)
            for z in 0...maxZoom {
                let got = grid.cell(of: c, zoom: z)
                let want = Cell(zoom: z, x: ref.cellIndex(x, zoom: z), y: ref.cellIndex(y, zoom: z))
                if got != want { problems.append("\(c) z\(z): \(got), expected \(want)") }
            }
        }
        expectNoProblems(problems, "cells")
    }

    @Test("edges of the world: lon ±180, lat ±90 and ±85.05112878")
    func worldEdges() throws {
        let grid = try ClusterGrid(cellSize: 64, maxZoom: 20)
        for z in [0, 1, 7, 20] {
            let last = (1 << (z + 2)) - 1
            #expect(grid.cellsPerSide(zoom: z) == last + 1)
            #expect(grid.cell(of: Coordinate(longitude: 180, latitude: 0), zoom: z).x == last)
            #expect(grid.cell(of: Coordinate(longitude: -180, latitude: 0), zoom: z).x == 0)
            #expect(grid.cell(of: Coordinate(longitude: 0, latitude: 90), zoom: z).y == 0)
            #expect(grid.cell(of: Coordinate(longitude: 0, latitude: 85.05112878), zoom: z).y == 0)
            #expect(grid.cell(of: Coordinate(longitude: 0, latitude: -90), zoom: z).y == last)
            #expect(grid.cell(of: Coordinate(longitude: 0, latitude: -85.05112878), zoom: z).y == last)
            #expect(grid.cell(of: Coordinate(longitude: 180, latitude: -90), zoom: z) == Cell(zoom: z, x: last, y: last))
            // The equator and Greenwich are the boundary between the middle cells.
            #expect(grid.cell(of: Coordinate(longitude: 0, latitude: 0), zoom: z) == Cell(zoom: z, x: (last + 1) / 2, y: (last + 1) / 2))
        }
        // The doc comment's example, worked by hand: x = 210.52/360 · 4096 = 2395.2,
        // y = (1 - asinh(tan 50.45°)/π)/2 · 4096 = 1381.8.
        #expect(ClusterGrid.standard.cell(of: Coordinate(longitude: 30.52, latitude: 50.45), zoom: 10) == Cell(zoom: 10, x: 2395, y: 1381))
    }

    @Test("ids are 4^level + Morton(x, y), round-trip, and stay below 2^53", arguments: deepest)
    func ids(cellSize: Int, maxZoom: Int) throws {
        let grid = try ClusterGrid(cellSize: cellSize, maxZoom: maxZoom)
        let ref = RefGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: 2)
        var rng = SplitMix64(state: 77 &+ UInt64(cellSize))
        var problems: [String] = []
        for z in 0...maxZoom {
            let n = grid.cellsPerSide(zoom: z)
            var cells = [Cell(zoom: z, x: 0, y: 0), Cell(zoom: z, x: n - 1, y: n - 1), Cell(zoom: z, x: n - 1, y: 0), Cell(zoom: z, x: 0, y: n - 1)]
            for _ in 0..<20 { cells.append(Cell(zoom: z, x: rng.int(0..<n), y: rng.int(0..<n))) }
            for cell in cells {
                let id = grid.id(of: cell)
                if id.rawValue != ref.id(x: cell.x, y: cell.y, zoom: z) { problems.append("\(cell): id \(id)") }
                if id.rawValue >= 1 << 53 { problems.append("\(cell): id \(id) not below 2^53") }
                if (try? grid.cell(of: id)) != cell { problems.append("\(cell): round trip \(String(describing: try? grid.cell(of: id)))") }
                if (try? ClusterID(parsing: id.description[...])) != id { problems.append("\(cell): parse") }
            }
        }
        expectNoProblems(problems, "ids")
        // Ids of different cells and zooms never collide.
        var seen = Set<UInt64>()
        for z in 0...min(maxZoom, 3) {
            for x in 0..<grid.cellsPerSide(zoom: z) { for y in 0..<grid.cellsPerSide(zoom: z) { seen.insert(grid.id(of: Cell(zoom: z, x: x, y: y)).rawValue) } }
        }
        let expectedCount = (0...min(maxZoom, 3)).reduce(0) { $0 + grid.cellsPerSide(zoom: $1) * grid.cellsPerSide(zoom: $1) }
        #expect(seen.count == expectedCount)
    }

    @Test("malformed ids are ValidationErrors on the id field")
    func malformedIDs() throws {
        let grid = try ClusterGrid(cellSize: 64, maxZoom: 20)
        let tooDeep = UInt64(1) << 46  // level 23 = zoom 21
        let belowZoom0 = UInt64(4)  // level 1 < log2(256/64)
        // An odd top bit is no level, even where the bit lies within the grid's levels.
        let oddTop: [UInt64] = [32, 32 + 7, UInt64(1) << 41, (UInt64(1) << 43) + 12345]
        for raw in [0, 1, 2, 3, belowZoom0, 8, tooDeep, tooDeep + 5, UInt64(1) << 63, .max] + oddTop {
            let error = #expect(throws: NoSuchCluster.self, "id \(raw)") { try grid.cell(of: ClusterID(rawValue: raw)) }
            #expect(error?.description.contains("\(raw) is not a cluster id") == true)
        }
        #expect((try? grid.cell(of: ClusterID(rawValue: 16))) == Cell(zoom: 0, x: 0, y: 0))
        // 256-px cells: id 1 is the world at zoom 0; 2 and 3 are nothing.
        let big = try ClusterGrid(cellSize: 256, maxZoom: 3)
        #expect((try? big.cell(of: ClusterID(rawValue: 1))) == Cell(zoom: 0, x: 0, y: 0))
        for raw: UInt64 in [2, 3, 8, 9, 15, 32, 128, 256] {
            #expect(throws: NoSuchCluster.self, "id \(raw)") { try big.cell(of: ClusterID(rawValue: raw)) }
        }
        for text in ["", "-1", "1.5", "abc", "18446744073709551616", " 5"] {
            #expect(throws: ValidationError.self, "\(text)") { try ClusterID(parsing: text[...]) }
        }
    }

    @Test("init rejects bad cell sizes, zooms and minimum sizes")
    func initErrors() throws {
        for (cellSize, maxZoom, minPoints, field) in [
            (48, 20, 2, "cell_size"), (0, 20, 2, "cell_size"), (512, 10, 2, "cell_size"),
            (64, 30, 2, "max_zoom"), (64, 25, 2, "max_zoom"), (32, 24, 2, "max_zoom"), (64, -1, 2, "max_zoom"),
            (64, 20, 0, "min_points"), (64, 20, -3, "min_points"),
        ] {
            let error = #expect(throws: ValidationError.self, "\(cellSize) \(maxZoom) \(minPoints)") {
                try ClusterGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: minPoints)
            }
            #expect(error?.field == field)
        }
        for (cellSize, maxZoom) in Self.deepest { _ = try ClusterGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: 1) }
        let standard = ClusterGrid.standard
        #expect(standard.cellSize == 64 && standard.maxZoom == 20 && standard.minPoints == 2)
    }

    @Test("cells(in:zoom:) for fixed antimeridian, tile-aligned and degenerate boxes")
    func cellsFixed() throws {
        let grid = try ClusterGrid(cellSize: 64, maxZoom: 20)
        // Zoom 0 has 4 × 4 cells.
        let pacific = grid.cells(in: try BoundingBox(west: 170, south: -10, east: -170, north: 10), zoom: 0)
        #expect(normalize(pacific.columns) == [0...0, 3...3])
        #expect(pacific.rows == 1...2)
        let world = grid.cells(in: .world, zoom: 5)
        #expect(normalize(world.columns) == [0...127] && world.rows == 0...127)
        // Nearly the whole world, written across the antimeridian.
        let almost = grid.cells(in: try BoundingBox(west: 10, south: -1, east: 9.999999, north: 1), zoom: 3)
        #expect(normalize(almost.columns) == [0...31])
        // The antimeridian itself from both sides.
        let line = grid.cells(in: try BoundingBox(west: 180, south: -1, east: -180, north: 1), zoom: 2)
        #expect(normalize(line.columns) == [0...0, 15...15])
        // A tile's box selects exactly the tile's cells, at its zoom and deeper.
        let tile = try TileID(z: 5, x: 3, y: 7)
        for (z, factor) in [(5, 4), (6, 8), (8, 32)] {
            let block = grid.cells(in: tile.bounds, zoom: z)
            #expect(normalize(block.columns) == [(3 * factor)...(4 * factor - 1)], "z\(z)")
            #expect(block.rows == (7 * factor)...(8 * factor - 1), "z\(z)")
        }
        // Shallower: the cell holding the tile.
        let shallow = grid.cells(in: tile.bounds, zoom: 4)
        #expect(normalize(shallow.columns) == [6...7] && shallow.rows == 14...15)
        // Edge tiles.
        let corner = try TileID(z: 3, x: 7, y: 7)
        let cornerBlock = grid.cells(in: corner.bounds, zoom: 3)
        #expect(normalize(cornerBlock.columns) == [28...31] && cornerBlock.rows == 28...31)
        // A point: the cell that holds it.
        let p = Coordinate(longitude: 30.52, latitude: 50.45)
        for z in [0, 9, 20] {
            let block = grid.cells(in: try BoundingBox(west: p.longitude, south: p.latitude, east: p.longitude, north: p.latitude), zoom: z)
            let cell = grid.cell(of: p, zoom: z)
            #expect(block.columns == [cell.x...cell.x] && block.rows == cell.y...cell.y)
        }
        // A line on a cell boundary takes the cell east (south) of it, not both.
        let meridian = grid.cells(in: try BoundingBox(west: 0, south: -1, east: 0, north: 1), zoom: 1)
        #expect(meridian.columns == [4...4])
        // Beyond the Mercator square: the top row.
        let arctic = grid.cells(in: try BoundingBox(west: -10, south: 86, east: 10, north: 90), zoom: 2)
        #expect(arctic.rows == 0...0)
    }

    @Test("cells(in:zoom:) equals the area rule for random boxes at every zoom", arguments: [32, 64, 128, 256])
    func cellsRandom(cellSize: Int) throws {
        let maxZoom = 20
        let grid = try ClusterGrid(cellSize: cellSize, maxZoom: maxZoom)
        let ref = RefGrid(cellSize: cellSize, maxZoom: maxZoom, minPoints: 2)
        var rng = SplitMix64(state: 99 &+ UInt64(cellSize))
        var model = Model(grid: ref, statusCount: 1)
        for e in clusteredEntries(40, &rng, statusCount: 1, maxLevel: 20) { model.upsert(e) }
        var problems: [String] = []
        for z in 0...maxZoom {
            for box in boxes(&rng, zoom: z, model: model, random: 25) {
                let block = grid.cells(in: box, zoom: z)
                let sel = RefSelection(box: box, zoom: z, grid: ref)
                if normalize(block.columns) != sel.columnRanges || block.rows != sel.rowRange {
                    problems.append("\(box) z\(z): \(block.columns) × \(block.rows), expected \(sel.columnRanges) × \(sel.rowRange)")
                }
                if block.zoom != z { problems.append("zoom \(block.zoom)") }
                // The returned column ranges must be disjoint.
                let cols = block.columns.sorted { $0.lowerBound < $1.lowerBound }
                for (a, b) in zip(cols, cols.dropFirst()) where a.upperBound >= b.lowerBound { problems.append("\(box) z\(z): overlapping \(block.columns)") }
                // For small grids, the closed form of the reference equals the cell-by-cell rule.
                if sel.n <= 64 {
                    let byRule = (0..<sel.n).filter { c in sel.columnParts.contains { RefSelection.selects(c, $0, n: sel.n) } }
                    let byRange = sel.columnRanges.flatMap { Array($0) }
                    if byRule != byRange { problems.append("reference disagrees with itself for \(box) z\(z)") }
                }
            }
        }
        expectNoProblems(problems, "cells(in:)")
    }
}
