import Foundation
import Geometry
import Offloading
import ReportModel
import StorePorts

/// The reports as stored, read without an index: what a one-shot command asks (`query`,
/// `search`, `stats`, `blocklist`, `photos gc`), which must not first build the service's
/// index from every report. It only reads; writes go through ``ReportService``.
public struct StoredReports: Sendable {
    let storage: any ReportReads

    public init(storage: any ReportReads) { self.storage = storage }

    public var reference: ReferenceData { storage.reference }

    /// Runs a read of the store off the cooperative pool (no further hop when the caller
    /// is already off it): see `Blocking.offPool`.
    func read<T: Sendable>(_ body: (any ReportReads) async throws -> T) async throws -> T {
        try await Blocking.offPool { try await body(storage) }
    }

    /// A page of the public reports in the box, in id order after the cursor, and how many
    /// the box holds.
    public func page(in box: BoundingBox, after: Int64?, limit: Int) async throws -> (reports: [Report], matched: Int) {
        try await read { (try await $0.page(in: box, after: after, limit: limit), try await $0.count(in: box)) }
    }

    /// Reports by a phone fragment or id (exact id first, then newest), and how many match.
    public func search(_ text: String, limit: Int) async throws -> (reports: [Report], matched: Int) {
        try await read { try await $0.searchWithCount(text, limit: limit) }
    }

    /// Counts of the stored table and its indexes.
    public func statistics() async throws -> StoreStatistics { try await read { try await $0.statistics() } }

    /// The numbers on the blocklist, with their public reports.
    public func blocklist() async throws -> [BlockedPhone] { try await read { try await $0.blocklist() } }

    /// The digests of every photo row, which the photo files must hold.
    public func photoNames() async throws -> Set<String> { try await read { try await $0.photoNames() } }
}
