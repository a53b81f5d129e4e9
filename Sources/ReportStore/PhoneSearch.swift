import GRDB
import Geometry
import ReportModel

/// Search by a fragment of a phone number or of a report id.
///
/// (The trigram index's rowids are storage keys; ``ReportRow/id(key:)`` gives the ids.)
///
/// The text is reduced to its digits (`067 12` → `06712`, `#1234` → `1234`). A report
/// matches when one of its normalized phones or its id contains those digits. Results:
/// the report whose id *is* the digits first, then the others newest first (creation
/// time, then id, descending).
///
/// Plans, all exact:
/// - 3+ digits: the FTS5 trigram index lists the matches. When there are at most
///   ``QueryTuning/searchCollectLimit`` of them, they are ordered through the narrow
///   `report_by_id` index and the first `limit` fetched. When there are more, the fragment is common, and walking the reports newest first (the `report_recent`
///   index, which covers the phones) meets `limit` of them after about
///   `limit × total / matches` rows, which is cheaper than ordering them all.
/// - 1–2 digits (too short for trigrams): the newest-first walk alone.
extension ReportStore {
    /// The reports whose phones or id contain the digits of `text`, exact id first, then newest.
    public func search(_ text: String, limit: Int) throws -> [Report] {
        let digits = try Self.searchDigits(text)
        guard limit > 0 else { return [] }
        let tuning = self.tuning
        return try pool.read { db in
            var result: [Report] = []
            let exact = Self.exactID(digits)
            if let exact, let report = try ReportRow.fetchOne(
                db, sql: "SELECT \(ReportRow.columns) FROM report WHERE id = ?", arguments: [exact]) {
                result.append(report)
            }
            let rest = limit - result.count
            guard rest > 0 else { return result }
            if digits.count >= 3 {
                let keys = try Int64.fetchAll(
                    db, sql: "SELECT rowid FROM report_search WHERE report_search MATCH ? LIMIT ?",
                    arguments: [Self.ftsPhrase(digits), tuning.searchCollectLimit + 1])
                if keys.count <= tuning.searchCollectLimit {
                    let ids = keys.lazy.map(ReportRow.id(key:)).filter { $0 != exact }
                    let list = "[" + ids.map(String.init).joined(separator: ",") + "]"
                    let newest = try Int64.fetchAll(
                        db, sql: """
                            SELECT id FROM report INDEXED BY report_by_id WHERE id IN (SELECT value FROM json_each(?))
                            ORDER BY created_at DESC, id DESC LIMIT ?
                            """, arguments: [list, rest])
                    return result + (try Self.fetch(db, ids: newest))
                }
            }
            // Only index columns are read until `rest` ids are found: the walk stays in the index.
            let ids = try Int64.fetchAll(
                db, sql: """
                    SELECT id FROM report INDEXED BY report_recent
                    WHERE (instr(phones, ?1) > 0 OR instr(id, ?1) > 0) AND id IS NOT ?2
                    ORDER BY created_at DESC, id DESC LIMIT ?3
                    """, arguments: [digits, exact, rest])
            result += try Self.fetch(db, ids: ids)
            return result
        }
    }

    /// How many reports the search for `text` matches in all.
    public func searchCount(_ text: String) throws -> Int {
        let digits = try Self.searchDigits(text)
        return try pool.read { db in
            if digits.count >= 3 {
                return try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM report_search WHERE report_search MATCH ?",
                    arguments: [Self.ftsPhrase(digits)]) ?? 0
            }
            return try Int.fetchOne(
                db, sql: "SELECT count(*) FROM report WHERE instr(phones, ?1) > 0 OR instr(id, ?1) > 0",
                arguments: [digits]) ?? 0
        }
    }


    static func searchDigits(_ text: String) throws(ValidationError) -> String {
        guard text.count <= 64 else { throw ValidationError(field: "q", "must be at most 64 characters") }
        guard let digits = Phone.searchDigits(text) else {
            throw ValidationError(field: "q", "must contain at least one digit of a phone number or report id")
        }
        return digits
    }

    /// The id a digit string names, when it could be one (no leading zero).
    static func exactID(_ digits: String) -> Int64? {
        digits.first == "0" ? nil : Int64(digits)
    }

    /// An FTS5 phrase of digits: with the trigram tokenizer, a substring match.
    static func ftsPhrase(_ digits: String) -> String { "\"\(digits)\"" }
}
