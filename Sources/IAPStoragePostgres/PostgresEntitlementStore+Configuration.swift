import IAPCore

extension PostgresEntitlementStore {
    /// Where the ledger lives and how the store talks to the server.
    public struct Configuration: Sendable {
        /// The server: a URL such as `postgres://user@host:5432/database?sslmode=require`, or a libpq
        /// connection string (`host=... dbname=...`). Anything libpq accepts, including `sslmode`,
        /// `connect_timeout` (which then wins over ``connectTimeout``) and the `PG*` environment variables.
        ///
        /// The password may be in it (`postgres://user:password@host/...`), but is better kept out: in
        /// ``password``, in `PGPASSWORD` or in a password file (`~/.pgpass`, `PGPASSFILE`), which libpq reads when
        /// no password is given. Whatever its source, no message, error or description of the store shows it.
        public var url: String
        /// The password, when it is kept apart from ``url`` (read from a secret store or a file); `nil` lets libpq
        /// take the one of the URL, `PGPASSWORD` or the password file. Giving one here and one in the URL is
        /// `invalidConfiguration`.
        public var password: String?
        /// The PostgreSQL schema that holds the ledger's tables: a plain lower-case identifier (letters,
        /// digits, `_`; at most 63). It is created when missing. Several ledgers can share a database, one
        /// per schema.
        public var schema: String
        /// The most connections the store opens (1 to 64); opened on demand, kept while healthy.
        public var poolSize: Int
        /// How long opening a connection may take (whole seconds, at least 2, as libpq counts them).
        public var connectTimeout: Duration
        /// How long one statement may run before the server cancels it (`statement_timeout`).
        public var statementTimeout: Duration
        /// Whether opening creates a ledger that does not exist yet; when `false`, opening a schema without the
        /// store's tables throws `notFound` and creates nothing (for tools that only read).
        public var createIfMissing: Bool
        /// How concurrent inserts and compare-and-sets (a delivery's record, claim and mark) share commits: those
        /// waiting for the database at the same moment run in one transaction, each under a savepoint, and commit
        /// together, so that one WAL flush serves them all; a write alone runs as its own statement, as without it.
        /// Every caller returns once its write committed. `nil` commits each write on its own.
        public var groupCommit: PostgresGroupCommit?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - url: The server's URL or connection string.
        ///   - schema: The schema of the ledger's tables.
        ///   - poolSize: The most connections.
        ///   - connectTimeout: The limit on opening a connection.
        ///   - statementTimeout: The limit on one statement.
        ///   - createIfMissing: Whether to create a missing ledger.
        ///   - password: The password, when it is not in the URL.
        ///   - groupCommit: How concurrent writes share commits; `nil` for a commit each.
        public init(
            url: String,
            schema: String = "public",
            poolSize: Int = 4,
            connectTimeout: Duration = .seconds(10),
            statementTimeout: Duration = .seconds(30),
            createIfMissing: Bool = true,
            password: String? = nil,
            groupCommit: PostgresGroupCommit? = PostgresGroupCommit()
        ) {
            self.groupCommit = groupCommit
            self.url = url
            self.password = password
            self.schema = schema
            self.poolSize = poolSize
            self.connectTimeout = connectTimeout
            self.statementTimeout = statementTimeout
            self.createIfMissing = createIfMissing
        }

        /// Checks every field, so a bad one fails when the store opens rather than on first use.
        func validate() throws {
            let identifier = schema.utf8.allSatisfy {
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z"))
                    || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || $0 == UInt8(ascii: "_")
            }
            guard identifier, (1...63).contains(schema.utf8.count), let first = schema.utf8.first,
                !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first), !schema.hasPrefix("pg_")
            else {
                throw IAPError(
                    .invalidConfiguration,
                    "the schema name \"\(schema)\" is not a plain lower-case identifier (a-z, 0-9, _; at most 63, "
                        + "not starting with a digit or pg_)"
                )
            }
            guard (1...64).contains(poolSize) else {
                throw IAPError(.invalidConfiguration, "the pool size must be from 1 to 64, got \(poolSize)")
            }
            try groupCommit?.validate(poolSize: poolSize)
            guard connectTimeout >= .seconds(1), statementTimeout >= .milliseconds(1) else {
                throw IAPError(.invalidConfiguration, "the connect and statement timeouts must be positive")
            }
            guard !url.utf8.contains(0) else {
                throw IAPError(.invalidConfiguration, "the PostgreSQL URL holds a NUL character")
            }
            if let password {
                guard !password.isEmpty, !password.utf8.contains(0) else {
                    throw IAPError(.invalidConfiguration, "the PostgreSQL password is empty or holds a NUL character")
                }
                guard !PostgresPasswordRedactor.holdsPassword(url) else {
                    throw IAPError(
                        .invalidConfiguration,
                        "the PostgreSQL URL holds a password and another is given apart from it; give it once"
                    )
                }
            }
            try PostgresConnection.checkSyntax(of: url, redactor: redactor)
        }

        /// What keeps this configuration's passwords out of messages.
        var redactor: PostgresPasswordRedactor {
            PostgresPasswordRedactor(conninfo: url, password: password)
        }

        /// The libpq keywords of a connection: the defaults first, then the URL, whose settings win
        /// over them (except the encoding).
        var connectionSettings: [(String, String)] {
            [
                ("connect_timeout", String(max(2, connectTimeout.wholeSeconds))),
                ("fallback_application_name", "swift-iap"),
                ("dbname", url),
                // After the URL: the store reads and writes UTF-8 whatever the URL says.
                ("client_encoding", "UTF8"),
            ] + (password.map { [("password", $0)] } ?? [])
        }

        /// Opens a connection with the settings every connection of the store has (`statement_timeout`, the
        /// schema as `search_path`).
        func connect() throws -> PostgresConnection {
            let connection = try PostgresConnection(settings: connectionSettings, redactor: redactor)
            try connection.execute(.connectionSettings, [String(statementTimeoutMilliseconds), "\"\(schema)\""])
            return connection
        }

        /// `statement_timeout` in milliseconds.
        var statementTimeoutMilliseconds: Int64 {
            max(1, statementTimeout.wholeMilliseconds)
        }
    }
}

extension PostgresEntitlementStore.Configuration: CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The configuration with its passwords masked (`***`), for logs.
    public var description: String {
        "Configuration(url: \"\(redactor.redact(url))\", schema: \"\(schema)\", poolSize: \(poolSize), "
            + "connectTimeout: \(connectTimeout), statementTimeout: \(statementTimeout), "
            + "createIfMissing: \(createIfMissing), password: \(password == nil ? "nil" : PostgresPasswordRedactor.mask))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The fields with the passwords masked, so that `dump` shows none either.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "url": redactor.redact(url), "schema": schema, "poolSize": poolSize,
                "connectTimeout": connectTimeout, "statementTimeout": statementTimeout,
                "createIfMissing": createIfMissing,
                "password": password == nil ? "nil" : PostgresPasswordRedactor.mask,
            ] as KeyValuePairs<String, Any>
        )
    }
}
