/// A SQL statement with its name for `PQprepare`: the text is a constant; values travel as parameters.
struct PostgresStatement: Sendable {
    let name: String
    let sql: String
}
