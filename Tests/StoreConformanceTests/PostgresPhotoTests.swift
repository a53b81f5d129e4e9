import Foundation
import Generator
import Geometry
import PostgresStore
import ReportModel
import StorePorts
import Testing
import TestSupport

/// The pictures a PostgreSQL database keeps (`photo_file`), collected as `photos gc`
/// collects a directory's files.
@Suite("PostgreSQL photos", .enabled(if: TestPostgres.url != nil))
struct PostgresPhotoTests {
    @Test("gc removes the pictures no photo row names once past the grace; a picture stored again is new again; one a photo row names stays")
    func collect() async throws {
        let fresh = try await TestPostgres.fresh()
        let photos = PostgresPhotos(fresh.database)
        let reports = PostgresReports(fresh.database)
        let (named, orphan, again) = (String(repeating: "a", count: 64), String(repeating: "b", count: 64), String(repeating: "c", count: 64))
        for sha in [named, orphan, again] { try await photos.store(sha256: sha, image: Array(sha.utf8), thumbnail: [1]) }
        var rng = SplitMix64(state: 5)
        let draft = try reports.reference.validate(Drafts.make(Coordinate(longitude: 30.5, latitude: 50.45), using: &rng))
        _ = try reports.commit([{ t in
            let report = try t.insert(draft, filer: nil, author: .system, now: Date())
            return try t.addPhoto(to: report.id, sha256: named, width: 1, height: 1, bytes: 64, author: .system, now: Date()).added
        }])[0].get()
        #expect(try await photos.collect() == 0, "all are within the hour")
        try TestPostgres.psql("UPDATE photo_file SET stored_at = 0", database: fresh.name)
        try await photos.store(sha256: again, image: Array(again.utf8), thumbnail: [1])
        #expect(try await photos.collect() == 1)
        #expect(try await photos.read(sha256: named, thumbnail: false) == Data(named.utf8), "named by a photo row")
        #expect(try await photos.read(sha256: orphan, thumbnail: false) == nil, "old and named by none")
        #expect(try await photos.read(sha256: again, thumbnail: true) == Data([1]), "stored again: new")
    }
}
