import IAPCore

/// The database connection a ``PostgresTransactionalFulfillmentHook`` runs its statements on: inside the
/// transaction that writes the ledger entry, so that what the hook writes commits together with the entry.
///
/// It runs one parameterised statement at a time: the SQL text is a constant of your code, every value travels
/// as a parameter (`$1`, `$2`, ...), and a statement is prepared once per connection, then reused. It is valid
/// only during the hook's call; afterwards every call throws. The transaction belongs to the store: a statement
/// that would end it or change the session for later users of the pooled connection (`BEGIN`, `COMMIT`,
/// `ROLLBACK`, `SAVEPOINT`, `SET` without `LOCAL`, `RESET`, `DISCARD`, ...) is refused with `invalidArgument`.
///
/// The connection's `search_path` is the ledger's schema, so name your tables with their schema
/// (`shop.wallets`). A statement that fails leaves the transaction failed: throw from the hook (the ledger's
/// write is rolled back with it, and the pipeline retries later); a hook that returns after a failed statement
/// is treated as failed all the same.
public final class PostgresTransactionConnection {
    private let connection: PostgresConnection
    private var isOpen = true

    init(_ connection: PostgresConnection) {
        self.connection = connection
    }

    /// Ends the hook's use of the connection: later calls throw.
    func close() {
        isOpen = false
    }

    /// Runs one SQL statement in the ledger's transaction.
    ///
    /// ```swift
    /// try connection.execute(
    ///     "UPDATE shop.wallets SET coins = coins + $2 WHERE user_id = $1",
    ///     [delivery.userId, String(delivery.units)]
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - sql: One statement, with `$1`, `$2`, ... where the parameters go. Never build it from input: pass values
    ///     as parameters.
    ///   - parameters: The values, as text in PostgreSQL's input syntax (`String(42)`, `"true"`); `nil` is `NULL`.
    ///     PostgreSQL infers each parameter's type from where it stands; cast where it cannot (`$2::bigint`).
    /// - Returns: The rows, and the number of rows the statement affected.
    /// - Throws: ``IAPError``: `invalidArgument` for a statement that would end the transaction or change the
    ///   session, or after the hook's call ended; `storageFailure` (with the SQLSTATE) when PostgreSQL refused
    ///   the statement; `storageUnavailable` when the connection was lost.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws -> PostgresRows {
        guard isOpen else {
            throw IAPError(
                .invalidArgument,
                "the transaction of this fulfillment ended: a PostgresTransactionConnection is valid only during the "
                    + "hook's call"
            )
        }
        if let keyword = Self.refusedKeyword(in: sql) {
            throw IAPError(
                .invalidArgument,
                "a fulfillment hook cannot run \(keyword): the transaction and the session belong to the ledger's store"
            )
        }
        let result = try connection.execute(text: sql, parameters)
        var columns: [String] = []
        for column in 0..<result.columnCount {
            columns.append(result.columnName(column))
        }
        var rows: [[String?]] = []
        rows.reserveCapacity(result.count)
        for row in 0..<result.count {
            rows.append((0..<columns.count).map { result.string(row, $0) })
        }
        return PostgresRows(columns: columns, rows: rows, affectedRows: result.affectedRows)
    }

    /// The first keyword of a statement that would end the store's transaction or change the pooled connection's
    /// session, or `nil` for any other statement.
    static func refusedKeyword(in sql: String) -> String? {
        let words = leadingWords(of: sql, count: 2)
        guard let first = words.first else {
            return nil
        }
        let endsTransaction: Set<String> = [
            "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE", "PREPARE",
        ]
        let changesSession: Set<String> = ["RESET", "DISCARD", "LISTEN", "UNLISTEN", "LOAD", "DEALLOCATE"]
        if endsTransaction.contains(first) || changesSession.contains(first) {
            return first
        }
        if first == "SET" {
            // SET LOCAL, SET TRANSACTION and SET CONSTRAINTS end with the transaction; any other SET outlives it.
            let second = words.count > 1 ? words[1] : ""
            return ["LOCAL", "TRANSACTION", "CONSTRAINTS"].contains(second) ? nil : "SET \(second)"
        }
        return nil
    }

    /// The first words of a statement, upper-cased, after white space and comments.
    private static func leadingWords(of sql: String, count: Int) -> [String] {
        let bytes = Array(sql.utf8)
        var index = 0
        var words: [String] = []
        while index < bytes.count, words.count < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t")
                || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\u{0C}")
            {
                index += 1
            } else if byte == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") {
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") {
                    index += 1
                }
            } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                // Block comments nest in PostgreSQL.
                var depth = 0
                repeat {
                    if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "/"), bytes[index + 1] == UInt8(ascii: "*")
                    {
                        depth += 1
                        index += 2
                    } else if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "*"),
                        bytes[index + 1] == UInt8(ascii: "/")
                    {
                        depth -= 1
                        index += 2
                    } else {
                        index += 1
                    }
                } while depth > 0 && index < bytes.count
            } else if (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") {
                var word: [UInt8] = []
                while index < bytes.count, (bytes[index] | 0x20) >= UInt8(ascii: "a"),
                    (bytes[index] | 0x20) <= UInt8(ascii: "z")
                {
                    word.append(bytes[index] & ~0x20)
                    index += 1
                }
                words.append(String(decoding: word, as: UTF8.self))
            } else {
                // Anything else (a parenthesis, a quote): no keyword follows that matters here.
                break
            }
        }
        return words
    }
}
