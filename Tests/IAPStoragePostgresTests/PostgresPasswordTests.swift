import Foundation
import IAPCore
import IAPStoragePostgres
import IAPTestSupport
import Testing

/// No PostgreSQL password reaches a message: not libpq's quotes of a URL it cannot parse, not a refused login, not a
/// description of the configuration; and a password kept apart from the URL, with any characters, works.
@Suite(.enabled(if: PostgresTestServer.isConfigured, PostgresTestServer.skipReason))
struct PostgresPasswordTests {
    /// The test server's host and port.
    static func server() throws -> (host: String, port: Int) {
        let url = try PostgresTestServer.requireURL()
        guard let parts = URLComponents(string: url), let host = parts.host, let port = parts.port else {
            throw IAPError(.invalidConfiguration, "IAP_TEST_POSTGRES_URL has no host and port")
        }
        return (host, port)
    }

    /// Opens a store and returns the error's message (and its code), failing the test if it opened.
    static func failure(_ configuration: PostgresEntitlementStore.Configuration) async -> IAPError? {
        do {
            let store = try await PostgresEntitlementStore(configuration: configuration)
            try? await store.dropSchema()
            Issue.record("the store opened with \(configuration)")
            return nil
        } catch let error as IAPError {
            return error
        } catch {
            Issue.record("not an IAPError: \(error)")
            return nil
        }
    }

    /// The forms of `secret` that must appear nowhere: as given, and each half (a libpq quote may cut it).
    static func expectNowhere(_ secret: String, in error: IAPError?, _ comment: Comment) {
        guard let error else { return }
        let text = "\(error) \(error.message) \(String(describing: error.underlying))"
        #expect(!text.contains(secret), comment)
        #expect(!text.contains(secret.prefix(6)), comment)
    }

    @Test func aMalformedURLIsRefusedWithoutQuotingItsPassword() async throws {
        let (host, port) = try Self.server()
        let cases: [(String, String)] = [
            // libpq: invalid percent-encoded token: "S3cretPW%zz"
            ("postgres://iap:S3cretPW%zz@\(host):\(port)/postgres", "S3cretPW"),
            // libpq: end of string reached when looking for matching "]" in IPv6 host address in URI: "<the URL>"
            ("postgres://iap:S3cretPW-ipv6@[::1/postgres", "S3cretPW-ipv6"),
            ("postgresql://iap:S3cretPW-ipv6@[]:5432/postgres", "S3cretPW-ipv6"),
            // A password in the query, next to a value libpq refuses.
            ("postgres://iap@\(host):\(port)/postgres?password=S3cretPW-query&sslmode=bogus", "S3cretPW-query"),
            ("postgres://iap@\(host):\(port)/postgres?password=S3cret%zzPW", "S3cret%zzPW"),
            // A connection string with a quoted password and a bad keyword.
            ("host=\(host) port=\(port) password='S3cret PW\\'quoted' bogus=1", "S3cret PW"),
            ("host=\(host) password=S3cretPW-unterminated 'open", "S3cretPW-unterminated"),
        ]
        for (url, secret) in cases {
            let error = await Self.failure(.init(url: url, connectTimeout: .seconds(2)))
            #expect(error?.code == .invalidConfiguration || error?.code == .storageUnavailable, "\(url)")
            Self.expectNowhere(secret, in: error, "\(url) → \(String(describing: error))")
        }
    }

    @Test func refusedCredentialsNameNoPasswordWhereverItCameFrom() async throws {
        let (host, port) = try Self.server()
        let inURL = await Self.failure(.init(url: "postgres://iap:WrongPW-S3cret@\(host):\(port)/postgres"))
        #expect(inURL?.code == .storageAuthenticationFailed)
        Self.expectNowhere("WrongPW-S3cret", in: inURL, "\(String(describing: inURL))")
        let apart = await Self.failure(
            .init(url: "postgres://iap@\(host):\(port)/postgres", password: "WrongPW-apart")
        )
        #expect(apart?.code == .storageAuthenticationFailed)
        Self.expectNowhere("WrongPW-apart", in: apart, "\(String(describing: apart))")
    }

    /// A password with every character a URL or a connection string treats specially, kept apart from the URL:
    /// it logs in; one character off, the refusal does not show it.
    @Test func aPasswordWithSpecialCharactersWorksApartFromTheURLAndPercentEncodedInIt() async throws {
        let (host, port) = try Self.server()
        let role = "pw_" + PostgresTestServer.freshSchema().dropFirst(2).prefix(12)
        let password = #"p@ss:w/rd%zz?#&='"\ é$1"#
        let sqlPassword = password.replacingOccurrences(of: "'", with: "''")
        try PostgresTestServer.sql(
            "CREATE ROLE \(role) LOGIN PASSWORD '\(sqlPassword)'; GRANT CREATE ON DATABASE postgres TO \(role)"
        )
        defer { _ = try? PostgresTestServer.sql("DROP OWNED BY \(role); DROP ROLE \(role)") }

        let schema = PostgresTestServer.freshSchema()
        let apart = PostgresEntitlementStore.Configuration(
            url: "postgres://\(role)@\(host):\(port)/postgres",
            schema: schema,
            password: password
        )
        let store = try await PostgresEntitlementStore(configuration: apart)
        #expect(!"\(store.configuration)".contains("p@ss"))
        var dumped = ""
        dump(store.configuration, to: &dumped)
        #expect(!dumped.contains("p@ss") && dumped.contains("***"))
        await store.close()

        let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let inURL = PostgresEntitlementStore.Configuration(
            url: "postgres://\(role):\(encoded)@\(host):\(port)/postgres",
            schema: schema
        )
        #expect(!"\(inURL)".contains(encoded) && !"\(inURL)".contains("p%40ss"))
        let again = try await PostgresEntitlementStore(configuration: inURL)
        try await again.dropSchema()

        var wrong = apart
        wrong.password = password + "x"
        let refused = await Self.failure(wrong)
        #expect(refused?.code == .storageAuthenticationFailed)
        Self.expectNowhere(password, in: refused, "\(String(describing: refused))")
    }

    @Test func aPasswordGivenTwiceIsAConfigurationError() async throws {
        let (host, port) = try Self.server()
        let twice = await Self.failure(
            .init(url: "postgres://iap:S3cretPW-one@\(host):\(port)/postgres", password: "S3cretPW-two")
        )
        #expect(twice?.code == .invalidConfiguration)
        Self.expectNowhere("S3cretPW-one", in: twice, "\(String(describing: twice))")
        Self.expectNowhere("S3cretPW-two", in: twice, "\(String(describing: twice))")
    }
}
