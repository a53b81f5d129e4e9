import Foundation
import NIOCore
import PostgresNIO
import StorePorts

/// Attempts counted in the database (`attempt`), so that every replica's sign-in and
/// registration throttles count together: an attacker gains nothing from several
/// replicas. A take locks its keys (advisory locks, in key order) for its transaction, so
/// that attempts at once, from any replica, are checked and counted one after another.
/// Rows are dropped once their window has passed. Keys are kept as bytes: a login is
/// whatever was typed, NUL included, which a `text` cannot hold.
struct PostgresAttempts: AttemptLedger {
    let database: PostgresDatabase

    init(_ database: PostgresDatabase) { self.database = database }

    var logger: Logger { database.logger }

    func wait(_ keys: [(key: String, limit: Int)], window: TimeInterval, now: Date) async throws -> TimeInterval? {
        try await database.client.withConnection { c in try await Self.wait(c, keys, window: window, now: now, logger: logger) }
    }

    func take(_ keys: [(key: String, limit: Int)], window: TimeInterval, now: Date) async throws -> TimeInterval? {
        try await database.transaction { c in
            for key in Set(keys.map(\.key)).sorted() {
                try await c.query("SELECT pg_advisory_xact_lock(hashtextextended(encode(\(Data(key.utf8)), 'base64'), 7))", logger: logger)
            }
            try await c.query("DELETE FROM attempt WHERE expires_at <= \(now.milliseconds)", logger: logger)
            if let wait = try await Self.wait(c, keys, window: window, now: now, logger: logger) { return wait }
            try await c.query(
                """
                INSERT INTO attempt (key, at, expires_at)
                SELECT unnest(\(keys.map { ByteBuffer(bytes: Data($0.key.utf8)) })::bytea[]), \(now.milliseconds), \(now.addingTimeInterval(window).milliseconds)
                """, logger: logger)
            return nil
        }
    }

    func giveBack(_ keys: [String], at time: Date) async throws {
        for key in keys {
            try await database.client.query(
                "DELETE FROM attempt WHERE ctid = (SELECT ctid FROM attempt WHERE key = \(Data(key.utf8)) AND at = \(time.milliseconds) LIMIT 1)", logger: logger)
        }
    }

    func forget(_ keys: [String]) async throws {
        try await database.client.query("DELETE FROM attempt WHERE key = ANY(\(keys.map { ByteBuffer(bytes: Data($0.utf8)) })::bytea[])", logger: logger)
    }

    private static func wait(
        _ c: PostgresConnection, _ keys: [(key: String, limit: Int)], window: TimeInterval, now: Date, logger: Logger
    ) async throws -> TimeInterval? {
        var times: [String: [Date]] = [:]
        for row in try await c.query(
            """
            SELECT key, at FROM attempt WHERE key = ANY(\(keys.map { ByteBuffer(bytes: Data($0.key.utf8)) })::bytea[]) AND at > \((now - window).milliseconds)
            ORDER BY at
            """, logger: logger
        ).collect() {
            let (key, at) = try row.decode((Data, Int64).self)
            times[String(decoding: key, as: UTF8.self), default: []].append(Date(milliseconds: at))
        }
        return Self.wait(keys.map { (times[$0.key] ?? [], $0.limit) }, window: window, now: now)
    }
}
