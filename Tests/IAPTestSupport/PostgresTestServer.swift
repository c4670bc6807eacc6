import CIAPLibPQ
import Foundation
import IAPCore
package import IAPStoragePostgres
package import Testing

/// The PostgreSQL server the tests run against: `IAP_TEST_POSTGRES_URL` (`Scripts/postgres-server.sh start`
/// prints one); without it, one the tests start themselves with that script (see `startedServer()`). When neither
/// is possible the suites are skipped, except under CI (`CI` set), where they fail.
package enum PostgresTestServer {
    package static let url: String? =
        ProcessInfo.processInfo.environment["IAP_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
        ?? startedServer()

    package static var isRequired: Bool {
        let ci = ProcessInfo.processInfo.environment["CI"] ?? ""
        return !ci.isEmpty && ci != "false" && ci != "0"
    }

    /// Starts a throw-away server with `Scripts/postgres-server.sh` on its own port when none is given and this is
    /// not CI, so that `swift test` covers PostgreSQL wherever the `postgresql` package is installed; a watcher
    /// stops the server when this test process ends. `nil` when the script cannot start one (the suites are
    /// skipped then), or when `IAP_TEST_POSTGRES_AUTOSTART=0`.
    package static func startedServer() -> String? {
        let environment = ProcessInfo.processInfo.environment
        guard !isRequired, environment["IAP_TEST_POSTGRES_AUTOSTART"] != "0" else { return nil }
        let script = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Scripts/postgres-server.sh")
        guard FileManager.default.isExecutableFile(atPath: script.path) else { return nil }
        var childEnvironment = environment
        childEnvironment["IAP_POSTGRES_PORT"] = environment["IAP_POSTGRES_PORT"] ?? "54349"
        let scratch = FileManager.default.temporaryDirectory.appending(path: "iap-postgres-start-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: scratch.appendingPathExtension("out"))
            try? FileManager.default.removeItem(at: scratch.appendingPathExtension("log"))
        }
        guard
            let process = try? ChildProcess(
                executable: script,
                arguments: ["start", "--stop-after", String(ProcessInfo.processInfo.processIdentifier)],
                logFile: scratch.appendingPathExtension("log"),
                environment: childEnvironment,
                output: .file(scratch.appendingPathExtension("out"))
            )
        else { return nil }
        // initdb and the first start take seconds; a script still running after two minutes is stuck.
        guard process.wait(timeout: .seconds(120)) else {
            process.kill()
            return nil
        }
        let data = (try? Data(contentsOf: scratch.appendingPathExtension("out"))) ?? Data()
        let url = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return process.terminationStatus == 0 && url.hasPrefix("postgres") ? url : nil
    }

    /// Whether the suites run: a server is given, or CI requires one (and the tests then fail without it).
    package static let isConfigured = url != nil || isRequired

    package static let skipReason: Comment =
        "needs PostgreSQL: no server could be started here (install the postgresql package), or export IAP_TEST_POSTGRES_URL=$(Scripts/postgres-server.sh start)"

    package static func requireURL() throws -> String {
        guard let url else {
            throw IAPError(
                .invalidConfiguration,
                "CI is set but IAP_TEST_POSTGRES_URL is not: the PostgreSQL tests need a server (Scripts/postgres-server.sh)"
            )
        }
        return url
    }

    /// A schema name no other test uses.
    package static func freshSchema() -> String {
        "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// A store on a fresh schema.
    package static func store(
        schema: String = freshSchema(),
        poolSize: Int = 4,
        groupCommit: PostgresGroupCommit? = PostgresGroupCommit()
    ) async throws -> PostgresEntitlementStore {
        try await PostgresEntitlementStore(
            configuration: .init(url: try requireURL(), schema: schema, poolSize: poolSize, groupCommit: groupCommit)
        )
    }

    /// A connection of its own, kept open across statements (to hold a lock while the store works).
    package final class HeldConnection {
        private let connection: OpaquePointer?

        package init(url: String) throws {
            connection = PQconnectdb(url)
            guard PQstatus(connection) == CONNECTION_OK else {
                let message = String(cString: PQerrorMessage(connection))
                PQfinish(connection)
                throw IAPError(.storageUnavailable, message)
            }
        }

        deinit {
            PQfinish(connection)
        }

        package func run(_ statement: String) throws {
            let result = PQexec(connection, statement)
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
                throw IAPError(.storageFailure, String(cString: PQresultErrorMessage(result)))
            }
        }
    }

    /// Runs one SQL statement outside the store (what an operator or another version would do), and returns
    /// the first column of each row.
    @discardableResult
    package static func sql(_ statement: String, url: String? = nil) throws -> [String] {
        let connection = PQconnectdb(try url ?? requireURL())
        defer { PQfinish(connection) }
        guard PQstatus(connection) == CONNECTION_OK else {
            throw IAPError(.storageUnavailable, String(cString: PQerrorMessage(connection)))
        }
        let result = PQexec(connection, statement)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            throw IAPError(.storageFailure, String(cString: PQresultErrorMessage(result)))
        }
        return (0..<PQntuples(result)).map { String(cString: PQgetvalue(result, $0, 0)) }
    }
}
