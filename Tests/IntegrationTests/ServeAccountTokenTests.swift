import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// `iap serve --token-ownership derived --token-secret-file FILE` and `POST /iap/v1/users/{userId}/account-tokens`.
@Suite("iap serve: derived and pre-registered appAccountTokens", .serialized)
struct ServeAccountTokenTests {
    typealias CLI = CommandLineContractTests

    static let namespace = UUID(uuidString: "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10")!

    /// Writes the namespace file, private as every secret file.
    static func namespaceFile(in directory: URL, contents: String = namespace.uuidString + "\n") throws -> URL {
        let file = directory.appending(path: "token-namespace.secret")
        try Data(contents.utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        return file
    }

    static func token(_ userId: String) -> String {
        AppAccountToken.derive(from: userId, namespace: namespace).uuidString.lowercased()
    }

    @Test func aTokenIsPreRegisteredOnlyForTheUserItWasDerivedFromAndAPurchaseWithAnotherUsersTokenIsRefused()
        async throws
    {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            [
                "--port", "0", "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                try emulator.saveCatalog().path, "--ledger-only", "--token-ownership", "derived",
                "--token-secret-file", try Self.namespaceFile(in: emulator.directory).path,
            ] + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }
        let service = ServeProcess.serviceToken
        func register(_ userId: String, _ body: String, bearer: String? = service) async throws -> HTTPResponse {
            try await server.send("POST", "/iap/v1/users/\(userId)/account-tokens", bearer: bearer, body: body)
        }
        let alice = Self.token("alice")

        let bound = try await register("alice", #"{"appAccountToken":"\#(alice.uppercased())"}"#)
        #expect(bound.status == 201, "\(String(decoding: bound.body, as: UTF8.self))")
        #expect(try ServeCommandTests.object(bound)["appAccountToken"] as? String == alice)
        #expect(try await register("alice", #"{"appAccountToken":"\#(alice)"}"#).status == 200)
        // Bound to alice: another user's, who is not named.
        let taken = try await register("mallory", #"{"appAccountToken":"\#(alice)"}"#)
        #expect(taken.status == 409)
        #expect(!String(decoding: taken.body, as: UTF8.self).contains("alice"))
        // Derived from grace, whom nobody registered yet: refused to mallory, and not bound.
        let stolen = try await register("mallory", #"{"appAccountToken":"\#(Self.token("grace"))"}"#)
        #expect(stolen.status == 422)
        #expect(try ServeCommandTests.object(stolen)["code"] as? String == "ownershipConflict")
        #expect(try await register("grace", #"{"appAccountToken":"\#(Self.token("grace"))"}"#).status == 201)
        #expect(try await register("bob", #"{"appAccountToken":"\#(UUID().uuidString)"}"#).status == 422)
        #expect(try await register("bob", #"{"appAccountToken":"not-a-uuid"}"#).status == 400)
        #expect(try await register("bob", "[]").status == 400)
        #expect(try await register("bob", #"{"appAccountToken":"\#(Self.token("bob"))"}"#).status == 201)
        #expect(
            try await register(
                "bob",
                #"{"appAccountToken":"\#(Self.token("bob"))"}"#,
                bearer: ServeProcess.userToken("bob")
            )
            .status == 401
        )

        // A purchase made with dave's derived token, which nobody bound: mallory cannot claim it, dave can.
        let purchase = try await emulator.purchase("premium", account: "dave", token: Self.token("dave"))
        let claimed = try await server.submit(purchase.signedTransaction, as: "mallory")
        #expect(claimed.status == 409, "\(String(decoding: claimed.body, as: UTF8.self))")
        let owned = try await server.submitUntilFinished(purchase.signedTransaction, as: "dave")
        #expect(owned.status == 200, "\(String(decoding: owned.body, as: UTF8.self))")
    }

    @Test func aTokenBoundToAnotherUserIsRefusedWithoutNamingThemWhenOwnershipIsFirstClaim() async throws {
        let emulator = try await EmulatorProcess.start()
        defer { emulator.stop() }
        let root = try await emulator.saveRootCertificate()
        let arguments =
            [
                "--port", "0", "--data", emulator.directory.appending(path: "ledger").path, "--catalog",
                try emulator.saveCatalog().path, "--ledger-only",
            ] + emulator.commandOptions(urlOption: "--api-url", root: root) + ["--reconcile-every", "off"]
        let server = try await ServeProcess.start(arguments, directory: emulator.directory)
        defer { server.stop() }
        let token = UUID().uuidString
        func register(_ userId: String) async throws -> HTTPResponse {
            try await server.send(
                "POST",
                "/iap/v1/users/\(userId)/account-tokens",
                bearer: ServeProcess.serviceToken,
                body: #"{"appAccountToken":"\#(token)"}"#
            )
        }
        #expect(try await register("erin").status == 201)
        let conflict = try await register("frank")
        #expect(conflict.status == 409)
        #expect(!String(decoding: conflict.body, as: UTF8.self).contains("erin"))
        // The pre-registered token makes erin's purchase hers before anyone submits it.
        let purchase = try await emulator.purchase("premium", account: "erin", token: token.lowercased())
        #expect(try await server.submit(purchase.signedTransaction, as: "frank").status == 409)
    }

    @Test func derivedOwnershipNeedsANamespaceFileThatHoldsAUUID() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appending(path: "service.token")
        try Data("a-service-token-of-32-bytes-long\n".utf8).write(to: secret)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret.path)
        let base = [
            "serve", "--port", "0", "--data", directory.appending(path: "ledger").path, "--bundle-id",
            "com.example.app",
            "--environment", "Sandbox", "--ledger-only", "--user-jwt-secret-file", secret.path, "--service-token-file",
            secret.path,
        ]
        let missing = try await CLI.iap(base + ["--token-ownership", "derived"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("--token-secret-file"))
        let notUUID = try Self.namespaceFile(in: directory, contents: "not-a-uuid-but-a-secret\n")
        let bad = try await CLI.iap(base + ["--token-ownership", "derived", "--token-secret-file", notUUID.path])
        #expect(bad.status == 2)
        #expect(!bad.stderr.contains("not-a-uuid-but-a-secret"))
        let unknown = try await CLI.iap(base + ["--token-ownership", "anyone"])
        #expect(unknown.status == 2)
    }
}
