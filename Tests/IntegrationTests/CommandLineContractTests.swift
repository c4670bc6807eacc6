import Foundation
import IAPCore
import Testing

/// The `iap` tool's contracts, checked from outside as a script would: arguments in, exit status and
/// output lines out.
@Suite("iap command-line contracts")
struct CommandLineContractTests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String

        var stdoutLines: [String] {
            stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
        var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
    }

    static let repository = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let sample = repository.appending(
        path: "Sources/Examples/Samples/production-test-notification-2024-10-17.jws"
    )

    static func iap(_ arguments: [String], input: Data = Data()) throws -> Run {
        let process = Process()
        process.executableURL = try EmulatorProcess.binary()
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self)
        )
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func verifyPrintsThePayloadAndSaysWhichChecksItSkipped() throws {
        let full = try Self.iap([
            "verify", "--bundle-id", "com.nineton.taller", "--environment", "Production", "--app-apple-id",
            "6450284872", Self.sample.path,
        ])
        #expect(full.status == 0)
        #expect(full.stderr.isEmpty)
        let payload = try Self.json(full.stdout)
        #expect(payload["notificationType"] as? String == "TEST")
        #expect(payload["signedDate"] as? Int == 1_729_136_651_128)

        let bare = try Self.iap(["verify", Self.sample.path])
        #expect(bare.status == 0)
        #expect(bare.stderrLines.count == 3)
        #expect(bare.stderrLines.allSatisfy { $0.hasPrefix("note: ") })
    }

    @Test func aRejectionIsOneErrorLineAndExitOne() throws {
        let expired = try Self.iap([
            "verify", "--at", "now", "--bundle-id", "x", "--environment", "Production", "--app-apple-id", "1",
            Self.sample.path,
        ])
        #expect(expired.status == 1)
        #expect(expired.stdout.isEmpty)
        #expect(expired.stderrLines.count == 1)
        #expect(expired.stderrLines.first?.hasPrefix("error: certificateExpired: ") == true)

        let wrongApp = try Self.iap([
            "verify", "--bundle-id", "com.example.other", "--environment", "Production", "--app-apple-id", "6450284872",
            Self.sample.path,
        ])
        #expect(wrongApp.status == 1)
        #expect(wrongApp.stderrLines.last?.hasPrefix("error: bundleIdMismatch: ") == true)

        let garbage = try Self.iap(["verify", "-"], input: Data("not.a.jws".utf8))
        #expect(garbage.status == 1)
        #expect(garbage.stderrLines.last?.hasPrefix("error: malformedSignedData: ") == true)
    }

    @Test func usageErrorsExitTwo() throws {
        for arguments in [
            ["verify", "--environment", "Staging"], ["verify", "--at", "yesterday"], ["verify", "--kind", "receipt"],
            ["verify", "--unknown"], ["verify", "a", "b"], ["verify", "/no/such/file"], ["ledger", "stats"],
        ] {
            let run = try Self.iap(arguments)
            #expect(run.status == 2, "\(arguments) exited \(run.status)")
        }
    }

    @Test func batchAnswersEveryLineInOrder() throws {
        let token = try String(contentsOf: Self.sample, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // Four lines, the third empty; the final newline does not start a fifth.
        let input = [token, "garbage", "", #"{"signedPayload":"\#(token)"}"#].joined(separator: "\n") + "\n"
        let run = try Self.iap(["verify", "--batch", "--bundle-id", "com.nineton.taller"], input: Data(input.utf8))
        #expect(run.status == 0)
        let lines = run.stdoutLines
        #expect(lines.count == 4)
        let first = try Self.json(lines[0])
        #expect(first["ok"] as? Bool == true)
        #expect(first["kind"] as? String == "notification")
        #expect((first["payload"] as? [String: Any])?["notificationType"] as? String == "TEST")
        let second = try Self.json(lines[1])
        #expect(second["ok"] as? Bool == false)
        #expect((second["error"] as? [String: Any])?["code"] as? String == "malformedSignedData")
        #expect(try Self.json(lines[2])["ok"] as? Bool == false)
        #expect(try Self.json(lines[3])["ok"] as? Bool == true)
    }

    @Test func decodeMarksItsOutputUnverified() throws {
        let run = try Self.iap(["decode", Self.sample.path])
        #expect(run.status == 0)
        let document = try Self.json(run.stdout)
        #expect(document["unverified"] as? Bool == true)
        #expect((document["header"] as? [String: Any])?["alg"] as? String == "ES256")
    }

    @Test func theLedgerAcknowledgesEachLineAndAnswersInTheDocumentedShapes() throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let root = directory.appending(path: "root.der").path
        let catalog = directory.appending(path: "catalog.json").path
        let data = directory.appending(path: "ledger").path
        let generated = try Self.iap([
            "testdata", "transactions", "--count", "8", "--users", "2", "--root-out", root, "--catalog-out", catalog,
        ])
        #expect(generated.status == 0)
        let tokens = generated.stdoutLines
        #expect(tokens.count == 8)

        let input = (tokens + ["not a token"]).joined(separator: "\n") + "\n"
        let ingest = try Self.iap(
            ["ledger", "ingest", "--data", data, "--catalog", catalog, "--root", root, "--user", "alice"],
            input: Data(input.utf8)
        )
        #expect(ingest.status == 0)
        #expect(ingest.stdoutLines.count == 9)
        #expect(
            ingest.stdoutLines.prefix(8).allSatisfy { $0.hasPrefix("ACK 2000000000000") && $0.hasSuffix(" delivered") }
        )
        #expect(ingest.stdoutLines.last == "REJECT 9 malformedSignedData")

        let again = try Self.iap(
            ["ledger", "ingest", "--data", data, "--root", root, "--user", "alice"],
            input: Data((tokens[0] + "\n").utf8)
        )
        #expect(again.stdoutLines == ["ACK 2000000000000001 alreadyDelivered"])

        let entitlements = try Self.json(
            try Self.iap([
                "ledger", "entitlements", "--data", data, "--user", "alice", "--at", "1767225700000", "--json",
            ]).stdout
        )
        #expect(entitlements["user"] as? String == "alice")
        #expect(entitlements["at"] as? Int == 1_767_225_700_000)
        #expect((entitlements["balances"] as? [String: Int])?["coins.100"] == 400)
        let rows = try #require(entitlements["entitlements"] as? [[String: Any]])
        let keys: Set<String> = ["productId", "type", "state", "hasAccess", "expiresDate", "originalTransactionId"]
        #expect(rows.allSatisfy { Set($0.keys) == keys })
        #expect(
            rows.contains {
                $0["productId"] as? String == "pro.lifetime" && $0["type"] as? String == "nonConsumable"
                    && $0["state"] as? String == "active" && $0["expiresDate"] is NSNull
            }
        )
        #expect(rows.contains { $0["type"] as? String == "autoRenewable" && $0["expiresDate"] is Int })

        let stats = try Self.json(try Self.iap(["ledger", "stats", "--data", data, "--json"]).stdout)
        #expect(Set(stats.keys) == ["transactions", "delivered", "pendingRetries", "deadLetters", "revoked", "users"])
        #expect(stats["transactions"] as? Int == 8)

        let history = try Self.json(
            try Self.iap(["ledger", "history", "--data", data, "--user", "alice", "--limit", "3", "--json"]).stdout
        )
        #expect((history["items"] as? [Any])?.count == 3)
        #expect(history["nextCursor"] is String)

        #expect(try Self.iap(["ledger", "check", "--data", data]).status == 0)
    }
}
