import Foundation
import IAPCore

/// The PostgreSQL server the tests run against: `IAP_TEST_POSTGRES_URL` (`Scripts/postgres-server.sh start`
/// prints one). Without it the suites are skipped, except under CI (`CI` set), where they fail.
enum PostgresTestServer {
    static let url = ProcessInfo.processInfo.environment["IAP_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    static var isRequired: Bool {
        let ci = ProcessInfo.processInfo.environment["CI"] ?? ""
        return !ci.isEmpty && ci != "false" && ci != "0"
    }

    /// Whether the suites run: a server is given, or CI requires one (and the tests then fail without it).
    static let isConfigured = url != nil || isRequired

    static func requireURL() throws -> String {
        guard let url else {
            throw IAPError(
                .invalidConfiguration,
                "CI is set but IAP_TEST_POSTGRES_URL is not: the PostgreSQL tests need a server (Scripts/postgres-server.sh)"
            )
        }
        return url
    }

    /// A schema name no other test uses.
    static func freshSchema() -> String {
        "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }
}
