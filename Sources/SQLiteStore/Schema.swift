import Foundation
import GRDB
import ReportModel

/// The database schema, as named, append-only migrations.
///
/// Landed migrations never change; a new need is a new migration at the end of the list.
/// Reporters, photos and the status history will come as tables of their own that refer
/// to `report(id)`, so the report row itself stays public data.
enum Schema {
    static func migrator(seed: ReferenceData) -> Migrations {
        var migrator = Migrations()
        migrator.registerMigration("v1: reference tables, reports, R*Tree and phone index", migrate: v1Reports)
        migrator.registerMigration("v1: reference data") { db in try v1ReferenceData(db, seed) }
        migrator.registerMigration("v2: accounts, sessions, API keys, signing keys", migrate: v2Accounts)
        migrator.registerMigration("v3: workflow, filers, hiding, history, changes, idempotency keys") { db in try v3Workflow(db, seed) }
        migrator.registerMigration("v4: queued full-text writes, changes with their history and retention", migrate: v4QueuedSearchAndRetention)
        migrator.registerMigration("v5: webhooks and their outbox", migrate: v5Webhooks)
        migrator.registerMigration("v6: report photos", migrate: v6Photos)
        migrator.registerMigration("v7: phone records, their history, and the reports blocks moved", migrate: v7PhoneRecords)
        migrator.registerMigration("v8: account events; an account's phone no longer unique", migrate: v8AccountEvents)
        migrator.registerMigration("v9: autodial campaigns and their calls", migrate: v9Autodial)
        migrator.registerMigration("v10: assignments, in the reports' history", migrate: v10Assignments)
        migrator.registerMigration("v11: the change log's name", migrate: v11ChangeLogName)
        migrator.registerMigration("v12: each webhook endpoint's due deliveries", migrate: v12EndpointDue)
        return migrator
    }

    /// Made once with the database (or with the first release that knows it), from
    /// SQLite's random source: see ``ChangeLog/changeLogName()``.
    static func v11ChangeLogName(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE change_log_name (name TEXT NOT NULL);
            INSERT INTO change_log_name (name) VALUES (lower(hex(randomblob(16))));
            """)
    }

    /// A dispatcher takes each endpoint's soonest deliveries up to its share (a slow
    /// endpoint must not take every attempt in flight).
    static func v12EndpointDue(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX webhook_delivery_endpoint_due ON webhook_delivery(webhook_id, next_at) WHERE state = 'pending'")
    }

    static func v1Reports(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE district (
                code TEXT PRIMARY KEY, name_uk TEXT NOT NULL, name_en TEXT NOT NULL,
                center_longitude REAL NOT NULL, center_latitude REAL NOT NULL
            );
            CREATE TABLE object_type (
                code TEXT PRIMARY KEY, name_uk TEXT NOT NULL, name_en TEXT NOT NULL
            );
            CREATE TABLE balance_holder (
                code TEXT PRIMARY KEY, name_uk TEXT NOT NULL, name_en TEXT NOT NULL
            );
            -- Which holders may be recorded for which object type.
            CREATE TABLE balance_holder_object_type (
                object_type TEXT NOT NULL REFERENCES object_type(code),
                balance_holder TEXT NOT NULL REFERENCES balance_holder(code),
                PRIMARY KEY (object_type, balance_holder)
            );
            CREATE TABLE status (
                code TEXT PRIMARY KEY, position INTEGER NOT NULL UNIQUE,
                name_uk TEXT NOT NULL, name_en TEXT NOT NULL, open BOOLEAN NOT NULL
            );

            -- Rows are stored in the order of `key`: the Morton code of the report's
            -- zoom-16 Web Mercator cell (about 600 m at the equator, 380 m in Kyiv),
            -- then its id (key = code << 31 | id). The reports of a place lie together,
            -- so a box is read as a few short ranges instead of a lookup per report.
            -- `id` is the public report number, unique and never handed out twice
            -- (report_sequence keeps the highest ever given, and how many reports there are).
            CREATE TABLE report (
                key INTEGER PRIMARY KEY,
                id INTEGER NOT NULL CHECK (id BETWEEN 1 AND 2147483647),
                longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
                latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
                address TEXT NOT NULL CHECK (length(address) BETWEEN 1 AND 255),
                city TEXT NOT NULL,
                district TEXT NOT NULL REFERENCES district(code),
                object_type TEXT NOT NULL REFERENCES object_type(code),
                balance_holder TEXT NOT NULL,
                violator TEXT,
                phones TEXT NOT NULL CHECK (phones <> ''),
                comment TEXT,
                status TEXT NOT NULL REFERENCES status(code),
                created_at INTEGER NOT NULL CHECK (created_at BETWEEN 0 AND 4294967295999),
                updated_at INTEGER NOT NULL CHECK (updated_at BETWEEN 0 AND 4294967295999),
                CHECK (key & 2147483647 = id),
                FOREIGN KEY (object_type, balance_holder)
                    REFERENCES balance_holder_object_type(object_type, balance_holder)
            );
            CREATE TABLE report_sequence (last_id INTEGER NOT NULL, report_count INTEGER NOT NULL);
            INSERT INTO report_sequence VALUES (0, 0);

            -- Unique ids; it also holds each row's key, so box paging walks ids here.
            CREATE UNIQUE INDEX report_id ON report(id);
            -- Newest first: the walk of 1–2 digit searches reads only this index.
            CREATE INDEX report_recent ON report(created_at, id, phones);

            -- Keyed by report.key; 32-bit floats rounded outward: a filter, checked
            -- against report's doubles.
            CREATE VIRTUAL TABLE report_rtree USING rtree(key, min_lon, max_lon, min_lat, max_lat);

            -- Contentless trigram index over phones and the id's digits. Its rowid is the
            -- report's recency, (created_at in seconds) << 31 | id, so that the newest
            -- matches are the first ones FTS5 meets when it walks rowids downwards. No
            -- column sizes: they serve only ranking, which search does not use.
            CREATE VIRTUAL TABLE report_search USING fts5(phones, id_digits, content='', columnsize=0, tokenize='trigram');
            -- Flush pending terms every 64 MB instead of every 1 MB: a bulk build writes
            -- fewer, larger segments and merges less (~25% faster).
            INSERT INTO report_search(report_search, rank) VALUES ('hashsize', 67108864);

            -- The R*Tree, the phone index and the counts follow every write. (A bulk import
            -- drops these triggers in its own transaction and rebuilds what they keep
            -- before it commits.) `key` itself is computed by the store: rows written
            -- by hand must keep `key = cell << 31 | id` (the CHECK guards only the id).
            CREATE TRIGGER report_after_insert AFTER INSERT ON report BEGIN
                INSERT INTO report_rtree VALUES (new.key, new.longitude, new.longitude, new.latitude, new.latitude);
                INSERT INTO report_search(rowid, phones, id_digits) VALUES (((new.created_at / 1000) << 31) | new.id, new.phones, new.id);
                UPDATE report_sequence SET report_count = report_count + 1, last_id = max(last_id, new.id);
            END;
            CREATE TRIGGER report_after_delete AFTER DELETE ON report BEGIN
                DELETE FROM report_rtree WHERE key = old.key;
                INSERT INTO report_search(report_search, rowid, phones, id_digits) VALUES ('delete', ((old.created_at / 1000) << 31) | old.id, old.phones, old.id);
                UPDATE report_sequence SET report_count = report_count - 1;
            END;
            CREATE TRIGGER report_after_move AFTER UPDATE OF key, longitude, latitude ON report BEGIN
                DELETE FROM report_rtree WHERE key = old.key;
                INSERT INTO report_rtree VALUES (new.key, new.longitude, new.longitude, new.latitude, new.latitude);
            END;
            CREATE TRIGGER report_after_phones AFTER UPDATE OF created_at, id, phones ON report BEGIN
                INSERT INTO report_search(report_search, rowid, phones, id_digits) VALUES ('delete', ((old.created_at / 1000) << 31) | old.id, old.phones, old.id);
                INSERT INTO report_search(rowid, phones, id_digits) VALUES (((new.created_at / 1000) << 31) | new.id, new.phones, new.id);
                UPDATE report_sequence SET last_id = max(last_id, new.id);
            END;
            """)
    }

    static func v1ReferenceData(_ db: Database, _ seed: ReferenceData) throws {
        for d in seed.districts {
            try db.execute(
                sql: "INSERT INTO district VALUES (?, ?, ?, ?, ?)",
                arguments: [d.code, d.nameUk, d.nameEn, d.center[0], d.center[1]])
        }
        for t in seed.objectTypes {
            try db.execute(sql: "INSERT INTO object_type VALUES (?, ?, ?)", arguments: [t.code, t.nameUk, t.nameEn])
        }
        for h in seed.balanceHolders {
            try db.execute(sql: "INSERT INTO balance_holder VALUES (?, ?, ?)", arguments: [h.code, h.nameUk, h.nameEn])
            for type in h.objectTypes {
                try db.execute(sql: "INSERT INTO balance_holder_object_type VALUES (?, ?)", arguments: [type, h.code])
            }
        }
        for (position, s) in seed.statuses.enumerated() {
            try db.execute(
                sql: "INSERT INTO status VALUES (?, ?, ?, ?, ?)",
                arguments: [s.code, position, s.nameUk, s.nameEn, s.open])
        }
    }

    /// Who may write: people (email and phone unique, the email compared by its
    /// lowercased form), their sessions (refresh tokens kept only as SHA-256 hashes, the
    /// rotated ones remembered so that a reuse can end the session), API keys (hashes
    /// only) and the keys that sign access tokens.
    static func v2Accounts(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE account (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
                email TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
                email_key TEXT NOT NULL UNIQUE,
                phone TEXT NOT NULL UNIQUE,
                password_hash TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('inspector', 'supervisor', 'admin')),
                disabled BOOLEAN NOT NULL DEFAULT 0,
                created_at INTEGER NOT NULL,
                last_login_at INTEGER
            );
            CREATE TABLE session (
                id TEXT PRIMARY KEY,
                account_id INTEGER NOT NULL REFERENCES account(id),
                refresh_hash BLOB NOT NULL UNIQUE,
                created_at INTEGER NOT NULL,
                last_used_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                ended_at INTEGER
            );
            CREATE INDEX session_account ON session(account_id);
            CREATE TABLE session_rotated (
                refresh_hash BLOB NOT NULL UNIQUE,
                session_id TEXT NOT NULL REFERENCES session(id)
            );
            CREATE INDEX session_rotated_session ON session_rotated(session_id);
            CREATE TABLE api_key (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
                role TEXT NOT NULL CHECK (role IN ('integration')),
                key_hash BLOB NOT NULL UNIQUE,
                created_at INTEGER NOT NULL,
                revoked_at INTEGER
            );
            CREATE TABLE signing_key (
                kid TEXT PRIMARY KEY,
                secret BLOB NOT NULL CHECK (length(secret) = 32),
                created_at INTEGER NOT NULL
            );
            """)
    }

    /// Filing and working reports. The report row stays public data: who filed it, its
    /// history and its hiding live in tables of their own. A hidden report's row moves
    /// to `report_hidden` (the triggers take it out of the R*Tree, the phone index and
    /// the count), so no public read path can meet it; unhiding moves it back.
    /// `report_phone` finds the reports of a whole number (with where they are and their
    /// status, so that duplicate hints read nothing else); the FTS index finds fragments.
    /// `report_change` numbers every write, strictly increasing (AUTOINCREMENT never
    /// reuses a number), for the changes feed. `idempotency_key` keeps the first answer
    /// to a filing sent with an `Idempotency-Key`, written in the filing's transaction.
    static func v3Workflow(_ db: Database, _ seed: ReferenceData) throws {
        try db.execute(sql: """
            CREATE TABLE status_transition (
                position INTEGER PRIMARY KEY,
                from_statuses TEXT NOT NULL,
                to_status TEXT NOT NULL REFERENCES status(code),
                by_actors TEXT NOT NULL,
                note_required BOOLEAN NOT NULL,
                duplicate_of_required BOOLEAN NOT NULL
            );
            CREATE TABLE report_filer (
                report_id INTEGER PRIMARY KEY,
                account_id INTEGER NOT NULL REFERENCES account(id)
            );
            CREATE INDEX report_filer_account ON report_filer(account_id, report_id);
            CREATE TABLE report_hidden (
                id INTEGER PRIMARY KEY,
                key INTEGER NOT NULL,
                longitude REAL NOT NULL, latitude REAL NOT NULL,
                address TEXT NOT NULL, city TEXT NOT NULL, district TEXT NOT NULL,
                object_type TEXT NOT NULL, balance_holder TEXT NOT NULL,
                violator TEXT, phones TEXT NOT NULL, comment TEXT, status TEXT NOT NULL,
                created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                hidden_at INTEGER NOT NULL,
                hide_note TEXT NOT NULL
            );
            CREATE TABLE report_history (
                seq INTEGER PRIMARY KEY,
                report_id INTEGER NOT NULL,
                at INTEGER NOT NULL,
                account_id INTEGER,
                api_key_id INTEGER,
                action TEXT NOT NULL CHECK (action IN ('filed', 'edited', 'transition', 'hidden', 'unhidden', 'deleted')),
                from_status TEXT,
                to_status TEXT,
                note TEXT,
                changes TEXT
            );
            CREATE INDEX report_history_report ON report_history(report_id, seq);
            CREATE TABLE report_change (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                report_id INTEGER NOT NULL,
                action TEXT NOT NULL,
                at INTEGER NOT NULL
            );
            CREATE TABLE idempotency_key (
                caller TEXT NOT NULL,
                key TEXT NOT NULL,
                fingerprint BLOB NOT NULL,
                status INTEGER NOT NULL,
                headers TEXT NOT NULL,
                answer BLOB NOT NULL,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (caller, key)
            ) WITHOUT ROWID;
            CREATE INDEX idempotency_key_created ON idempotency_key(created_at);
            """)
        try db.execute(sql: ReportPhones.schema)
        try db.execute(sql: ReportPhones.fill)
        for (position, t) in seed.transitions.enumerated() {
            try db.execute(
                sql: "INSERT INTO status_transition VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [position, t.from.joined(separator: ","), t.to, t.by.joined(separator: ","), t.noteRequired, t.duplicateOfRequired])
        }
    }

    /// The full-text index is written at the end of each transaction, from a queue the
    /// triggers fill (see `SearchQueue`), and merged into one segment. A change names
    /// its history row (what staff see of it in the feed); `report_change_pruned` says
    /// up to which sequence number changes have been forgotten (retention);
    /// `notification_read` how far each account has read of its notifications.
    static func v4QueuedSearchAndRetention(_ db: Database) throws {
        try db.execute(sql: SearchQueue.schema)
        try db.execute(sql: SearchQueue.optimize)
        try db.execute(sql: """
            ALTER TABLE report_change ADD COLUMN history_seq INTEGER;
            CREATE TABLE report_change_pruned (through INTEGER NOT NULL);
            INSERT INTO report_change_pruned VALUES (0);
            -- How far each account has read its notifications (a history seq).
            CREATE TABLE notification_read (
                account_id INTEGER PRIMARY KEY REFERENCES account(id),
                up_to INTEGER NOT NULL
            );
            """)
    }

    /// Webhooks. `webhook_event` holds what each endpoint subscribes to in the changes
    /// table's own words (its actions), so that the trigger on `report_change` writes
    /// an endpoint's deliveries (the outbox) in the very transaction of the change,
    /// whichever process makes it. A delivery's payload is written once, before its
    /// first attempt, and never again: every retry sends the same bytes.
    static func v5Webhooks(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE webhook (
                id INTEGER PRIMARY KEY,
                url TEXT NOT NULL,
                description TEXT NOT NULL,
                secret BLOB NOT NULL CHECK (length(secret) BETWEEN 24 AND 64),
                enabled BOOLEAN NOT NULL DEFAULT 1,
                disabled_reason TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            );
            CREATE TABLE webhook_event (
                action TEXT NOT NULL,
                webhook_id INTEGER NOT NULL REFERENCES webhook(id) ON DELETE CASCADE,
                PRIMARY KEY (action, webhook_id)
            ) WITHOUT ROWID;
            CREATE INDEX webhook_event_webhook ON webhook_event(webhook_id);
            CREATE TABLE webhook_delivery (
                id INTEGER PRIMARY KEY,
                webhook_id INTEGER NOT NULL REFERENCES webhook(id) ON DELETE CASCADE,
                change_seq INTEGER NOT NULL,
                action TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
                attempts INTEGER NOT NULL DEFAULT 0,
                -- When a pending delivery is next tried (NULL while its endpoint is disabled).
                next_at INTEGER,
                payload BLOB,
                last_status INTEGER,
                last_error TEXT,
                finished_at INTEGER,
                UNIQUE (webhook_id, change_seq)
            );
            CREATE INDEX webhook_delivery_due ON webhook_delivery(next_at) WHERE state = 'pending';
            CREATE INDEX webhook_delivery_finished ON webhook_delivery(finished_at) WHERE state != 'pending';
            CREATE TABLE webhook_attempt (
                delivery_id INTEGER NOT NULL REFERENCES webhook_delivery(id) ON DELETE CASCADE,
                number INTEGER NOT NULL,
                at INTEGER NOT NULL,
                status INTEGER,
                error TEXT,
                duration_ms INTEGER NOT NULL,
                PRIMARY KEY (delivery_id, number)
            ) WITHOUT ROWID;
            CREATE TRIGGER report_change_outbox AFTER INSERT ON report_change BEGIN
                INSERT INTO webhook_delivery (webhook_id, change_seq, action, created_at, next_at)
                SELECT e.webhook_id, NEW.seq, NEW.action, NEW.at, NEW.at
                FROM webhook_event e JOIN webhook w ON w.id = e.webhook_id
                WHERE e.action = NEW.action AND w.enabled;
            END;
            """)
    }

    /// Photos of reports. The files are content addressed (by the SHA-256 of the stored
    /// JPEG) beside the database; a row is committed only once its file is in place, so
    /// no row points at a missing file. One picture on one report is one row.
    static func v6Photos(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE report_photo (
                id INTEGER PRIMARY KEY,
                report_id INTEGER NOT NULL,
                sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
                width INTEGER NOT NULL,
                height INTEGER NOT NULL,
                bytes INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                account_id INTEGER,
                UNIQUE (report_id, sha256)
            );
            CREATE INDEX report_photo_sha ON report_photo(sha256);
            """)
    }

    /// Phones as records of their own: a number's status (what a supervisor found, and
    /// whether it is blocked) and the history of its changes. Only numbers someone has
    /// verified have a row; every other number seen on a report is `unverified`, and its
    /// counts come from `report_phone`, which every write keeps. A phone's change is a
    /// row of `report_change` (report 0) naming the number, so the feed, the outbox and
    /// the blocklist's changes read one sequence. `phone_block_move` remembers which
    /// reports a block moved to `phone_blocked` (by their transition's history row),
    /// so that an unblock moves back only those nobody has moved since.
    static func v7PhoneRecords(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE phone (
                number TEXT PRIMARY KEY,
                status TEXT NOT NULL CHECK (status IN ('unverified', 'violator', 'not_violator', 'unreachable', 'blocked')),
                changed_at INTEGER NOT NULL,
                blocked_at INTEGER,
                CHECK ((status = 'blocked') = (blocked_at IS NOT NULL))
            ) WITHOUT ROWID;
            CREATE TABLE phone_history (
                seq INTEGER PRIMARY KEY,
                number TEXT NOT NULL,
                at INTEGER NOT NULL,
                account_id INTEGER,
                api_key_id INTEGER,
                action TEXT NOT NULL CHECK (action IN ('verified', 'blocked', 'unblocked')),
                from_status TEXT NOT NULL,
                to_status TEXT NOT NULL,
                note TEXT,
                moved INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX phone_history_number ON phone_history(number, seq);
            ALTER TABLE report_change ADD COLUMN phone TEXT;
            CREATE INDEX report_change_blocklist ON report_change(seq) WHERE action IN ('phone_blocked', 'phone_unblocked');
            CREATE TABLE phone_block_move (
                report_id INTEGER PRIMARY KEY,
                history_seq INTEGER NOT NULL
            );
            """)
    }

    /// What ends or narrows an account's power (a session ended, an account changed or
    /// disabled, an API key revoked) as numbered events, written in the transaction of
    /// the change itself: every process serving the database follows them
    /// (`AccountService`), so a logout or a demotion holds everywhere within a poll.
    /// AUTOINCREMENT: a number is never given twice, even after the newest rows are
    /// pruned. And an account's phone is no longer unique (the table is rebuilt without
    /// that constraint): registration must not tell a stranger whether a number belongs
    /// to an inspector, so sign-in is by email only.
    static func v8AccountEvents(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE account_rebuilt (
                id INTEGER PRIMARY KEY,
                name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
                email TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
                email_key TEXT NOT NULL UNIQUE,
                phone TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('inspector', 'supervisor', 'admin')),
                disabled BOOLEAN NOT NULL DEFAULT 0,
                created_at INTEGER NOT NULL,
                last_login_at INTEGER
            );
            INSERT INTO account_rebuilt SELECT id, name, email, email_key, phone, password_hash, role, disabled, created_at, last_login_at FROM account;
            DROP TABLE account;
            ALTER TABLE account_rebuilt RENAME TO account;
            CREATE TABLE account_event (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                at INTEGER NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('session_ended', 'account_changed', 'api_key_revoked')),
                account_id INTEGER,
                session_id TEXT,
                role TEXT,
                disabled BOOLEAN,
                api_key_id INTEGER
            );
            CREATE INDEX account_event_at ON account_event(at);
            -- A process that starts, or reloads, reads the sessions ended of late.
            CREATE INDEX session_ended ON session(ended_at) WHERE ended_at IS NOT NULL;
            """)
    }

    /// Reads the vocabularies back from the tables, in their stored order.
    static func loadReference(_ db: Database) throws -> ReferenceData {
        let districts = try Row.fetchAll(db, sql: "SELECT * FROM district ORDER BY rowid").map {
            ReferenceData.District(code: $0["code"], nameUk: $0["name_uk"], nameEn: $0["name_en"],
                                   center: [$0["center_longitude"], $0["center_latitude"]])
        }
        return try ReferenceData(
            districts: districts,
            objectTypes: entries(db, "object_type"),
            balanceHolders: entries(db, "balance_holder").map { holder in
                let types = try String.fetchAll(
                    db, sql: "SELECT object_type FROM balance_holder_object_type WHERE balance_holder = ? ORDER BY rowid",
                    arguments: [holder.code])
                return ReferenceData.BalanceHolder(code: holder.code, nameUk: holder.nameUk, nameEn: holder.nameEn, objectTypes: types)
            },
            statuses: Row.fetchAll(db, sql: "SELECT * FROM status ORDER BY position").map {
                ReferenceData.Status(code: $0["code"], nameUk: $0["name_uk"], nameEn: $0["name_en"], open: $0["open"])
            },
            transitions: Row.fetchAll(db, sql: "SELECT * FROM status_transition ORDER BY position").map {
                StatusTransition(
                    from: ($0["from_statuses"] as String).split(separator: ",").map(String.init), to: $0["to_status"],
                    by: ($0["by_actors"] as String).split(separator: ",").map(String.init),
                    noteRequired: $0["note_required"], duplicateOfRequired: $0["duplicate_of_required"])
            })
    }

    private static func entries(_ db: Database, _ table: String) throws -> [ReferenceData.Entry] {
        try Row.fetchAll(db, sql: "SELECT code, name_uk, name_en FROM \(table) ORDER BY rowid").map {
            ReferenceData.Entry(code: $0[0], nameUk: $0[1], nameEn: $0[2])
        }
    }
}
