import Foundation
import Logging
import PostgresNIO

/// How an import fills an empty `report`: the rows go by COPY into a table beside it
/// (`report_load`), committed, and two connections then build its indexes, its
/// constraints and its `report_phone` at once. PostgreSQL 15 builds each index on one
/// core, and the trigram index alone is half of that work, so one transaction building
/// them in turn left the second core idle. The transaction that holds the writers' lock
/// throughout (the import's) then swaps the new tables in and commits: until that commit
/// every reader sees the empty table it had, so the import stays all or nothing. Tables
/// left by an import that died are dropped by the next one, under the same lock.
///
/// What refers to the two tables is read from the catalogue and carried over: indexes and
/// constraints built again under their names, triggers made again, grants given again,
/// and the views that read the tables replaced in place (so that their own grants and
/// dependents stay), the owner kept. ``plan(on:logger:)`` declines when something else
/// refers to them or sets them apart (a materialized view, a rule, a policy, a publication
/// of the table, a foreign key into it, a function or sequence depending on it, its row
/// type used elsewhere, a column's grant, a table's comment, extended statistics, an
/// exclusion or deferrable constraint, a trigger turned off, storage parameters, a replica
/// identity, an unlogged table, a partition or inheritance), and the import then loads the
/// table in place.
struct ReportTableSwap {
    /// The tables swapped, and their stand-ins' names.
    static let tables = ["report", "report_phone"]
    static func stand(in table: String) -> String { table + "_load" }

    /// A statement that builds part of a stand-in, and the import phase its time counts in.
    struct Build {
        var statement: String
        var phase: Phase
    }

    enum Phase { case search, position, secondary }

    /// The builds, as two lists to run at once on two connections, each about half the
    /// work (1M reports, 2026-11-29): the trigrams' GIN index (7.4 s), the longest build,
    /// first on one, then the report table's b-trees (1.8 s); on the other, filling
    /// `report_phone` (3.3 s) and its key (2.7 s), then the points' GiST index (2.5 s).
    /// Keys are built as unique indexes, made keys at the swap: adding a key or a foreign
    /// key locks the table against an index build, and had waited for the trigrams.
    let builds: [[Build]]
    /// Run once the builds are done: the foreign keys (they check every row).
    let afterBuilds: [Build]
    /// The stand-ins' owner, then their grants, as the tables have them.
    private let grants: [String]
    /// Run after the swap: the views made again over the new tables, then the old tables
    /// dropped, the indexes given their names and the keys made, the triggers made again.
    private let afterSwap: [String]

    /// What it takes to swap the tables, read from the catalogue; nil when something refers
    /// to them that a swap would not carry over.
    static func plan(on c: PostgresConnection, logger: Logger) async throws -> ReportTableSwap? {
        guard try await !hasUncarried(c, logger: logger) else { return nil }
        // Every index, and the key or unique constraint it makes, if any.
        let indexes = try await c.query(
            """
            SELECT t.relname, am.amname,
                   format('CREATE %sINDEX %I ON %I USING %s', CASE WHEN x.indisunique THEN 'UNIQUE ' ELSE '' END,
                          ic.relname || '_load', t.relname || '_load', substring(pg_get_indexdef(x.indexrelid) FROM ' USING (.*)$')),
                   CASE WHEN k.oid IS NULL THEN format('ALTER INDEX %I RENAME TO %I', ic.relname || '_load', ic.relname)
                        ELSE format('ALTER TABLE %I ADD CONSTRAINT %I %s USING INDEX %I', t.relname, k.conname,
                                    CASE k.contype WHEN 'p' THEN 'PRIMARY KEY' ELSE 'UNIQUE' END, ic.relname || '_load') END
            FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid JOIN pg_am am ON am.oid = ic.relam
            LEFT JOIN pg_constraint k ON k.conindid = x.indexrelid AND k.conrelid = t.oid AND k.contype IN ('p', 'u')
            WHERE t.oid IN ('report'::regclass, 'report_phone'::regclass)
            ORDER BY t.relname, ic.relname
            """, logger: logger
        ).collect().map { try $0.decode((String, String, String, String).self) }
        // Foreign keys keep their names (a constraint's name is its table's own).
        let foreignKeys = try await c.query(
            """
            SELECT format('ALTER TABLE %I ADD CONSTRAINT %I %s', t.relname || '_load', k.conname, pg_get_constraintdef(k.oid))
            FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
            WHERE t.oid IN ('report'::regclass, 'report_phone'::regclass) AND k.contype = 'f' ORDER BY t.relname, k.conname
            """, logger: logger
        ).collect().map { try $0.decode(String.self) }
        let triggers = try await c.query(
            """
            SELECT pg_get_triggerdef(g.oid) FROM pg_trigger g
            WHERE g.tgrelid IN ('report'::regclass, 'report_phone'::regclass) AND NOT g.tgisinternal ORDER BY g.tgname
            """, logger: logger
        ).collect().map { try $0.decode(String.self) }
        let views = try await c.query(
            """
            SELECT DISTINCT v.oid::regclass::text, pg_get_viewdef(v.oid)
            FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid JOIN pg_class v ON v.oid = r.ev_class
            WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
              AND d.refobjid IN ('report'::regclass, 'report_phone'::regclass) AND v.oid <> d.refobjid
            """, logger: logger
        ).collect().map { try $0.decode((String, String).self) }
        let grants = try await c.query(
            """
            SELECT statement FROM (
                SELECT 0 AS turn, format('ALTER TABLE %I OWNER TO %I', t.relname || '_load', pg_get_userbyid(t.relowner)) AS statement
                FROM pg_class t WHERE t.oid IN ('report'::regclass, 'report_phone'::regclass)
                UNION ALL
                SELECT 1, format('GRANT %s ON %I TO %s%s', a.privilege_type, t.relname || '_load',
                                 CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
                                 CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
                FROM pg_class t, aclexplode(t.relacl) a
                WHERE t.oid IN ('report'::regclass, 'report_phone'::regclass) AND a.grantee <> t.relowner
            ) s ORDER BY turn
            """, logger: logger
        ).collect().map { try $0.decode(String.self) }

        // `report_phone` is filled first, and its indexes built after. An import's drafts
        // hold each number once (``Phone/normalizeList(_:field:)``): no DISTINCT per row,
        // which took a fifth of the fill.
        let fill = """
            INSERT INTO report_phone_load SELECT p, id, longitude, latitude, status
            FROM report_load, unnest(string_to_array(phones, ';')) p
            """
        var trigrams: [Build] = [], reportTrees: [Build] = [], points: [Build] = []
        var phones = [Build(statement: fill, phase: .search)]
        var after = views.map { "CREATE OR REPLACE VIEW \($0.0) AS \($0.1)" }
        after.append("DROP TABLE " + tables.map { $0 + "_retired" }.joined(separator: ", "))
        for (table, method, statement, naming) in indexes {
            switch (table, method) {
            case ("report_phone", _): phones.append(Build(statement: statement, phase: .search))
            case (_, "gin"): trigrams.append(Build(statement: statement, phase: .search))
            case (_, "gist"): points.append(Build(statement: statement, phase: .position))
            default: reportTrees.append(Build(statement: statement, phase: .secondary))
            }
            after.append(naming)
        }
        after += triggers
        return ReportTableSwap(
            builds: [trigrams + reportTrees, phones + points], afterBuilds: foreignKeys.map { Build(statement: $0, phase: .secondary) }, grants: grants, afterSwap: after)
    }

    /// Whether something refers to the tables that a swap would not carry over.
    private static func hasUncarried(_ c: PostgresConnection, logger: Logger) async throws -> Bool {
        try await c.query(
            """
            WITH t(oid) AS (VALUES ('report'::regclass::oid), ('report_phone'::regclass::oid))
            SELECT EXISTS (SELECT 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid JOIN pg_class v ON v.oid = r.ev_class
                           WHERE d.classid = 'pg_rewrite'::regclass AND d.refobjid IN (SELECT oid FROM t) AND v.relkind <> 'v')
                OR EXISTS (SELECT 1 FROM pg_rewrite r WHERE r.ev_class IN (SELECT oid FROM t))
                OR EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid IN (SELECT oid FROM t))
                OR EXISTS (SELECT 1 FROM pg_publication_rel p WHERE p.prrelid IN (SELECT oid FROM t))
                OR EXISTS (SELECT 1 FROM pg_statistic_ext s WHERE s.stxrelid IN (SELECT oid FROM t))
                OR EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid IN (SELECT oid FROM t) AND a.attacl IS NOT NULL)
                OR EXISTS (SELECT 1 FROM pg_description c WHERE c.classoid = 'pg_class'::regclass AND c.objoid IN (SELECT oid FROM t) AND c.objsubid = 0)
                OR EXISTS (SELECT 1 FROM pg_class c WHERE c.oid IN (SELECT oid FROM t) AND (c.relrowsecurity OR c.relispartition OR c.relhassubclass))
                OR EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid IN (SELECT oid FROM t) AND (k.contype IN ('x', 't') OR (k.contype IN ('p', 'u') AND k.condeferrable)))
                OR EXISTS (SELECT 1 FROM pg_constraint k WHERE k.confrelid IN (SELECT oid FROM t) AND k.conrelid NOT IN (SELECT oid FROM t))
                OR EXISTS (SELECT 1 FROM pg_depend d WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid IN (SELECT oid FROM t)
                           AND (d.classid = 'pg_proc'::regclass
                                OR (d.classid = 'pg_class'::regclass AND (SELECT relkind FROM pg_class WHERE oid = d.objid) = 'S')))
                OR EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_class c ON c.reltype = a.atttypid WHERE c.oid IN (SELECT oid FROM t) AND a.attrelid NOT IN (SELECT oid FROM t))
                OR EXISTS (SELECT 1 FROM pg_class c WHERE c.oid IN (SELECT oid FROM t)
                           AND (c.relpersistence <> 'p' OR c.reloptions IS NOT NULL OR c.relreplident <> 'd'))
                OR EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid IN (SELECT oid FROM t) AND NOT g.tgisinternal AND g.tgenabled <> 'O')
            """, logger: logger
        ).collect()[0].decode(Bool.self)
    }

    /// Drops what an import that died left, and makes the empty stand-ins.
    func prepare(on c: PostgresConnection, logger: Logger) async throws {
        try await Self.discard(on: c, logger: logger)
        for table in Self.tables {
            try await c.query(PostgresQuery(unsafeSQL: "CREATE TABLE \(Self.stand(in: table)) (LIKE \(table) INCLUDING ALL EXCLUDING INDEXES)"), logger: logger)
        }
        for grant in grants { try await c.query(PostgresQuery(unsafeSQL: grant), logger: logger) }
    }

    /// Puts the stand-ins in the tables' places, in the transaction `c` holds open.
    func swap(on c: PostgresConnection, logger: Logger) async throws {
        var statements = ["LOCK TABLE \(Self.tables.joined(separator: ", ")) IN ACCESS EXCLUSIVE MODE"]
        statements += Self.tables.map { "ALTER TABLE \($0) RENAME TO \($0)_retired" }
        statements += Self.tables.map { "ALTER TABLE \(Self.stand(in: $0)) RENAME TO \($0)" }
        for statement in statements + afterSwap { try await c.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
    }

    /// Drops the stand-ins of an import that failed, under the writers' lock, unless
    /// another import holds it (its stand-ins are its own; it dropped what was left).
    static func discardUnderLock(on c: PostgresConnection, logger: Logger) async throws {
        try await c.query("BEGIN", logger: logger)
        if try await !c.query("SELECT 1 FROM change_counter FOR UPDATE SKIP LOCKED", logger: logger).collect().isEmpty {
            try await discard(on: c, logger: logger)
        }
        try await c.query("COMMIT", logger: logger)
    }

    /// Drops the stand-ins, if any.
    static func discard(on c: PostgresConnection, logger: Logger) async throws {
        try await c.query(PostgresQuery(unsafeSQL: "DROP TABLE IF EXISTS " + tables.map(stand(in:)).joined(separator: ", ")), logger: logger)
    }
}
