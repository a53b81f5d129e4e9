import Clustering

/// The reports an answer of clusters shows: each cluster's count plus each lone report,
/// the number that must equal a brute-force count whatever the zoom.
public func reportCount(_ items: [ClusterItem]) -> Int {
    items.reduce(0) { n, item in
        switch item {
        case .cluster(let c): n + c.count
        case .report: n + 1
        }
    }
}
