import CIAPLibPQ
import IAPCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The rows of one statement (`PGresult`), freed when the value goes away. Values arrive as text.
final class PostgresResult {
    private let handle: OpaquePointer?

    init(_ handle: OpaquePointer?) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    var status: ExecStatusType {
        guard let handle else {
            return PGRES_FATAL_ERROR
        }
        return PQresultStatus(handle)
    }

    /// The SQLSTATE of a failed statement.
    var sqlState: String? {
        guard let handle, let field = PQresultErrorField(handle, Int32(UInt8(ascii: "C"))) else {
            return nil
        }
        return String(cString: field)
    }

    /// The server's message for a failed statement.
    var errorMessage: String? {
        guard let handle else {
            return nil
        }
        let message = PostgresConnection.trimmed(PQresultErrorMessage(handle))
        return message.isEmpty ? nil : message
    }

    /// The number of rows.
    var count: Int {
        handle.map { Int(PQntuples($0)) } ?? 0
    }

    /// The number of columns.
    var columnCount: Int {
        handle.map { Int(PQnfields($0)) } ?? 0
    }

    /// The name of a column.
    func columnName(_ column: Int) -> String {
        guard let handle, let name = PQfname(handle, Int32(column)) else {
            return ""
        }
        return String(cString: name)
    }

    /// The command tag the server answered (`INSERT 0 1`, `COMMIT`, `ROLLBACK`, ...).
    var commandStatus: String {
        guard let handle, let tag = PQcmdStatus(handle) else {
            return ""
        }
        return String(cString: tag)
    }

    /// The rows an `INSERT`, `UPDATE`, `DELETE`, `MERGE` or `SELECT` affected, 0 for other commands.
    var affectedRows: Int {
        guard let handle, let text = PQcmdTuples(handle) else {
            return 0
        }
        return Int(String(cString: text)) ?? 0
    }

    /// Whether a value is SQL `NULL` (or out of range).
    func isNull(_ row: Int, _ column: Int) -> Bool {
        guard let handle, row < count else {
            return true
        }
        return PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// A value as text, or `nil` for `NULL`.
    func string(_ row: Int, _ column: Int) -> String? {
        guard let handle, !isNull(row, column), let value = PQgetvalue(handle, Int32(row), Int32(column)) else {
            return nil
        }
        return String(cString: value)
    }

    /// A value as bytes, or `nil` for `NULL`.
    func data(_ row: Int, _ column: Int) -> Data? {
        guard let handle, !isNull(row, column), let value = PQgetvalue(handle, Int32(row), Int32(column)) else {
            return nil
        }
        return Data(bytes: value, count: Int(PQgetlength(handle, Int32(row), Int32(column))))
    }

    /// A `bigint` value; throws `storageCorrupted` for a `NULL` or a value that is not an integer.
    func int64(_ row: Int, _ column: Int) throws -> Int64 {
        guard let text = string(row, column), let value = Int64(text) else {
            throw IAPError(
                .storageCorrupted,
                "PostgreSQL returned \(string(row, column) ?? "NULL") where an integer belongs"
            )
        }
        return value
    }
}
