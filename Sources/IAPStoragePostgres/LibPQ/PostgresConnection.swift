import CIAPLibPQ
import IAPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One libpq connection (`PGconn`), used by one thread at a time.
///
/// Every call blocks the calling thread until the server answers, so the pool runs them on its own dispatch
/// queue, never on the Swift cooperative thread pool. Statements are prepared once per connection, the
/// first time they run on it, and executed with text parameters (`PQexecPrepared`): values never become
/// part of the SQL text.
final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Masks the connection's password in every message (libpq's and the server's alike).
    private let redactor: PostgresPasswordRedactor
    /// The statements already prepared on this connection, by name.
    private var prepared: Set<String> = []
    /// The statements of transactional fulfillment hooks prepared on this connection: their names by SQL text.
    private var hookStatements: [String: String] = [:]
    /// The most hook statements kept prepared on one connection; more run unprepared.
    private static let hookStatementLimit = 64

    /// Connects and applies the connection settings.
    ///
    /// - Parameters:
    ///   - settings: libpq keywords and values, in order; a later keyword overrides an earlier one, and a
    ///     `dbname` holding a URL or a connection string is expanded in its place.
    ///   - redactor: What masks the password in messages.
    /// - Throws: ``IAPError`` with code `storageAuthenticationFailed` when the server refused the credentials,
    ///   `storageUnavailable` when it cannot be reached.
    init(settings: [(String, String)], redactor: PostgresPasswordRedactor) throws {
        let keywords = settings.map { strdup($0.0) }
        let values = settings.map { strdup($0.1) }
        defer {
            for pointer in keywords + values {
                free(pointer)
            }
        }
        let keywordList = keywords.map { UnsafePointer($0) } + [nil]
        let valueList = values.map { UnsafePointer($0) } + [nil]
        guard let connection = PQconnectdbParams(keywordList, valueList, 1) else {
            throw IAPError(.storageUnavailable, "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = redactor.redact(Self.trimmed(PQerrorMessage(connection)))
            PQfinish(connection)
            throw Self.connectionError(message)
        }
        // The server's notices ("schema already exists, skipping") are not errors, and a library must not
        // print them on stderr, which is what libpq does by default.
        PQsetNoticeReceiver(connection, { _, _ in }, nil)
        handle = connection
        self.redactor = redactor
    }

    deinit {
        PQfinish(handle)
    }

    /// Checks that libpq can parse a connection string or URL, without connecting.
    ///
    /// - Parameters:
    ///   - conninfo: A `postgres://` URL or a `key=value` connection string.
    ///   - redactor: What masks the password in libpq's reason, which quotes what it cannot parse.
    /// - Throws: ``IAPError`` with code `invalidConfiguration` and libpq's reason when it cannot.
    static func checkSyntax(of conninfo: String, redactor: PostgresPasswordRedactor) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            let reason = redactor.redact(error.map { trimmed($0) } ?? "libpq cannot parse it")
            PQfreemem(error)
            throw IAPError(.invalidConfiguration, "the PostgreSQL URL is not valid: \(reason)")
        }
        PQconninfoFree(options)
    }

    /// Whether the connection can take a statement: open, outside any transaction, and not closed by the
    /// server while it sat idle (the server's goodbye, if any, is read here without blocking).
    var isHealthy: Bool {
        guard PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) == PQTRANS_IDLE else {
            return false
        }
        guard PQconsumeInput(handle) == 1 else {
            return false
        }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Whether the connection can go back to the pool after a call: open and outside any transaction.
    var isReusable: Bool {
        PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Runs a prepared statement (preparing it first on this connection).
    ///
    /// - Parameters:
    ///   - statement: The statement.
    ///   - parameters: Its parameters as text (`nil` is SQL `NULL`).
    /// - Returns: The result rows (empty for a statement without rows).
    /// - Throws: ``IAPError``: `invalidArgument` for a parameter holding a NUL character (PostgreSQL text
    ///   cannot), `storageUnavailable` when the connection is lost, `storageFailure` for any other error.
    @discardableResult
    func execute(_ statement: PostgresStatement, _ parameters: [String?] = []) throws -> PostgresResult {
        try prepare(statement, parameterCount: parameters.count)
        return try withParameters(parameters) { values in
            let result = PostgresResult(
                PQexecPrepared(handle, statement.name, Int32(values.count), values, nil, nil, 0)
            )
            try check(result, statement: statement.name)
            return result
        }
    }

    /// Runs parameterless commands (`BEGIN`, `SAVEPOINT ...`) and then a prepared statement, in one round trip
    /// (libpq's pipeline mode, libpq 14 or later).
    ///
    /// - Parameters:
    ///   - commands: The commands, constants of this module, run in order before the statement.
    ///   - statement: The statement.
    ///   - parameters: Its parameters.
    /// - Returns: The statement's result.
    /// - Throws: ``IAPError`` as ``execute(_:_:)``, for the first command or statement that failed (the server
    ///   skipped the rest). What was opened stays open: the caller rolls back.
    func execute(
        after commands: [StaticString],
        _ statement: PostgresStatement,
        _ parameters: [String?]
    ) throws -> PostgresResult {
        try prepare(statement, parameterCount: parameters.count)
        let results = try withParameters(parameters) { values -> [PostgresResult] in
            guard PQenterPipelineMode(handle) == 1 else {
                throw IAPError(
                    .storageFailure,
                    "libpq could not enter pipeline mode: \(redactor.redact(Self.trimmed(PQerrorMessage(handle))))"
                )
            }
            defer { PQexitPipelineMode(handle) }
            for command in commands {
                guard PQsendQueryParams(handle, command.description, 0, nil, nil, nil, nil, 0) == 1 else {
                    throw lostOrFailed(command.description)
                }
            }
            guard PQsendQueryPrepared(handle, statement.name, Int32(values.count), values, nil, nil, 0) == 1,
                PQpipelineSync(handle) == 1
            else {
                throw lostOrFailed(statement.name)
            }
            return try pipelineResults(count: commands.count + 1)
        }
        for (command, result) in zip(commands, results) {
            try check(result, statement: command.description)
        }
        try check(results[commands.count], statement: statement.name)
        return results[commands.count]
    }

    /// Commits the open transaction.
    ///
    /// - Throws: ``IAPError``: `storageUnavailable` when the connection was lost (whether the commit landed is
    ///   unknown); `storageFailure` when the server rolled the transaction back instead (a statement in it had
    ///   failed, or a deferred constraint or a serialization check failed at commit): nothing of it is kept.
    func commit() throws {
        let result = try execute(sql: "COMMIT")
        guard result.commandStatus == "COMMIT" else {
            throw IAPError(
                .storageFailure,
                "PostgreSQL rolled the transaction back instead of committing it (\(result.commandStatus)): a "
                    + "statement in it had failed"
            )
        }
    }

    /// Rolls the open transaction back, if there is one and the connection still works (when it does not, the
    /// server rolls back by itself).
    func rollback() {
        if PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) != PQTRANS_IDLE {
            _ = try? execute(sql: "ROLLBACK")
        }
    }

    /// Whether a statement of the open transaction failed, so that it can only roll back.
    var isTransactionFailed: Bool {
        PQtransactionStatus(handle) == PQTRANS_INERROR
    }

    /// Whether the connection to the server still works.
    var isOpen: Bool {
        PQstatus(handle) == CONNECTION_OK
    }

    /// Whether no transaction is open.
    var isIdle: Bool {
        PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether a transaction is open and usable.
    var isInTransaction: Bool {
        PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_INTRANS
    }

    /// Runs a statement whose text comes from outside this module (a transactional fulfillment hook's), with its
    /// parameters as values: prepared once per connection and text (up to a limit, then run unprepared).
    ///
    /// - Parameters:
    ///   - sql: One SQL statement (PostgreSQL refuses several in one text here).
    ///   - parameters: Its parameters as text (`nil` is SQL `NULL`).
    /// - Returns: The result.
    /// - Throws: ``IAPError`` as ``execute(_:_:)``.
    func execute(text sql: String, _ parameters: [String?]) throws -> PostgresResult {
        guard !sql.utf8.contains(0) else {
            throw IAPError(.invalidArgument, "SQL text cannot hold a NUL character")
        }
        var name = hookStatements[sql]
        if name == nil, hookStatements.count < Self.hookStatementLimit {
            let newName = "iap_hook_\(hookStatements.count)"
            let result = PostgresResult(PQprepare(handle, newName, sql, Int32(parameters.count), nil))
            try check(result, statement: "a statement of the fulfillment hook")
            hookStatements[sql] = newName
            name = newName
        }
        return try withParameters(parameters) { values in
            let result =
                if let name {
                    PostgresResult(PQexecPrepared(handle, name, Int32(values.count), values, nil, nil, 0))
                } else {
                    PostgresResult(PQexecParams(handle, sql, Int32(values.count), nil, values, nil, nil, 0))
                }
            try check(result, statement: "a statement of the fulfillment hook")
            return result
        }
    }

    private func prepare(_ statement: PostgresStatement, parameterCount: Int) throws {
        if !prepared.contains(statement.name) {
            let result = PostgresResult(PQprepare(handle, statement.name, statement.sql, Int32(parameterCount), nil))
            try check(result, statement: statement.name)
            prepared.insert(statement.name)
        }
    }

    /// Reads the results of `count` queries sent in pipeline mode and the sync point after them: the first result
    /// of each query (a failed query's error, or `PGRES_PIPELINE_ABORTED` for those after it).
    private func pipelineResults(count: Int) throws -> [PostgresResult] {
        var results: [PostgresResult] = []
        for _ in 0..<count {
            guard let first = PQgetResult(handle) else {
                throw lostOrFailed("a pipelined statement")
            }
            results.append(PostgresResult(first))
            // Each query's results end with a null pointer.
            while let more = PQgetResult(handle) {
                PQclear(more)
            }
        }
        // The sync point's own result, which no null pointer follows.
        guard let sync = PQgetResult(handle) else {
            throw lostOrFailed("the end of a pipeline")
        }
        let status = PQresultStatus(sync)
        PQclear(sync)
        guard status == PGRES_PIPELINE_SYNC else {
            throw lostOrFailed("the end of a pipeline")
        }
        return results
    }

    /// The error of a call libpq refused or a connection that broke while sending or receiving.
    private func lostOrFailed(_ what: String) -> IAPError {
        let message = redactor.redact(Self.trimmed(PQerrorMessage(handle)))
        if PQstatus(handle) != CONNECTION_OK {
            prepared.removeAll()
            hookStatements.removeAll()
            return IAPError(
                .storageUnavailable,
                "the connection to PostgreSQL was lost: \(message)",
                isRetryable: true
            )
        }
        return IAPError(.storageFailure, "PostgreSQL failed at \(what): \(message)")
    }

    /// Runs one statement that takes no parameters and is not worth preparing (schema changes, `BEGIN`).
    ///
    /// - Parameter sql: One SQL statement, a constant of this module (never built from input).
    /// - Throws: ``IAPError`` as ``execute(_:_:)``.
    @discardableResult
    func execute(sql: StaticString) throws -> PostgresResult {
        let text = sql.description
        let result = PostgresResult(PQexecParams(handle, text, 0, nil, nil, nil, nil, 0))
        try check(result, statement: text)
        return result
    }

    /// Runs a schema statement whose text names the schema (identifiers cannot be parameters); the schema name
    /// was validated to be a plain lower-case identifier before it got here.
    @discardableResult
    func execute(ddl: String) throws -> PostgresResult {
        let result = PostgresResult(PQexecParams(handle, ddl, 0, nil, nil, nil, nil, 0))
        try check(result, statement: ddl)
        return result
    }

    /// Runs `body` in a transaction: `COMMIT` when it returns, `ROLLBACK` when it throws.
    func transaction<Value>(_ body: () throws -> Value) throws -> Value {
        try execute(sql: "BEGIN")
        let value: Value
        do {
            value = try body()
        } catch {
            rollback()
            throw error
        }
        try commit()
        return value
    }

    // MARK: Errors

    private func check(_ result: PostgresResult, statement: String) throws {
        switch result.status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return
        default:
            break
        }
        let message = redactor.redact(result.errorMessage ?? Self.trimmed(PQerrorMessage(handle)))
        if PQstatus(handle) != CONNECTION_OK {
            prepared.removeAll()
            hookStatements.removeAll()
            throw IAPError(.storageUnavailable, "the connection to PostgreSQL was lost: \(message)", isRetryable: true)
        }
        let state = result.sqlState ?? "?????"
        switch state {
        case "57014":
            throw IAPError(
                .storageFailure,
                "PostgreSQL cancelled the statement (statement_timeout): \(message)",
                isRetryable: true
            )
        case "40001", "40P01", "55P03", "53300":
            throw IAPError(
                .storageFailure,
                "PostgreSQL asked to retry (SQLSTATE \(state)): \(message)",
                isRetryable: true
            )
        case "22P05", "22021":
            throw IAPError(.invalidArgument, "PostgreSQL cannot store this text (a NUL character?): \(message)")
        case "57P01", "57P02", "57P03":
            throw IAPError(
                .storageUnavailable,
                "PostgreSQL is shutting down or starting (SQLSTATE \(state)): \(message)",
                isRetryable: true
            )
        default:
            throw IAPError(.storageFailure, "PostgreSQL failed (SQLSTATE \(state)): \(message)")
        }
    }

    private static func connectionError(_ message: String) -> IAPError {
        let lowered = message.lowercased()
        let refusedCredentials = [
            "authentication failed", "no pg_hba.conf entry", "password", "role \"",
        ].contains { lowered.contains($0) }
        if refusedCredentials {
            return IAPError(.storageAuthenticationFailed, "PostgreSQL refused the credentials: \(message)")
        }
        return IAPError(.storageUnavailable, "cannot connect to PostgreSQL: \(message)", isRetryable: true)
    }

    static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else {
            return "no message"
        }
        var text = Substring(String(cString: message))
        while let last = text.last, last.isWhitespace {
            text = text.dropLast()
        }
        return String(text)
    }

    /// Hands libpq the parameters as NUL-terminated C strings.
    private func withParameters<Value>(
        _ parameters: [String?],
        _ body: ([UnsafePointer<CChar>?]) throws -> Value
    ) throws -> Value {
        for case let parameter? in parameters where parameter.utf8.contains(0) {
            throw IAPError(.invalidArgument, "PostgreSQL text cannot hold a NUL character; got \"\(parameter)\"")
        }
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer {
            for copy in copies {
                free(copy)
            }
        }
        return try body(copies.map { $0.map { UnsafePointer($0) } })
    }
}
