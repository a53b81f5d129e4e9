import Foundation
import Geometry
import PostgresNIO
import ReportModel
import StorePorts

/// Phones' reads. A number's reports are found in `report_phone`, in report order (the
/// trigram index cannot do it well, as numbers are made of ten characters and their
/// trigrams' lists are long; a GIN index over each report's phones found them all and
/// sorted them). Only numbers someone verified have a row of `phone`.
extension PostgresReports {
    public func phoneRecord(_ number: String) async throws -> PhoneRecord? {
        try await snapshotRead { c in
            let stored = try await c.query("SELECT status, changed_at, blocked_at FROM phone WHERE number = \(number)", logger: logger).collect().first.map {
                let (status, changed, blocked) = try $0.decode((String, Int64, Int64?).self)
                return (PhoneStatus(rawValue: status) ?? .unverified, Date(milliseconds: changed), blocked.map(Date.init(milliseconds:)))
            }
            let sightings = try await c.query(
                """
                SELECT r.status, r.district, r.violator, r.created_at FROM report_phone p JOIN report r ON r.id = p.report_id WHERE p.phone = \(number)
                """, logger: logger
            ).collect().map {
                let (status, district, violator, created) = try $0.decode((String, String, String?, Int64).self)
                return PhoneRecord.Sighting(status: status, district: district, violator: violator, createdAt: created)
            }
            let history = try await c.query(
                """
                SELECT * FROM (SELECT \(unescaped: Rows.phoneHistoryColumns) FROM phone_history WHERE number = \(number) ORDER BY seq DESC LIMIT \(PhoneRecord.maxHistory)) h
                ORDER BY seq
                """, logger: logger
            ).collect().map(Rows.phoneHistory)
            return PhoneRecord(number: number, stored: stored, sightings: sightings, reference: reference, history: history)
        }
    }

    public func phoneHistory(seqs: some Collection<Int64>) async throws -> [Int64: PhoneHistoryEntry] {
        guard !seqs.isEmpty else { return [:] }
        let entries = try await rows("SELECT \(unescaped: Rows.phoneHistoryColumns) FROM phone_history WHERE seq = ANY(\(Array(seqs)))").map(Rows.phoneHistory)
        return Dictionary(uniqueKeysWithValues: entries.map { ($0.seq, $0) })
    }

    public func phoneStatuses(_ numbers: some Collection<String>) async throws -> [String: PhoneStatus] {
        guard !numbers.isEmpty else { return [:] }
        return try Statements.phoneStatuses(await rows(Statements.phoneStatuses(Array(numbers))), of: numbers)
    }

    public func reports(carrying number: String, after: Int64, limit: Int) async throws -> (reports: [Report], matched: Int) {
        try await snapshotRead { c in
            let reports = try await c.query(
                """
                SELECT \(unescaped: Rows.reportColumns) FROM report
                WHERE id IN (SELECT report_id FROM report_phone WHERE phone = \(number) AND report_id > \(after) ORDER BY report_id LIMIT \(limit))
                ORDER BY id
                """, logger: logger
            ).collect().map(Rows.report)
            let matched = try await c.query("SELECT count(*) FROM report_phone WHERE phone = \(number)", logger: logger)
                .collect()[0].decode(Int.self)
            return (reports, matched)
        }
    }

    public func holders(of phone: String, limit: Int) async throws -> [PhoneHolder] {
        var holders: [PhoneHolder] = []
        for try await holder in try await database.client.execute(HoldersStatement(phone: phone, limit: limit), logger: logger) {
            holders.append(holder)
        }
        return holders
    }

    public func blockedCount() async throws -> Int {
        try await rows("SELECT count(*) FROM phone WHERE status = 'blocked'")[0].decode(Int.self)
    }

    public func blocklist() async throws -> [BlockedPhone] {
        try await snapshotRead { c in try await Self.blocked(c, among: nil, logger: logger) }
    }

    /// The blocked numbers (all, or those among `numbers`), in number order, with their
    /// public report counts.
    private static func blocked(_ c: PostgresConnection, among numbers: [String]?, logger: Logger) async throws -> [BlockedPhone] {
        try await c.query(
            """
            SELECT p.number, p.blocked_at, (SELECT count(*) FROM report_phone r WHERE r.phone = p.number)
            FROM phone p WHERE p.status = 'blocked' AND (\(numbers)::text[] IS NULL OR p.number = ANY(\(numbers)::text[])) ORDER BY p.number
            """, logger: logger
        ).collect().map {
            let (number, blocked, count) = try $0.decode((String, Int64, Int).self)
            return BlockedPhone(number: number, blockedAt: Date(milliseconds: blocked), reportCount: count)
        }
    }

    public func blocklistChanges(since: Int64) async throws -> BlocklistChanges {
        try await snapshotRead { c in
            let changed = try await c.query(
                """
                SELECT DISTINCT phone FROM report_change WHERE seq > \(since) AND action IN ('phone_blocked', 'phone_unblocked') ORDER BY phone
                """, logger: logger
            ).collect().map { try $0.decode(String.self) }
            let added = try await Self.blocked(c, among: changed, logger: logger)
            let blocked = Set(added.map(\.number))
            let counter = try await Self.counter(c, logger: logger)
            return BlocklistChanges(
                added: added, removed: changed.filter { !blocked.contains($0) }, lastSeq: counter.last, prunedThrough: counter.prunedThrough)
        }
    }
}
