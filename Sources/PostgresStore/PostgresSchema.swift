import Foundation
import Logging
import PostgresNIO
import ReportModel

/// The schema, by numbered migrations, each applied once, in order, in the transaction
/// that records it. Times are milliseconds since 1970 (`bigint`), as in the SQLite store,
/// so that both stores answer the same values.
enum PostgresSchema {
    /// The advisory lock under which a process migrates (one at a time).
    static let migrationLock: Int64 = 0x706F_7374_6572  // "poster"
    /// The trigger that adds new reports' numbers to `report_phone`.
    static let reportPhoneTrigger = "report_phone_added"
    /// Fills an empty `report_phone` from the reports (each report's numbers once).
    static let fillReportPhone = """
        INSERT INTO report_phone SELECT n.p, id, longitude, latitude, status
        FROM report, LATERAL (SELECT DISTINCT p FROM unnest(string_to_array(phones, ';')) p) n
        """

    /// Identifier and statements of every migration of this release, oldest first.
    static let migrations: [(identifier: String, statements: [String])] = [
        ("v1: accounts, sessions, API keys, signing keys, account events", [
            """
            CREATE TABLE account (
                id bigserial PRIMARY KEY,
                name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
                email text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254),
                email_key text NOT NULL UNIQUE,
                phone text NOT NULL,
                password_hash text NOT NULL,
                role text NOT NULL CHECK (role IN ('inspector', 'supervisor', 'admin')),
                disabled boolean NOT NULL DEFAULT false,
                created_at bigint NOT NULL,
                last_login_at bigint
            )
            """,
            """
            CREATE TABLE session (
                id text PRIMARY KEY,
                account_id bigint NOT NULL REFERENCES account(id),
                refresh_hash bytea NOT NULL UNIQUE,
                created_at bigint NOT NULL,
                last_used_at bigint NOT NULL,
                expires_at bigint NOT NULL,
                ended_at bigint
            )
            """,
            "CREATE INDEX session_account ON session(account_id)",
            "CREATE INDEX session_ended ON session(ended_at) WHERE ended_at IS NOT NULL",
            """
            CREATE TABLE session_rotated (
                seq bigserial PRIMARY KEY,
                refresh_hash bytea NOT NULL UNIQUE,
                session_id text NOT NULL REFERENCES session(id) ON DELETE CASCADE
            )
            """,
            "CREATE INDEX session_rotated_session ON session_rotated(session_id)",
            """
            CREATE TABLE api_key (
                id bigserial PRIMARY KEY,
                name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
                role text NOT NULL CHECK (role IN ('integration')),
                key_hash bytea NOT NULL UNIQUE,
                created_at bigint NOT NULL,
                revoked_at bigint
            )
            """,
            """
            CREATE TABLE signing_key (
                seq bigserial PRIMARY KEY,
                kid text NOT NULL UNIQUE,
                secret bytea NOT NULL CHECK (octet_length(secret) = 32),
                created_at bigint NOT NULL
            )
            """,
            // Numbered under the events' advisory lock, held to commit (PostgresAccounts):
            // numbers follow commit order, as the port requires.
            """
            CREATE TABLE account_event (
                seq bigint PRIMARY KEY,
                at bigint NOT NULL,
                kind text NOT NULL CHECK (kind IN ('session_ended', 'account_changed', 'api_key_revoked')),
                account_id bigint,
                session_id text,
                role text,
                disabled boolean,
                api_key_id bigint
            )
            """,
            "CREATE INDEX account_event_at ON account_event(at)",
            // The highest event number ever given, kept when old events are pruned.
            "CREATE TABLE account_event_counter (last bigint NOT NULL)",
            "INSERT INTO account_event_counter VALUES (0)",
        ]),
        ("v2: reference data, reports, history, changes, phones, photos, notifications, the GIS view", [
            // The vocabularies, as the release that created the database seeded them
            // (the document the store reads), and as tables for the GIS view's names.
            "CREATE TABLE reference_data (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), document jsonb NOT NULL)",
            "CREATE TABLE district (code text PRIMARY KEY, name_uk text NOT NULL, name_en text NOT NULL)",
            "CREATE TABLE status (code text PRIMARY KEY, position integer NOT NULL UNIQUE, name_uk text NOT NULL, name_en text NOT NULL, open boolean NOT NULL)",
            // Only public reports: a hidden one moves to report_hidden, so no public read
            // can meet it. Coordinates are kept as the exact doubles (boxes are exact,
            // edges included); `position` is the same point as PostGIS sees it, for the
            // GiST index and for GIS clients.
            """
            CREATE TABLE report (
                id bigint PRIMARY KEY CHECK (id BETWEEN 1 AND 2147483647),
                longitude double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
                latitude double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
                position geometry(Point, 4326) GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(longitude, latitude), 4326)) STORED,
                address text NOT NULL CHECK (char_length(address) BETWEEN 1 AND 255),
                city text NOT NULL,
                district text NOT NULL REFERENCES district(code),
                object_type text NOT NULL,
                balance_holder text NOT NULL,
                violator text,
                phones text NOT NULL CHECK (phones <> ''),
                comment text,
                status text NOT NULL REFERENCES status(code),
                created_at bigint NOT NULL CHECK (created_at BETWEEN 0 AND 4294967295999),
                updated_at bigint NOT NULL CHECK (updated_at BETWEEN 0 AND 4294967295999),
                -- What search matches a fragment against: the phones and the id's digits,
                -- apart, so that no match spans two of them.
                search_text text GENERATED ALWAYS AS (phones || ';' || id::text) STORED
            )
            """,
            "CREATE INDEX report_position ON report USING gist (position)",
            // Fragments of five digits or more (shorter ones walk the newest first).
            "CREATE INDEX report_search ON report USING gin (search_text gin_trgm_ops)",
            // The reports of a whole number.
            "CREATE INDEX report_phones ON report USING gin (string_to_array(phones, ';'))",
            // Newest first, as search orders (the second, then the id).
            "CREATE INDEX report_recent ON report ((created_at / 1000) DESC, id DESC)",
            "CREATE INDEX report_created ON report (created_at)",
            // The highest report number ever handed out (never handed out again).
            "CREATE TABLE report_sequence (last_id bigint NOT NULL)",
            "INSERT INTO report_sequence VALUES (0)",
            """
            CREATE TABLE report_hidden (
                id bigint PRIMARY KEY,
                longitude double precision NOT NULL, latitude double precision NOT NULL,
                address text NOT NULL, city text NOT NULL, district text NOT NULL,
                object_type text NOT NULL, balance_holder text NOT NULL,
                violator text, phones text NOT NULL, comment text, status text NOT NULL,
                created_at bigint NOT NULL, updated_at bigint NOT NULL,
                hidden_at bigint NOT NULL,
                hide_note text NOT NULL
            )
            """,
            "CREATE INDEX report_hidden_phones ON report_hidden USING gin (string_to_array(phones, ';'))",
            "CREATE TABLE report_filer (report_id bigint PRIMARY KEY, account_id bigint NOT NULL REFERENCES account(id))",
            "CREATE INDEX report_filer_account ON report_filer (account_id, report_id)",
            """
            CREATE TABLE report_history (
                seq bigserial PRIMARY KEY,
                report_id bigint NOT NULL,
                at bigint NOT NULL,
                account_id bigint,
                api_key_id bigint,
                action text NOT NULL CHECK (action IN ('filed', 'edited', 'transition', 'hidden', 'unhidden', 'deleted')),
                from_status text,
                to_status text,
                note text,
                changes text
            )
            """,
            "CREATE INDEX report_history_report ON report_history (report_id, seq)",
            // Numbered by the writer holding change_counter's row to its commit
            // (PostgresReports): numbers follow commit order across every process.
            """
            CREATE TABLE report_change (
                seq bigint PRIMARY KEY,
                report_id bigint NOT NULL,
                action text NOT NULL,
                at bigint NOT NULL,
                history_seq bigint,
                phone text
            )
            """,
            "CREATE INDEX report_change_blocklist ON report_change (seq) WHERE action IN ('phone_blocked', 'phone_unblocked')",
            "CREATE INDEX report_change_at ON report_change (at)",
            // The highest change number ever given, and up to which changes are forgotten.
            "CREATE TABLE change_counter (last bigint NOT NULL, pruned_through bigint NOT NULL)",
            "INSERT INTO change_counter VALUES (0, 0)",
            """
            CREATE TABLE idempotency_key (
                caller text NOT NULL,
                key text NOT NULL,
                fingerprint bytea NOT NULL,
                status integer NOT NULL,
                headers text NOT NULL,
                answer bytea NOT NULL,
                created_at bigint NOT NULL,
                PRIMARY KEY (caller, key)
            )
            """,
            "CREATE INDEX idempotency_key_created ON idempotency_key (created_at)",
            """
            CREATE TABLE phone (
                number text PRIMARY KEY,
                status text NOT NULL CHECK (status IN ('unverified', 'violator', 'not_violator', 'unreachable', 'blocked')),
                changed_at bigint NOT NULL,
                blocked_at bigint,
                CHECK ((status = 'blocked') = (blocked_at IS NOT NULL))
            )
            """,
            """
            CREATE TABLE phone_history (
                seq bigserial PRIMARY KEY,
                number text NOT NULL,
                at bigint NOT NULL,
                account_id bigint,
                api_key_id bigint,
                action text NOT NULL CHECK (action IN ('verified', 'blocked', 'unblocked')),
                from_status text NOT NULL,
                to_status text NOT NULL,
                note text,
                moved integer NOT NULL DEFAULT 0
            )
            """,
            "CREATE INDEX phone_history_number ON phone_history (number, seq)",
            "CREATE TABLE phone_block_move (report_id bigint PRIMARY KEY, history_seq bigint NOT NULL)",
            """
            CREATE TABLE report_photo (
                id bigserial PRIMARY KEY,
                report_id bigint NOT NULL,
                sha256 text NOT NULL CHECK (char_length(sha256) = 64),
                width integer NOT NULL,
                height integer NOT NULL,
                bytes integer NOT NULL,
                created_at bigint NOT NULL,
                account_id bigint,
                UNIQUE (report_id, sha256)
            )
            """,
            "CREATE INDEX report_photo_sha ON report_photo (sha256)",
            // The pictures themselves (when the database keeps them): every replica reads them here.
            "CREATE TABLE photo_file (sha256 text PRIMARY KEY CHECK (char_length(sha256) = 64), image bytea NOT NULL, thumbnail bytea NOT NULL)",
            "CREATE TABLE notification_read (account_id bigint PRIMARY KEY REFERENCES account(id), up_to bigint NOT NULL)",
            // For GIS staff (QGIS, GDAL): the public reports, as points, with the names
            // of their districts and statuses; hidden reports and filers are not in it.
            """
            CREATE VIEW public_report AS
            SELECT r.id, r.position, r.address, r.city, r.district, d.name_uk AS district_name, r.object_type, r.balance_holder,
                   r.violator, replace(r.phones, ';', ', ') AS phones, r.comment, r.status, s.name_uk AS status_name,
                   to_timestamp(r.created_at / 1000.0) AS created_at, to_timestamp(r.updated_at / 1000.0) AS updated_at
            FROM report r JOIN district d ON d.code = r.district JOIN status s ON s.code = r.status
            """,
        ]),
        ("v3: webhooks and their outbox", [
            """
            CREATE TABLE webhook (
                id bigserial PRIMARY KEY,
                url text NOT NULL,
                description text NOT NULL,
                secret bytea NOT NULL CHECK (octet_length(secret) BETWEEN 24 AND 64),
                enabled boolean NOT NULL DEFAULT true,
                disabled_reason text,
                created_at bigint NOT NULL,
                updated_at bigint NOT NULL
            )
            """,
            """
            CREATE TABLE webhook_event (
                action text NOT NULL,
                webhook_id bigint NOT NULL REFERENCES webhook(id) ON DELETE CASCADE,
                PRIMARY KEY (action, webhook_id)
            )
            """,
            "CREATE INDEX webhook_event_webhook ON webhook_event (webhook_id)",
            """
            CREATE TABLE webhook_delivery (
                id bigserial PRIMARY KEY,
                webhook_id bigint NOT NULL REFERENCES webhook(id) ON DELETE CASCADE,
                change_seq bigint NOT NULL,
                action text NOT NULL,
                created_at bigint NOT NULL,
                state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
                attempts integer NOT NULL DEFAULT 0,
                next_at bigint,
                payload bytea,
                last_status integer,
                last_error text,
                finished_at bigint,
                UNIQUE (webhook_id, change_seq)
            )
            """,
            "CREATE INDEX webhook_delivery_due ON webhook_delivery (next_at) WHERE state = 'pending'",
            "CREATE INDEX webhook_delivery_finished ON webhook_delivery (finished_at) WHERE state <> 'pending'",
            """
            CREATE TABLE webhook_attempt (
                delivery_id bigint NOT NULL REFERENCES webhook_delivery(id) ON DELETE CASCADE,
                number integer NOT NULL,
                at bigint NOT NULL,
                status integer,
                error text,
                duration_ms bigint NOT NULL,
                PRIMARY KEY (delivery_id, number)
            )
            """,
            // The outbox is written in the transaction of the change, by whichever process makes it.
            """
            CREATE FUNCTION report_change_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO webhook_delivery (webhook_id, change_seq, action, created_at, next_at)
                SELECT e.webhook_id, NEW.seq, NEW.action, NEW.at, NEW.at
                FROM webhook_event e JOIN webhook w ON w.id = e.webhook_id
                WHERE e.action = NEW.action AND w.enabled;
                RETURN NULL;
            END
            $$
            """,
            "CREATE TRIGGER report_change_outbox AFTER INSERT ON report_change FOR EACH ROW EXECUTE FUNCTION report_change_outbox()",
        ]),
        ("v4: attempts the sign-in and registration throttles count", [
            "CREATE TABLE attempt (key bytea NOT NULL, at bigint NOT NULL, expires_at bigint NOT NULL)",
            "CREATE INDEX attempt_key ON attempt (key, at)",
            "CREATE INDEX attempt_expires ON attempt (expires_at)",
        ]),
        ("v5: the record of a move from another store", [
            "CREATE TABLE transfer (source text NOT NULL, started_at bigint NOT NULL, finished_at bigint)",
        ]),
        // A number's newest reports, in key order: the GIN index over each report's phones
        // found them all, then sorted them, so a filing's duplicate hints for a number on
        // thousands of posters took half the database's time under load. The key covers
        // what the hints read, so they read the index alone. Kept by statement triggers,
        // once per statement over its rows (a batch of filings is one statement).
        ("v6: the reports of each whole phone number, kept by triggers", [
            """
            CREATE TABLE report_phone (
                phone text NOT NULL,
                report_id bigint NOT NULL,
                longitude double precision NOT NULL,
                latitude double precision NOT NULL,
                status text NOT NULL,
                PRIMARY KEY (phone, report_id) INCLUDE (longitude, latitude, status)
            )
            """,
            """
            CREATE FUNCTION report_phone_sync() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO report_phone SELECT x.p, n.id, n.longitude, n.latitude, n.status
                    FROM new_rows n, LATERAL (SELECT DISTINCT p FROM unnest(string_to_array(n.phones, ';')) p) x;
                ELSIF TG_OP = 'DELETE' THEN
                    DELETE FROM report_phone r USING old_rows o WHERE r.report_id = o.id AND r.phone = ANY(string_to_array(o.phones, ';'));
                ELSE
                    -- Only the rows whose numbers, place or status changed (most updates move a version).
                    DELETE FROM report_phone r USING old_rows o JOIN new_rows n ON n.id = o.id
                    WHERE (o.phones, o.longitude, o.latitude, o.status) IS DISTINCT FROM (n.phones, n.longitude, n.latitude, n.status)
                      AND r.report_id = o.id AND r.phone = ANY(string_to_array(o.phones, ';'));
                    INSERT INTO report_phone SELECT x.p, n.id, n.longitude, n.latitude, n.status
                    FROM old_rows o JOIN new_rows n ON n.id = o.id, LATERAL (SELECT DISTINCT p FROM unnest(string_to_array(n.phones, ';')) p) x
                    WHERE (o.phones, o.longitude, o.latitude, o.status) IS DISTINCT FROM (n.phones, n.longitude, n.latitude, n.status);
                END IF;
                RETURN NULL;
            END
            $$
            """,
            "CREATE TRIGGER \(reportPhoneTrigger) AFTER INSERT ON report REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION report_phone_sync()",
            "CREATE TRIGGER report_phone_removed AFTER DELETE ON report REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION report_phone_sync()",
            """
            CREATE TRIGGER report_phone_changed AFTER UPDATE ON report REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION report_phone_sync()
            """,
            fillReportPhone,
            "DROP INDEX report_phones",
        ]),
        // When a picture was last stored, so that `photos gc` leaves one whose photo row is
        // still to come (an upload in progress) for an hour; pictures stored before count as old.
        ("v7: when each picture was stored", [
            "ALTER TABLE photo_file ADD COLUMN stored_at bigint NOT NULL DEFAULT 0",
        ]),
        AutodialSchema.migration,
        AssignmentSchema.migration,
        // See ``ChangeLog/changeLogName()``: made once with the database.
        ("v10: the change log's name", [
            "CREATE TABLE change_log_name (name text NOT NULL)",
            "INSERT INTO change_log_name (name) VALUES (replace(gen_random_uuid()::text, '-', ''))",
        ]),
        // A dispatcher takes each endpoint's soonest deliveries up to its share (a slow
        // endpoint must not take every attempt in flight).
        ("v11: each webhook endpoint's due deliveries", [
            "CREATE INDEX webhook_delivery_endpoint_due ON webhook_delivery (webhook_id, next_at, id) WHERE state = 'pending'",
        ]),
        // A replica's saved index, for new replicas to start from (``SharedIndexStorage``).
        ("v12: the shared saved index", [
            "CREATE TABLE saved_index_part (part integer PRIMARY KEY, change bigint NOT NULL, data bytea NOT NULL)",
            "ALTER TABLE saved_index_part ALTER COLUMN data SET STORAGE EXTERNAL",
        ]),
        // The trigrams' pending list is merged by ``PendingListFlusher``, off the writers'
        // path; a writer merges it only past twice the default limit. A role that does not
        // own the index may neither set this nor merge: its writers keep the default.
        ("v13: the trigrams' pending list merged aside", [
            """
            DO $$ BEGIN
                ALTER INDEX report_search SET (gin_pending_list_limit = 8192);
            EXCEPTION WHEN insufficient_privilege THEN NULL;
            END $$
            """,
        ]),
    ]

    /// Applies the migrations this database lacks; refuses one migrated by a newer release.
    static func migrate(_ client: PostgresClient, logger: Logger, seed: ReferenceData) async throws {
        try await PostgresDatabase.transaction(client, logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS schema_migration (identifier text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())", logger: logger)
            var applied: Set<String> = []
            for try await identifier in try await connection.query("SELECT identifier FROM schema_migration", logger: logger).decode(String.self) {
                applied.insert(identifier)
            }
            let unknown = applied.subtracting(migrations.map(\.identifier))
            guard unknown.isEmpty else { throw PostgresSchemaFromNewerRelease(unknown: unknown.sorted()) }
            for migration in migrations where !applied.contains(migration.identifier) {
                if migration.identifier.hasPrefix("v2:") { try await createExtensions(connection, logger: logger) }
                for statement in migration.statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                if migration.identifier.hasPrefix("v2:") { try await store(seed, connection, logger: logger) }
                try await connection.query("INSERT INTO schema_migration (identifier) VALUES (\(migration.identifier))", logger: logger)
            }
        }
    }

    /// PostGIS and pg_trgm, which the reports' indexes need: present already (a DBA made
    /// them) or made now, which takes the rights to (a superuser's, for PostGIS).
    static func createExtensions(_ connection: PostgresConnection, logger: Logger) async throws {
        for name in ["postgis", "pg_trgm"] {
            do {
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE EXTENSION IF NOT EXISTS \(name)"), logger: logger)
            } catch let error as PSQLError {
                throw PostgresExtensionMissing(name: name, code: error.serverInfo?[.sqlState] ?? "")
            }
        }
    }

    /// Stores the vocabularies a new database starts with: the document the store reads,
    /// and the names the GIS view shows.
    static func store(_ seed: ReferenceData, _ connection: PostgresConnection, logger: Logger) async throws {
        let document = String(decoding: try JSONEncoder().encode(seed), as: UTF8.self)
        try await connection.query("INSERT INTO reference_data (document) VALUES (\(document)::jsonb)", logger: logger)
        for d in seed.districts {
            try await connection.query("INSERT INTO district VALUES (\(d.code), \(d.nameUk), \(d.nameEn))", logger: logger)
        }
        for (position, s) in seed.statuses.enumerated() {
            try await connection.query("INSERT INTO status VALUES (\(s.code), \(position), \(s.nameUk), \(s.nameEn), \(s.open))", logger: logger)
        }
    }

    /// The vocabularies this database was seeded with.
    static func reference(_ client: PostgresClient, logger: Logger) async throws -> ReferenceData {
        for try await document in try await client.query("SELECT document::text FROM reference_data", logger: logger).decode(String.self) {
            return try JSONDecoder().decode(ReferenceData.self, from: Data(document.utf8))
        }
        throw PostgresReferenceDataMissing()
    }
}

/// A database that a newer release migrated: this one does not know its schema.
public struct PostgresSchemaFromNewerRelease: Error, Sendable, CustomStringConvertible {
    public var unknown: [String]
    public var description: String {
        "the PostgreSQL database was written by a newer release of PosterWatch (its schema has \(unknown.map { "\"\($0)\"" }.joined(separator: ", "))); it was left untouched"
    }
}

/// A database whose reference data row is gone (deleted by hand): reports cannot be checked.
public struct PostgresReferenceDataMissing: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "the PostgreSQL database has no reference data (table reference_data is empty); restore it from a backup" }
}

/// An extension the store needs that the database lacks and the user may not create.
public struct PostgresExtensionMissing: Error, Sendable, CustomStringConvertible {
    public var name: String
    /// PostgreSQL's SQLSTATE (42501: no right to create it; 58P01 or 0A000: not installed).
    public var code: String
    public var description: String {
        "the PostgreSQL database lacks the extension \(name), and it could not be created (SQLSTATE \(code)): "
            + "install it (Debian: postgresql-15-postgis-3 for postgis, postgresql-contrib for pg_trgm) and run CREATE EXTENSION \(name) as a superuser in this database"
    }
}
