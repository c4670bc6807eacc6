import Foundation
import IAPCore
import IAPStoragePostgres
import IAPTestSupport
import Testing

/// The PostgreSQL password from outside: kept off the command line (a file, `PGPASSWORD`, `~/.pgpass`), and never
/// printed, whatever is wrong with the URL or the login.
@Suite(
    "iap and the PostgreSQL password",
    .enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason)
)
struct PostgresPasswordProcessTests {
    typealias CLI = CommandLineContractTests

    /// The test server's URL without its password, its password, and a ledger schema made for the test.
    struct Server {
        let bare: String
        let password: String
        let host: String
        let port: Int
        let schema = PostgresTestServer.freshSchema()
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-pw-\(UUID().uuidString)")

        init() async throws {
            let url = try PostgresTestServer.requireURL()
            guard var parts = URLComponents(string: url), let host = parts.host, let port = parts.port,
                let password = parts.password
            else {
                throw IAPError(.invalidConfiguration, "IAP_TEST_POSTGRES_URL has no host, port and password")
            }
            parts.password = nil
            bare = try #require(parts.string)
            self.password = password
            self.host = host
            self.port = port
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            await (try PostgresTestServer.store(schema: schema)).close()
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
            _ = try? PostgresTestServer.sql("DROP SCHEMA \(schema) CASCADE")
        }

        /// A private file holding `text`.
        func file(_ name: String, _ text: String) throws -> String {
            let path = directory.appending(path: name).path
            try Data(text.utf8).write(to: URL(filePath: path))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            return path
        }

        /// `iap ledger stats` on the test ledger, with no password anywhere but where the caller puts it.
        func stats(_ extra: [String], url: String? = nil, environment: [String: String?] = [:]) async throws -> CLI.Run
        {
            var environment = environment
            for name in ["PGPASSWORD", "PGPASSFILE"] where environment[name] == nil {
                environment[name] = .some(nil)
            }
            // No ~/.pgpass of the user running the tests.
            environment["HOME"] = directory.path
            return try await CLI.iap(
                ["ledger", "stats", "--database", url ?? bare, "--schema", schema] + extra,
                environment: environment
            )
        }
    }

    @Test func thePasswordCanComeFromAFilePGPASSWORDOrAPasswordFileOfLibpq() async throws {
        let server = try await Server()
        defer { server.remove() }
        let without = try await server.stats([])
        #expect(without.status == 1)
        #expect(without.stderrLines.first?.hasPrefix("error: storageAuthenticationFailed: ") == true)

        let file = try server.file("password", server.password + "\n")
        let fromFile = try await server.stats(["--database-password-file", file])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")

        let fromEnvironment = try await server.stats([], environment: ["PGPASSWORD": server.password])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")

        let pgpass = try server.file("pgpass", "\(server.host):\(server.port):*:*:\(server.password)\n")
        let fromPGPASSFILE = try await server.stats([], environment: ["PGPASSFILE": pgpass])
        #expect(fromPGPASSFILE.status == 0, "\(fromPGPASSFILE.stderr)")

        // Given twice (the URL and the file), or a file that holds nothing: a usage error.
        let twice = try await server.stats(
            ["--database-password-file", file],
            url: try PostgresTestServer.requireURL()
        )
        #expect(twice.status == 2)
        #expect(!twice.stderr.contains(server.password + "@"))
        let empty = try await server.stats(["--database-password-file", try server.file("empty", "\n")])
        #expect(empty.status == 2)
        let stray = try await CLI.iap([
            "ledger", "stats", "--data", server.directory.path, "--database-password-file", file,
        ])
        #expect(stray.status == 2)
    }

    @Test func noMessageShowsThePasswordOfAMalformedURLOrARefusedLogin() async throws {
        let server = try await Server()
        defer { server.remove() }
        let cases: [(String, String, Int32)] = [
            ("postgres://iap:S3cretPW%zz@\(server.host):\(server.port)/postgres", "S3cretPW", 2),
            ("postgres://iap:S3cretPW-ipv6@[::1/postgres", "S3cretPW-ipv6", 2),
            ("postgres://iap:WrongPW-S3cret@\(server.host):\(server.port)/postgres", "WrongPW-S3cret", 1),
        ]
        for (url, secret, status) in cases {
            let run = try await server.stats([], url: url)
            #expect(run.status == status, "\(url): \(run.stderr)")
            #expect(!run.stderr.contains(secret) && !run.stdout.contains(secret), "\(run.stderr)")
        }
        let wrongFile = try server.file("wrong", "WrongPW-inFile\n")
        let refused = try await server.stats(["--database-password-file", wrongFile])
        #expect(refused.status == 1)
        #expect(refused.stderrLines.first?.hasPrefix("error: storageAuthenticationFailed: ") == true)
        #expect(!refused.stderr.contains("WrongPW-inFile"))
    }

    @Test func theHelpSaysToKeepThePasswordOffTheCommandLine() async throws {
        for command in [["ledger", "stats"], ["support", "lookup-order"], ["support", "audit", "verify"]] {
            let help = try await CLI.iap(command + ["--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("--database-password-file FILE"), "\(command)")
            #expect(help.stdout.contains("/proc/PID/cmdline"), "\(command)")
        }
    }
}
