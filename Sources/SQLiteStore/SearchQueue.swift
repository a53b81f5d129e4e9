import GRDB

/// The full-text index's writes, queued by the triggers and applied at the end of each
/// transaction.
///
/// FTS5 flushes the terms it holds in memory to a new segment at every statement
/// savepoint, and SQLite opens one for every statement that writes through triggers. With
/// the index written from the report triggers, every filing wrote a one-row segment and
/// merged it: onto a million reports, 500 filings a transaction went in at 2,400/s, and
/// at 6,600/s without the index. Written at the end, in one statement, a transaction's
/// terms make one segment. Every transaction that writes reports ends with ``drain(_:)``,
/// before its commit, so no other connection ever sees a queued row.
enum SearchQueue {
    static let schema = """
        CREATE TABLE report_search_queue (
            seq INTEGER PRIMARY KEY,
            command TEXT CHECK (command IS NULL OR command = 'delete'),
            search_rowid INTEGER NOT NULL,
            phones TEXT NOT NULL,
            id_digits INTEGER NOT NULL
        );
        DROP TRIGGER report_after_insert;
        DROP TRIGGER report_after_delete;
        DROP TRIGGER report_after_phones;
        CREATE TRIGGER report_after_insert AFTER INSERT ON report BEGIN
            INSERT INTO report_rtree VALUES (new.key, new.longitude, new.longitude, new.latitude, new.latitude);
            INSERT INTO report_search_queue (command, search_rowid, phones, id_digits)
                VALUES (NULL, \(PhoneIndexBuild.recency(createdAt: "new.created_at", id: "new.id")), new.phones, new.id);
            UPDATE report_sequence SET report_count = report_count + 1, last_id = max(last_id, new.id);
        END;
        CREATE TRIGGER report_after_delete AFTER DELETE ON report BEGIN
            DELETE FROM report_rtree WHERE key = old.key;
            INSERT INTO report_search_queue (command, search_rowid, phones, id_digits)
                VALUES ('delete', \(PhoneIndexBuild.recency(createdAt: "old.created_at", id: "old.id")), old.phones, old.id);
            UPDATE report_sequence SET report_count = report_count - 1;
        END;
        CREATE TRIGGER report_after_phones AFTER UPDATE OF created_at, id, phones ON report BEGIN
            INSERT INTO report_search_queue (command, search_rowid, phones, id_digits)
                VALUES ('delete', \(PhoneIndexBuild.recency(createdAt: "old.created_at", id: "old.id")), old.phones, old.id);
            INSERT INTO report_search_queue (command, search_rowid, phones, id_digits)
                VALUES (NULL, \(PhoneIndexBuild.recency(createdAt: "new.created_at", id: "new.id")), new.phones, new.id);
            UPDATE report_sequence SET last_id = max(last_id, new.id);
        END;
        """

    /// Applies the queued writes to `report_search`, in order, in one statement, and
    /// empties the queue. A no-op when nothing is queued.
    static func drain(_ db: Database) throws {
        guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM report_search_queue)")) == true else { return }
        try db.cachedStatement(sql: """
            INSERT INTO report_search(report_search, rowid, phones, id_digits)
                SELECT command, search_rowid, phones, id_digits FROM report_search_queue ORDER BY seq
            """).execute()
        try db.cachedStatement(sql: "DELETE FROM report_search_queue").execute()
    }

    /// Merges the index into one segment. A bulk build leaves a few large segments at the
    /// lowest level, which FTS5 then keeps merging with each small one a commit adds: 57 ms
    /// a commit onto a million reports, against 4 ms once they are one.
    static let optimize = "INSERT INTO report_search(report_search) VALUES ('optimize')"
}
