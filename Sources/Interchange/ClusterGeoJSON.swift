import Clustering
import Geometry
import ReportModel

/// Clusters as RFC 7946 GeoJSON: the answer to "what is in this area at this zoom".
///
/// A cluster is a Feature whose `id` is the cluster id, with a `bbox` member (its
/// members' box), a Point at its members' mean position, and the properties
/// `cluster: true`, `cluster_id`, `count`, `count_abbrev` (`"1.2k"`), `expansion_zoom`
/// and `statuses` (the counts of the statuses present, by code). A lone report is the
/// report's own Feature (``GeoJSON/feature(_:)``).
///
/// ```swift
/// ClusterGeoJSON.featureCollection(items, reports: byID, statusCodes: codes)
/// // {"type":"FeatureCollection","features":[
/// // {"type":"Feature","id":23279946,"bbox":[…],"geometry":{…},"properties":{"cluster":true,…}},
/// // {"type":"Feature","id":17,"geometry":{…},"properties":{"address":…}}]}
/// ```
public enum ClusterGeoJSON {
    /// A FeatureCollection of `items` in order, `members` before `features`. Lone reports
    /// are written from `reports` (by id); one missing there (deleted meanwhile) is left out.
    public static func featureCollection(
        _ items: [ClusterItem], reports: [Int64: Report], statusCodes: [String], members: [ReportWriter.Member] = []
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 * items.count + 64)
        ByteOutput.append(#"{"type":"FeatureCollection""#, to: &out)
        for member in members {
            out.append(UInt8(ascii: ","))
            ByteOutput.appendJSONString(member.name, to: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: member.json.utf8)
        }
        ByteOutput.append(#","features":["#, to: &out)
        let keys = statusKeys(statusCodes)  // once, not once per cluster
        var first = true
        for item in items {
            let start = out.count
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(0x0A)
            switch item {
            case .cluster(let cluster):
                appendFeature(cluster, statusKeys: keys, to: &out)
            case .report(let member):
                guard let report = reports[member.id] else {
                    out.removeSubrange(start...)
                    continue
                }
                GeoJSON.appendFeature(report, to: &out)
            }
            first = false
        }
        ByteOutput.append("]}\n", to: &out)
        return out
    }

    /// Appends one cluster Feature.
    public static func appendFeature(_ cluster: Cluster, statusCodes: [String], to out: inout [UInt8]) {
        appendFeature(cluster, statusKeys: statusKeys(statusCodes), to: &out)
    }

    /// Each status's `"code":` as JSON.
    static func statusKeys(_ codes: [String]) -> [[UInt8]] {
        codes.map { code in
            var key: [UInt8] = []
            ByteOutput.appendJSONString(code, to: &key)
            return key + [UInt8(ascii: ":")]
        }
    }

    /// Appends one cluster Feature; `statusKeys[s]` is status `s`'s `"code":` as JSON.
    static func appendFeature(_ cluster: Cluster, statusKeys: [[UInt8]], to out: inout [UInt8]) {
        let position = cluster.coordinate, box = cluster.bounds
        ByteOutput.append(#"{"type":"Feature","id":"#, to: &out)
        ByteOutput.appendInteger(Int64(cluster.id.rawValue), to: &out)
        ByteOutput.append(#","bbox":["#, to: &out)
        ByteOutput.appendDegrees(box.west, to: &out)
        out.append(UInt8(ascii: ","))
        ByteOutput.appendDegrees(box.south, to: &out)
        out.append(UInt8(ascii: ","))
        ByteOutput.appendDegrees(box.east, to: &out)
        out.append(UInt8(ascii: ","))
        ByteOutput.appendDegrees(box.north, to: &out)
        ByteOutput.append(#"],"geometry":{"type":"Point","coordinates":["#, to: &out)
        ByteOutput.appendDegrees(position.longitude, to: &out)
        out.append(UInt8(ascii: ","))
        ByteOutput.appendDegrees(position.latitude, to: &out)
        ByteOutput.append(#"]},"properties":{"cluster":true,"cluster_id":"#, to: &out)
        ByteOutput.appendInteger(Int64(cluster.id.rawValue), to: &out)
        ByteOutput.append(#","count":"#, to: &out)
        ByteOutput.appendInteger(Int64(cluster.count), to: &out)
        ByteOutput.append(#","count_abbrev":"#, to: &out)
        ByteOutput.appendJSONString(Cluster.abbreviated(cluster.count), to: &out)
        ByteOutput.append(#","expansion_zoom":"#, to: &out)
        ByteOutput.appendInteger(Int64(cluster.expansionZoom), to: &out)
        ByteOutput.append(#","statuses":{"#, to: &out)
        var firstStatus = true
        for s in 0..<min(cluster.statusCounts.count, statusKeys.count) where cluster.statusCounts[s] > 0 {
            if !firstStatus { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: statusKeys[s])
            ByteOutput.appendInteger(Int64(cluster.statusCounts[s]), to: &out)
            firstStatus = false
        }
        ByteOutput.append("}}}", to: &out)
    }
}
