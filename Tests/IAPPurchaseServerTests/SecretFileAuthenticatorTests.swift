import Foundation
import IAPCore
import IAPCrypto
import IAPHTTPServer
import IAPPurchaseServer
import Testing

/// The authenticators read their secrets from files with `iap serve`'s rules (`SecretFile`), and refuse a short secret
/// however it is given as bytes.
@Suite("Authenticators from secret files")
struct SecretFileAuthenticatorTests {
    static let secret = "9b1e6c3f0a8d4e7b2c5f1a0d3e6b9c8f"

    /// A fresh directory with a file `name` holding `text` at `mode`; removed after `body`.
    static func withSecret(_ text: String, mode: Int, _ body: (URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "secret")
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        try await body(file)
    }

    /// A signed user token for `user` under `secret`.
    static func token(_ user: String, secret: String) throws -> String {
        let now = Int(SystemClock().now.timeIntervalSince1970)
        let header = Base64.encodeURL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims = Base64.encodeURL(Array(#"{"sub":"\#(user)","iat":\#(now),"exp":\#(now + 600)}"#.utf8))
        let code = try HMACSHA256(key: Array(secret.utf8)).authenticationCode(for: Array((header + "." + claims).utf8))
        return header + "." + claims + "." + Base64.encodeURL(code)
    }

    @Test func aSecretFileMadeWithOpensslRandIsReadWithoutItsNewline() async throws {
        // `openssl rand -hex 32 > FILE` writes the secret and a newline.
        try await Self.withSecret(Self.secret + "\n", mode: 0o600) { file in
            let users = try HS256UserAuthenticator(secretFile: file, keyedBy: HMACSHA256.init(key:))
            #expect(try users.verify(try Self.token("alice", secret: Self.secret)) == "alice")
            let service = try ServiceTokenAuthenticator(tokenFile: file)
            let request = try HTTPServerRequest(
                method: "GET",
                target: "/iap/v1/users/alice/entitlements",
                version: "HTTP/1.1",
                headers: ["Authorization": "Bearer \(Self.secret)"],
                body: Data(),
                remoteAddress: "127.0.0.1"
            )
            #expect(service.isAuthorized(request))
        }
    }

    @Test func aSecretFileItsGroupOrOthersMayReadIsRefused() async throws {
        try await Self.withSecret(Self.secret + "\n", mode: 0o644) { file in
            let users = try #require(throws: IAPError.self) {
                try HS256UserAuthenticator(secretFile: file, keyedBy: HMACSHA256.init(key:))
            }
            #expect(users.code == .invalidConfiguration)
            #expect(users.message.contains("chmod 600"))
            let service = try #require(throws: IAPError.self) { try ServiceTokenAuthenticator(tokenFile: file) }
            #expect(service.code == .invalidConfiguration)
            #expect(!users.message.contains(Self.secret) && !service.message.contains(Self.secret))
        }
    }

    @Test func aSecretShorterThanSixteenBytesIsRefusedHoweverItIsGiven() async throws {
        try await Self.withSecret("0123456789\n", mode: 0o600) { file in
            let fromFile = try #require(throws: IAPError.self) {
                try HS256UserAuthenticator(secretFile: file, keyedBy: HMACSHA256.init(key:))
            }
            #expect(fromFile.code == .invalidKey)
            #expect(fromFile.message.contains("at least 16 bytes"))
            #expect(!fromFile.message.contains("0123456789"))
            let fromBytes = try #require(throws: IAPError.self) {
                try HS256UserAuthenticator(secret: Array("0123456789".utf8), keyedBy: HMACSHA256.init(key:))
            }
            #expect(fromBytes.code == .invalidKey)
            let service = try #require(throws: IAPError.self) { try ServiceTokenAuthenticator(tokenFile: file) }
            #expect(service.code == .invalidKey)
        }
    }
}
