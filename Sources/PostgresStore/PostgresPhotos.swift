import Foundation
import PostgresNIO
import StorePorts

/// Pictures kept in the database itself (`photo_file`), so that every replica serves a
/// photo uploaded through any other with nothing but the database's URL.
public struct PostgresPhotos: PhotoStorage {
    let database: PostgresDatabase

    public init(_ database: PostgresDatabase) { self.database = database }

    /// The row commits before this returns, so the report's photo row, committed after it,
    /// never names a missing picture; the same picture twice is one row.
    public func store(sha256: String, image: [UInt8], thumbnail: [UInt8]) async throws {
        try await database.client.query(
            "INSERT INTO photo_file (sha256, image, thumbnail) VALUES (\(sha256), \(Data(image)), \(Data(thumbnail))) ON CONFLICT (sha256) DO NOTHING",
            logger: database.logger)
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
