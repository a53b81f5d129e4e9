import Clustering
import Foundation
import Geometry
import Interchange
import ReportModel
import Testing

/// Cluster Features byte for byte against a rendering built from the cluster's public
/// values with `String`.
@Suite struct ClusterGeoJSONTests {
    /// What ``ClusterGeoJSON/appendFeature(_:statusCodes:to:)`` writes for `c`.
    static func reference(_ c: Cluster, statusCodes: [String]) -> String {
        let box = c.bounds, position = c.coordinate
        let statuses = statusCodes.indices.filter { $0 < c.statusCounts.count && c.statusCounts[$0] > 0 }
            .map { GeoJSON.string(statusCodes[$0]) + ":\(c.statusCounts[$0])" }.joined(separator: ",")
        let degrees = [box.west, box.south, box.east, box.north, position.longitude, position.latitude].map { NumberWritingTests.reference($0, decimals: 6) }
        return #"{"type":"Feature","id":\#(c.id.rawValue),"bbox":[\#(degrees[0...3].joined(separator: ","))],"#
            + #""geometry":{"type":"Point","coordinates":[\#(degrees[4]),\#(degrees[5])]},"#
            + #""properties":{"cluster":true,"cluster_id":\#(c.id.rawValue),"count":\#(c.count),"count_abbrev":"\#(Cluster.abbreviated(c.count))","#
            + #""expansion_zoom":\#(c.expansionZoom),"statuses":{\#(statuses)}}}"#
    }

    /// Clusters of every size from 2 to 3,000 reports over four statuses, all over the world.
    static func clusters(statusCount: Int) throws -> [Cluster] {
        var entries: [ClusterEntry] = []
        var id: Int64 = 1
        for k in 0..<120 {
            let size = k < 100 ? k + 1 : 1_000 * (k - 99)
            let longitude = -179.5 + 359.0 * Double(k) / 119, latitude = -84.0 + 168.0 * Double((k * 37) % 120) / 119
            for j in 0..<size {
                let t = Double(j) / Double(size)
                entries.append(ClusterEntry(
                    id: id, coordinate: Coordinate(longitude: longitude + 0.3 * t, latitude: latitude + 0.2 * (1 - t) * t),
                    status: (j * 7 + k) % statusCount, createdAt: id))
                id += 1
            }
        }
        let index = try ClusterIndex(statusCount: statusCount, entries: entries)
        return try [2, 5, 9, 14].flatMap { zoom in
            try index.clusters(in: .world, zoom: zoom).compactMap { item -> Cluster? in
                if case .cluster(let c) = item { return c }
                return nil
            }
        }
    }

    @Test func clusterFeaturesMatchTheReference() throws {
        let codes = ["new", "verifying", "confirmed", "phone_blocked"]
        let clusters = try Self.clusters(statusCount: codes.count)
        #expect(clusters.count > 100)
        #expect(clusters.contains { $0.count >= 1_000 } && clusters.contains { $0.count < 10 })
        for c in clusters {
            var out: [UInt8] = []
            ClusterGeoJSON.appendFeature(c, statusCodes: codes, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == Self.reference(c, statusCodes: codes))
        }
    }

    @Test("status codes of any length and in need of escaping fit the room reserved for a Feature")
    func longStatusCodes() throws {
        let codes = (0..<16).map { s in String(repeating: "\u{1}\"ї\\", count: 40 * (s + 1)) + "\(s)" }
        for c in try Self.clusters(statusCount: 16).prefix(50) {
            var out: [UInt8] = []
            ClusterGeoJSON.appendFeature(c, statusCodes: codes, to: &out)
            let text = String(decoding: out, as: UTF8.self)
            #expect(text == Self.reference(c, statusCodes: codes))
            #expect(try JSONSerialization.jsonObject(with: Data(out)) is [String: Any])
        }
    }

    @Test func aCollectionHoldsItsFeaturesInOrder() throws {
        let codes = ["new", "verifying", "confirmed", "phone_blocked"]
        let clusters = Array(try Self.clusters(statusCount: codes.count).prefix(20))
        let text = String(decoding: ClusterGeoJSON.featureCollection(clusters.map { .cluster($0) }, reports: [:], statusCodes: codes, members: [("zoom", "5")]), as: UTF8.self)
        let features = clusters.map { "\n" + Self.reference($0, statusCodes: codes) }.joined(separator: ",")
        #expect(text == #"{"type":"FeatureCollection","zoom":5,"features":["# + features + "]}\n")
    }
}
