import Foundation
import IAPCore
import IAPTestSupport
import Testing

/// `iap serve` and the ledger commands: a user is its bytes (an NFC and an NFD spelling of one name are two users),
/// a user id that could read as another is refused wherever it enters, and a body that names a member twice is refused.
@Suite("iap serve: a user is its bytes, ambiguous input refused")
struct ServeUserIdentityTests {
    typealias CLI = CommandLineContractTests

    static let composed = "m\u{00FC}ller"
    static let decomposed = "mu\u{0308}ller"

    /// A ledger-only server trusting `iap testdata`'s root, and `count` Sandbox purchases signed by it.
    static func start(count: Int) async throws -> (ServeProcess, [String], URL) {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-bytes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let root = directory.appending(path: "root.der").path
        let catalog = directory.appending(path: "catalog.json").path
        let made = try await ChildProcess.run(
            try EmulatorProcess.binary(),
            ["testdata", "transactions", "--count", String(count), "--root-out", root, "--catalog-out", catalog],
            timeout: .seconds(120)
        )
        try #require(made.status == 0, "\(String(decoding: made.standardError, as: UTF8.self))")
        let transactions = String(decoding: made.standardOutput, as: UTF8.self).split(separator: "\n").map(String.init)
        let server = try await ServeProcess.start(
            [
                "--port", "0", "--data", directory.appending(path: "ledger").path, "--bundle-id", "com.example.app",
                "--environment", "Sandbox", "--root", root, "--catalog", catalog, "--ledger-only",
            ],
            directory: directory
        )
        return (server, transactions, directory)
    }

    /// The error code of a submission's answer (`{"outcome": "rejected", "error": {"code": ...}}`).
    static func code(_ response: HTTPResponse) -> String? {
        ((try? ServeCommandTests.object(response))?["error"] as? [String: Any])?["code"] as? String
    }

    static func text(_ response: HTTPResponse) -> String {
        String(decoding: response.body, as: UTF8.self)
    }

    @Test func anNFCAndAnNFDSpellingOfOneNameAreTwoUsersInEveryEndpointAndCommand() async throws {
        let (server, transactions, directory) = try await Self.start(count: 2)
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = ServeProcess.serviceToken
        let first = try await server.submit(transactions[0], as: Self.composed)
        #expect(first.status == 200 && Self.text(first).contains(#""outcome":"delivered""#), "\(Self.text(first))")

        // The look-alike presenting that purchase is refused, never told it was delivered (and so never finishes it).
        let stolen = try await server.submit(transactions[0], as: Self.decomposed)
        #expect(stolen.status != 200, "\(Self.text(stolen))")
        #expect(!Self.text(stolen).contains("alreadyDelivered") && !Self.text(stolen).contains(#""finish":true"#))
        #expect(Self.code(stolen) == "ownershipConflict", "\(Self.text(stolen))")

        // Each reads only their own purchases.
        let theirs = try await server.send("GET", "/iap/v1/users/\(Self.decomposed)/history", bearer: service)
        #expect(theirs.status == 200)
        #expect((try ServeCommandTests.object(theirs)["items"] as? [Any])?.isEmpty == true, "\(Self.text(theirs))")
        let own = try await server.send("GET", "/iap/v1/users/\(Self.composed)/history", bearer: service)
        #expect((try ServeCommandTests.object(own)["items"] as? [Any])?.count == 1, "\(Self.text(own))")

        // The look-alike's own purchase is theirs. Its token is bound first, and the server's drain may take the
        // delivery meanwhile under load (the answer is then pending, finish false): the app submits again.
        var second = try await server.submit(transactions[1], as: Self.decomposed)
        for _ in 0..<20 where Self.text(second).contains(#""outcome":"pending""#) {
            try await Task.sleep(for: .milliseconds(250))
            second = try await server.submit(transactions[1], as: Self.decomposed)
        }
        #expect(second.status == 200, "\(Self.text(second))")
        #expect(
            Self.text(second).contains(#""outcome":"delivered""#)
                || Self.text(second).contains(#""outcome":"alreadyDelivered""#),
            "\(Self.text(second))"
        )
        server.stop()

        // The ledger commands agree, on the ledger the server wrote.
        let data = directory.appending(path: "ledger").path
        for (user, count) in [(Self.composed, 1), (Self.decomposed, 1)] {
            let history = try await CLI.iap(["ledger", "history", "--data", data, "--user", user, "--json"])
            #expect(history.status == 0, "\(history.stderr)")
            let items = try CLI.json(history.stdout)["items"] as? [Any]
            #expect(items?.count == count, "\(history.stdout)")
        }
        let check = try await CLI.iap(["ledger", "check", "--data", data])
        #expect(check.status == 0, "\(check.stderr)")
        // Told, escaped so that the two read apart.
        #expect(check.stdout.contains(#"mu\u{308}ller"#) || check.stderr.contains(#"mu\u{308}ller"#))
    }

    @Test func ambiguousBodiesAndUserIdsThatCouldReadAsAnotherAreRefused() async throws {
        let (server, transactions, directory) = try await Self.start(count: 1)
        defer {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        let service = ServeProcess.serviceToken
        let alice = try ServeProcess.userToken("alice")
        for body in [
            #"{"signedTransaction":"\#(transactions[0])","signedTransaction":"x"}"#,
            #"{"signedTransaction":"\#(transactions[0])","userId":"alice","user\u0049d":"mallory"}"#,
        ] {
            let answer = try await server.send("POST", "/iap/v1/transactions", bearer: alice, body: body)
            #expect(answer.status == 400, "\(Self.text(answer))")
            #expect(Self.code(answer) == "malformedRequest", "\(Self.text(answer))")
        }
        let token = UUID().uuidString.lowercased()
        let twice = try await server.send(
            "POST",
            "/iap/v1/users/alice/account-tokens",
            bearer: service,
            body: #"{"appAccountToken":"\#(token)","appAccountToken":"\#(UUID().uuidString)"}"#
        )
        #expect(twice.status == 400, "\(Self.text(twice))")

        for hidden in ["   ", "alice\u{202E}", "al\u{200D}ice", "alice\u{2028}", "\u{FEFF}alice"] {
            let asSubject = try await server.submit(transactions[0], as: hidden)
            #expect(asSubject.status == 401, "sub \(Array(hidden.unicodeScalars)): \(Self.text(asSubject))")
            let inPath = try await server.send("GET", "/iap/v1/users/\(hidden)/entitlements", bearer: service)
            #expect(inPath.status == 400, "path \(Array(hidden.unicodeScalars)): \(Self.text(inPath))")
        }
        // Nothing of it was recorded; the real user still can. Under load the HTTP client may send the submission
        // twice (libcurl sends a request again when a kept-alive connection closed under it), and the copy that finds
        // the first still being granted is answered 202 pending: the app submits again, as here.
        var real = try await server.submit(transactions[0], as: "alice")
        for _ in 0..<50 where real.status == 202 {
            try await Task.sleep(for: .milliseconds(200))
            real = try await server.submit(transactions[0], as: "alice")
        }
        #expect(real.status == 200, "\(Self.text(real))")

        let refused = try await CLI.iap([
            "ledger", "history", "--data", directory.appending(path: "ledger").path, "--user", "bob\u{202E}",
        ])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("U+202E"))
    }
}
