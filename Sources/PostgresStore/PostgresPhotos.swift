import Foundation
import PostgresNIO
import StorePorts

/// Pictures kept in the database itself (`photo_file`), so that every replica serves a
/// photo uploaded through any other with nothing but the database's URL.
public struct PostgresPhotos: PhotoStorage {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    /// The row commits before this returns, so the report's photo row, committed after it,
    /// never names a missing picture; the same picture twice is one row, stored anew.
    public func store(sha256: String, image: [UInt8], thumbnail: [UInt8]) async throws {
        try await database.client.query(
            """
            INSERT INTO photo_file (sha256, image, thumbnail, stored_at) VALUES (\(sha256), \(Data(image)), \(Data(thumbnail)), \(Date().milliseconds))
            ON CONFLICT (sha256) DO UPDATE SET stored_at = excluded.stored_at
            """,
            logger: database.logger)
    }

    /// Removes the pictures no report's photo names that were stored longer than `age`
    /// ago (left by a crash between a picture and its row, or by removed photos); returns
    /// how many. What `posterwatch photos gc` does to a directory of pictures.
    public func collect(olderThan age: TimeInterval = 3_600) async throws -> Int {
        try await database.client.query(
            """
            DELETE FROM photo_file f WHERE f.stored_at < \(Date(timeIntervalSinceNow: -age).milliseconds)
              AND NOT EXISTS (SELECT 1 FROM report_photo p WHERE p.sha256 = f.sha256) RETURNING 1
            """,
            logger: database.logger
        ).collect().count
    }

    public func read(sha256: String, thumbnail: Bool) async throws -> Data? {
        let query: PostgresQuery = thumbnail
            ? "SELECT thumbnail FROM photo_file WHERE sha256 = \(sha256)"
            : "SELECT image FROM photo_file WHERE sha256 = \(sha256)"
        return try await database.client.query(query, logger: database.logger).collect().first?.decode(Data.self)
    }
}

/// What one PostgreSQL database holds, opened once: the ports' stores, the photos, and
/// the tables as a move fills them.
public struct PostgresStores: Sendable {
    public let stores: Stores
    public let photos: PostgresPhotos
    public let transfer: PostgresTransfer

    /// Opens the database a `postgres://` URL names (migrated when needed), with the
    /// password from `password` when the URL has none.
    public init(url: String, password: String? = nil) async throws {
        let database = try await PostgresDatabase(url: url, password: password)
        stores = Stores(reports: PostgresReports(database), accounts: PostgresAccounts(database), webhooks: PostgresWebhooks(database))
        photos = PostgresPhotos(database)
        transfer = PostgresTransfer(database)
    }
}
