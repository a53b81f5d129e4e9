import PostgresNIO

/// The schema, by numbered migrations, each applied once, in order, in the transaction
/// that records it. Times are milliseconds since 1970 (`bigint`), as in the SQLite store,
/// so that both stores answer the same values.
enum PostgresSchema {
    /// The advisory lock under which a process migrates (one at a time).
    static let migrationLock: Int64 = 0x706F_7374_6572  // "poster"

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
    ]

    /// Applies the migrations this database lacks; refuses one migrated by a newer release.
    static func migrate(_ database: PostgresDatabase) async throws {
        try await database.transaction { connection in
            let logger = database.logger
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
                for statement in migration.statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
                try await connection.query("INSERT INTO schema_migration (identifier) VALUES (\(migration.identifier))", logger: logger)
            }
        }
    }
}

/// A database that a newer release migrated: this one does not know its schema.
public struct PostgresSchemaFromNewerRelease: Error, Sendable, CustomStringConvertible {
    public var unknown: [String]
    public var description: String {
        "the PostgreSQL database was written by a newer release of PosterWatch (its schema has \(unknown.map { "\"\($0)\"" }.joined(separator: ", "))); it was left untouched"
    }
}
