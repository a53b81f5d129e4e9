import Foundation

/// Where the bytes of stored pictures are kept (a photo's row is the report store's):
/// each picture with its thumbnail, named by the SHA-256 of the picture.
///
/// Requirements: a picture is in place, thumbnail and all, before ``store(sha256:image:thumbnail:)``
/// returns, so that the row committed after it never names a missing picture; the same
/// picture stored twice is one copy. Every process serving a database must see the same
/// pictures (one directory, or a shared one, or a store of its own for several machines).
///
/// Its methods may do their work in place, on the calling thread (the files do): a
/// caller that must keep Swift's cooperative threads free calls them inside
/// `Blocking.offPool`, as for ``ReportReads``.
public protocol PhotoStorage: Sendable {
    func store(sha256: String, image: [UInt8], thumbnail: [UInt8]) async throws
    /// The bytes of a picture or of its thumbnail; nil when there is none of that name.
    func read(sha256: String, thumbnail: Bool) async throws -> Data?
}
