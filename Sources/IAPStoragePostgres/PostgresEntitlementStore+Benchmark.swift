package import IAPCore

/// What `iap-bench store --database` measures besides the ledger's own calls: the server's settings, and the rate of
/// the smallest durable commit through the store's pool (the ceiling a delivery's commits are read against).
extension PostgresEntitlementStore {
    /// The server's settings of these names (`pg_settings`); a setting the role may not read is missing.
    ///
    /// - Parameter names: Setting names (`server_version`, `fsync`, `synchronous_commit`, ...).
    /// - Returns: The value of each (with its unit, as `SHOW` prints it).
    package func serverSettings(_ names: [String]) async throws -> [String: String] {
        try await pool.run(retryingOnLostConnection: true) { connection in
            var settings: [String: String] = [:]
            for name in names {
                // A setting the role may not read (data_directory, for one) is an error of its own: skip it.
                if let value = try? connection.execute(Self.setting, [name]).string(0, 0) {
                    settings[name] = value
                }
            }
            return settings
        }
    }

    /// Durable commits per second of the smallest write the ledger's tables see (a one-row update), from `writers`
    /// tasks at once through the pool, for about `duration`; each commit waits for its WAL flush as a delivery's
    /// do. The table `iap_bench_commits` is created in the store's schema (a benchmark's throw-away schema).
    ///
    /// - Parameters:
    ///   - writers: Concurrent writers (the pool should have as many connections).
    ///   - duration: How long to measure.
    /// - Returns: Commits per second.
    package func commitRate(writers: Int, duration: Duration) async throws -> Double {
        try await pool.run { connection in
            try connection.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS iap_bench_commits (writer integer PRIMARY KEY, commits bigint NOT NULL)
                    """
            )
            try connection.execute(
                sql: """
                    INSERT INTO iap_bench_commits SELECT g, 0 FROM generate_series(0, 63) AS g
                    ON CONFLICT (writer) DO NOTHING
                    """
            )
        }
        let began = ContinuousClock.now
        let deadline = began + duration
        let commits = try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var count = 0
                    while ContinuousClock.now < deadline {
                        try await self.pool.run { connection in
                            _ = try connection.execute(Self.benchCommit, [String(writer % 64)])
                        }
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(commits) / (ContinuousClock.now - began).timeInterval
    }

    /// Runs one statement written in this package's benchmark (a wallet table for the transactional figures).
    ///
    /// - Parameter sql: One statement without parameters, never built from input.
    package func executeForBenchmark(_ sql: String) async throws {
        _ = try await queryForBenchmark(sql)
    }

    /// Runs one query written in this package's benchmark, and returns the first column of each row.
    ///
    /// - Parameter sql: One statement without parameters, never built from input.
    /// - Returns: The values, as text.
    package func queryForBenchmark(_ sql: String) async throws -> [String?] {
        try await pool.run { connection in
            let result = try connection.execute(ddl: sql)
            return (0..<result.count).map { result.string($0, 0) }
        }
    }

    private static let setting = PostgresStatement(
        name: "iap_bench_setting",
        sql: "SELECT current_setting($1, true)"
    )

    private static let benchCommit = PostgresStatement(
        name: "iap_bench_commit",
        sql: "UPDATE iap_bench_commits SET commits = commits + 1 WHERE writer = $1::integer"
    )

    /// Runs one statement written in this package's benchmark with parameters, and returns the first column of each
    /// row.
    ///
    /// - Parameters:
    ///   - sql: One statement, never built from input; `$1`, `$2`, ... are its parameters.
    ///   - parameters: The parameters, as text.
    /// - Returns: The values, as text.
    package func queryForBenchmark(_ sql: String, _ parameters: [String?]) async throws -> [String?] {
        try await pool.run { connection in
            let result = try connection.execute(text: sql, parameters)
            return (0..<result.count).map { result.string($0, 0) }
        }
    }

    /// The JSON an insert stores in the `entry` column for `entry` (revision 1; the statement sets the sequence):
    /// what a benchmark that generates rows on the server starts from.
    ///
    /// - Parameter entry: The entry.
    /// - Returns: The JSON text.
    package static func storedJSONForBenchmark(_ entry: LedgerEntry) throws -> String {
        let (_, parameters) = try insertion(entry, nil)
        return parameters[8] ?? ""
    }
}
