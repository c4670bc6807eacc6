/// What a statement run by a ``PostgresTransactionConnection`` returned: its rows, values as text.
public struct PostgresRows: Sendable, Hashable {
    /// The column names, in order.
    public let columns: [String]
    /// The rows; each holds one value per column, as text in PostgreSQL's output syntax, `nil` for `NULL`.
    public let rows: [[String?]]
    /// The rows an `INSERT`, `UPDATE`, `DELETE`, `MERGE` or `SELECT` affected (returned, for `SELECT`); 0 for other
    /// statements.
    public let affectedRows: Int

    /// The number of rows returned.
    public var count: Int {
        rows.count
    }

    /// A value by row and column name, or `nil` for `NULL` or when there is no such row or column.
    ///
    /// - Parameters:
    ///   - row: The row's index.
    ///   - column: The column's name.
    /// - Returns: The value as text.
    public func value(_ row: Int, _ column: String) -> String? {
        guard rows.indices.contains(row), let index = columns.firstIndex(of: column) else {
            return nil
        }
        return rows[row][index]
    }
}
