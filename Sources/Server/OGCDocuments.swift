import Foundation

/// The JSON documents of OGC API – Features (Part 1) that PosterWatch answers, as
/// `Codable` types, so that the same document is always the same bytes (members sorted).
enum OGC {
    struct Link: Codable, Sendable, Equatable {
        var href: String
        var rel: String
        var type: String
        var title: String

        init(_ href: String, _ rel: String, _ type: String, _ title: String) {
            (self.href, self.rel, self.type, self.title) = (href, rel, type, title)
        }
    }

    struct Landing: Codable, Sendable {
        var title: String
        var description: String
        var links: [Link]
    }

    struct Conformance: Codable, Sendable {
        var conformsTo: [String]
    }

    struct Collections: Codable, Sendable {
        var collections: [Collection]
        var links: [Link]
    }

    struct Collection: Codable, Sendable {
        var id: String
        var title: String
        var description: String
        var itemType: String
        var extent: Extent
        var crs: [String]
        var storageCrs: String
        var links: [Link]
    }

    struct Extent: Codable, Sendable {
        struct Spatial: Codable, Sendable {
            var bbox: [[Double]]
            var crs: String
        }
        struct Temporal: Codable, Sendable {
            /// `[[start, end]]`, RFC 3339; null for an open end (no reports yet).
            var interval: [[String?]]
            var trs: String
        }
        var spatial: Spatial
        var temporal: Temporal
    }
}
