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
        out.reserveCapacity(512 * items.count + 64)  // a cluster takes about 400 bytes, a report 500
        ByteOutput.append(#"{"type":"FeatureCollection""#, to: &out)
        for member in members {
            out.append(UInt8(ascii: ","))
            ByteOutput.appendJSONString(member.name, to: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: member.json.utf8)
        }
        ByteOutput.append(#","features":["#, to: &out)
        let keys = StatusKeys(statusCodes)  // once, not once per cluster
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
        appendFeature(cluster, statusKeys: StatusKeys(statusCodes), to: &out)
    }

    /// Each status's `"code":` as JSON, one after another in one array.
    struct StatusKeys {
        var bytes: [UInt8] = []
        /// Where status `s`'s key ends in `bytes` (it starts where the one before ends).
        var ends: [Int] = []

        init(_ codes: [String]) {
            for code in codes {
                ByteOutput.appendJSONString(code, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                ends.append(bytes.count)
            }
        }
    }

    /// Most bytes of a cluster Feature besides its status keys and count label: the
    /// literal text (186 bytes), six numbers in degrees and four integers, and a count
    /// and a comma per status.
    private static func featureBound(statuses: Int) -> Int {
        186 + 6 * ByteCursor.decimalBound + 4 * ByteCursor.integerBound + statuses * (ByteCursor.integerBound + 1)
    }

    /// Appends one cluster Feature, written through a cursor into memory reserved for it.
    static func appendFeature(_ cluster: Cluster, statusKeys: StatusKeys, to out: inout [UInt8]) {
        let position = cluster.coordinate, box = cluster.bounds
        let statuses = min(cluster.statusCounts.count, statusKeys.ends.count)
        var label = Cluster.abbreviated(cluster.count)
        statusKeys.bytes.withUnsafeBufferPointer { keyBytes in
            ByteOutput.append(upTo: featureBound(statuses: statuses) + keyBytes.count + label.utf8.count, to: &out) { out in
                out.write(#"{"type":"Feature","id":"#)
                out.writeInteger(Int64(cluster.id.rawValue))
                out.write(#","bbox":["#)
                out.writeDegrees(box.west)
                out.write(UInt8(ascii: ","))
                out.writeDegrees(box.south)
                out.write(UInt8(ascii: ","))
                out.writeDegrees(box.east)
                out.write(UInt8(ascii: ","))
                out.writeDegrees(box.north)
                out.write(#"],"geometry":{"type":"Point","coordinates":["#)
                out.writeDegrees(position.longitude)
                out.write(UInt8(ascii: ","))
                out.writeDegrees(position.latitude)
                out.write(#"]},"properties":{"cluster":true,"cluster_id":"#)
                out.writeInteger(Int64(cluster.id.rawValue))
                out.write(#","count":"#)
                out.writeInteger(Int64(cluster.count))
                out.write(#","count_abbrev":""#)
                label.withUTF8 { out.write($0) }  // digits, a point and a letter: nothing to escape
                out.write(#"","expansion_zoom":"#)
                out.writeInteger(Int64(cluster.expansionZoom))
                out.write(#","statuses":{"#)
                var firstStatus = true, keyStart = 0
                for s in 0..<statuses {
                    let keyEnd = statusKeys.ends[s]
                    defer { keyStart = keyEnd }
                    guard cluster.statusCounts[s] > 0 else { continue }
                    if !firstStatus { out.write(UInt8(ascii: ",")) }
                    out.write(UnsafeBufferPointer(rebasing: keyBytes[keyStart..<keyEnd]))
                    out.writeInteger(Int64(cluster.statusCounts[s]))
                    firstStatus = false
                }
                out.write("}}}")
            }
        }
    }
}

