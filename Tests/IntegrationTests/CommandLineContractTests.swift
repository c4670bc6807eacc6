import Foundation
import IAPCore
import IAPTestSupport
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

        init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }

        /// A finished child's exit status (or signal number) and output.
        init(_ completion: ChildProcess.Completion) {
            self.init(
                status: completion.status,
                stdout: String(decoding: completion.standardOutput, as: UTF8.self),
                stderr: String(decoding: completion.standardError, as: UTF8.self)
            )
        }
    }

    static let repository = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let sample = repository.appending(
        path: "Sources/Examples/Samples/production-test-notification-2024-10-17.jws"
    )

    /// Runs the tool; `environment` adds to (or, with `nil` values, removes from) this process's environment.
    ///
    /// The child is waited for without holding a thread of the concurrency pool the suites share, and killed (the
    /// test failing) when it runs past `timeout`.
    static func iap(
        _ arguments: [String],
        input: Data = Data(),
        environment: [String: String?] = [:],
        timeout: Duration = .seconds(180)
    ) async throws -> Run {
        var merged: [String: String]?
        if !environment.isEmpty {
            var all = ProcessInfo.processInfo.environment
            for (name, value) in environment {
                all[name] = value
            }
            merged = all
        }
        let run = try await ChildProcess.run(
            try EmulatorProcess.binary(),
            arguments,
            input: input,
            environment: merged,
            timeout: timeout
        )
        return Run(run)
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func verifyPrintsThePayloadAndSaysWhichChecksItSkipped() async throws {
        let full = try await Self.iap([
            "verify", "--bundle-id", "com.nineton.taller", "--environment", "Production", "--app-apple-id",
            "6450284872", Self.sample.path,
        ])
        #expect(full.status == 0)
        #expect(full.stderr.isEmpty)
        let payload = try Self.json(full.stdout)
        #expect(payload["notificationType"] as? String == "TEST")
        #expect(payload["signedDate"] as? Int == 1_729_136_651_128)

        let bare = try await Self.iap(["verify", Self.sample.path])
        #expect(bare.status == 0)
        #expect(bare.stderrLines.count == 3)
        #expect(bare.stderrLines.allSatisfy { $0.hasPrefix("note: ") })
    }

    @Test func aRejectionIsOneErrorLineAndExitOne() async throws {
        let expired = try await Self.iap([
            "verify", "--at", "now", "--bundle-id", "x", "--environment", "Production", "--app-apple-id", "1",
            Self.sample.path,
        ])
        #expect(expired.status == 1)
        #expect(expired.stdout.isEmpty)
        #expect(expired.stderrLines.count == 1)
        #expect(expired.stderrLines.first?.hasPrefix("error: certificateExpired: ") == true)

        let wrongApp = try await Self.iap([
            "verify", "--bundle-id", "com.example.other", "--environment", "Production", "--app-apple-id", "6450284872",
            Self.sample.path,
        ])
        #expect(wrongApp.status == 1)
        #expect(wrongApp.stderrLines.last?.hasPrefix("error: bundleIdMismatch: ") == true)

        let garbage = try await Self.iap(["verify", "-"], input: Data("not.a.jws".utf8))
        #expect(garbage.status == 1)
        #expect(garbage.stderrLines.last?.hasPrefix("error: malformedSignedData: ") == true)
    }

    @Test func usageErrorsExitTwo() async throws {
        for arguments in [
            ["verify", "--environment", "Staging"], ["verify", "--at", "yesterday"], ["verify", "--kind", "receipt"],
            ["verify", "--unknown"], ["verify", "a", "b"], ["verify", "/no/such/file"], ["ledger", "stats"],
        ] {
            let run = try await Self.iap(arguments)
            #expect(run.status == 2, "\(arguments) exited \(run.status)")
        }
    }

    @Test func batchAnswersEveryLineInOrder() async throws {
        let token = try String(contentsOf: Self.sample, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // Four lines, the third empty; the final newline does not start a fifth.
        let input = [token, "garbage", "", #"{"signedPayload":"\#(token)"}"#].joined(separator: "\n") + "\n"
        let run = try await Self.iap(
            ["verify", "--batch", "--bundle-id", "com.nineton.taller"],
            input: Data(input.utf8)
        )
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

    @Test func decodeMarksItsOutputUnverified() async throws {
        let run = try await Self.iap(["decode", Self.sample.path])
        #expect(run.status == 0)
        let document = try Self.json(run.stdout)
        #expect(document["unverified"] as? Bool == true)
        #expect((document["header"] as? [String: Any])?["alg"] as? String == "ES256")
    }

    @Test func theLedgerAcknowledgesEachLineAndAnswersInTheDocumentedShapes() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let root = directory.appending(path: "root.der").path
        let catalog = directory.appending(path: "catalog.json").path
        let data = directory.appending(path: "ledger").path
        let generated = try await Self.iap([
            "testdata", "transactions", "--count", "8", "--users", "2", "--root-out", root, "--catalog-out", catalog,
        ])
        #expect(generated.status == 0)
        let tokens = generated.stdoutLines
        #expect(tokens.count == 8)

        let input = (tokens + ["not a token"]).joined(separator: "\n") + "\n"
        let ingest = try await Self.iap(
            [
                "ledger", "ingest", "--data", data, "--catalog", catalog, "--root", root, "--user", "alice",
                "--ledger-only",
            ],
            input: Data(input.utf8)
        )
        #expect(ingest.status == 1)
        #expect(ingest.stdoutLines.count == 9)
        #expect(
            ingest.stdoutLines.prefix(8).allSatisfy { $0.hasPrefix("ACK 2000000000000") && $0.hasSuffix(" delivered") }
        )
        #expect(ingest.stdoutLines.last == "REJECT 9 malformedSignedData")

        let again = try await Self.iap(
            ["ledger", "ingest", "--data", data, "--root", root, "--user", "alice", "--ledger-only"],
            input: Data((tokens[0] + "\n").utf8)
        )
        #expect(again.stdoutLines == ["ACK 2000000000000001 alreadyDelivered"])

        let entitlements = try Self.json(
            try await Self.iap([
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

        let stats = try Self.json(try await Self.iap(["ledger", "stats", "--data", data, "--json"]).stdout)
        #expect(
            Set(stats.keys) == [
                "transactions", "delivered", "pendingRetries", "deadLetters", "revoked", "users", "environments",
                "claimed", "staleClaims",
            ]
        )
        #expect(stats["transactions"] as? Int == 8)
        #expect(stats["claimed"] as? Int == 0 && stats["staleClaims"] as? Int == 0)
        #expect(stats["environments"] as? [String: Int] == ["Sandbox": 8])

        let history = try Self.json(
            try await Self.iap(["ledger", "history", "--data", data, "--user", "alice", "--limit", "3", "--json"])
                .stdout
        )
        #expect((history["items"] as? [Any])?.count == 3)
        #expect(history["nextCursor"] is String)

        #expect(try await Self.iap(["ledger", "check", "--data", data]).status == 0)
    }

    /// A directory with 8 signed test transactions (one per second from 2026-01-01T00:00:00Z), their root
    /// certificate and catalog.
    struct Workbench {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-cli-\(UUID().uuidString)")
        var root: String { directory.appending(path: "root.der").path }
        var catalog: String { directory.appending(path: "catalog.json").path }
        var data: String { directory.appending(path: "ledger").path }
        let tokens: [String]

        init() async throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let root = directory.appending(path: "root.der").path
            let catalog = directory.appending(path: "catalog.json").path
            let generated = try await CommandLineContractTests.iap([
                "testdata", "transactions", "--count", "8", "--users", "2", "--root-out", root, "--catalog-out",
                catalog,
            ])
            #expect(generated.status == 0)
            tokens = generated.stdoutLines
        }

        func ingest(_ lines: [String], _ extra: [String] = []) async throws -> Run {
            try await CommandLineContractTests.iap(
                // testdata's purchases carry tokens nobody claimed: without --user they belong to their tokens.
                ["ledger", "ingest", "--data", data, "--catalog", catalog, "--root", root, "--ledger-only"]
                    + (extra.contains("--user") ? [] : ["--token-is-user"]) + extra,
                input: Data((lines.joined(separator: "\n") + "\n").utf8)
            )
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    @Test func ingestProcessesEveryLineAndExitsOneWhenAnyWasRejected() async throws {
        let bench = try await Workbench()
        defer { bench.remove() }
        let good = bench.tokens
        // A bad line in the middle: every line after it is still verified, recorded and acknowledged.
        let input = Array(good[0..<3]) + ["eyJhbGciOiJFUzI1NiJ9.e30.c2ln"] + Array(good[3...])
        let run = try await bench.ingest(input)
        #expect(run.status == 1)
        #expect(run.stdoutLines.count == 9)
        #expect(run.stdoutLines[3].hasPrefix("REJECT 4 "))
        let acknowledged = run.stdoutLines.enumerated().filter { $0.offset != 3 }.map(\.element)
        #expect(acknowledged.count == 8)
        #expect(acknowledged.allSatisfy { $0.hasPrefix("ACK 2000000000000") && $0.hasSuffix(" delivered") })
        #expect(run.stderrLines.last == "error: 1 of 9 lines rejected")
        let stats = try Self.json(try await Self.iap(["ledger", "stats", "--data", bench.data, "--json"]).stdout)
        #expect(stats["delivered"] as? Int == 8)

        // Every line acknowledged (here: already delivered) is exit 0.
        let again = try await bench.ingest(good)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdoutLines.allSatisfy { $0.hasSuffix(" alreadyDelivered") })
        // A usage error is still 2, before anything is read.
        await #expect(try bench.ingest(good, ["--limit", "3"]).status == 2)
    }

    @Test func historyByAppTransactionIdListsAnAppleAccountsPurchasesWithTheirOwners() async throws {
        let bench = try await Workbench()
        defer { bench.remove() }
        // One line at a time: the ledger records them in input order.
        await #expect(try bench.ingest(bench.tokens, ["--window", "1"]).status == 0)
        // Which purchases each Apple Account made, from the signed transactions themselves.
        var byAccount: [String: [String]] = [:]
        for token in bench.tokens {
            let payload = try #require(Base64.decodeURL(String(token.split(separator: ".")[1])))
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
            let account = try #require(claims["appTransactionId"] as? String, "testdata signs appTransactionId")
            byAccount[account, default: []].append(try #require(claims["transactionId"] as? String))
        }
        let (account, purchases) = try #require(byAccount.max { $0.value.count < $1.value.count })
        let run = try await Self.iap(["ledger", "history", "--data", bench.data, "--app-transaction-id", account])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutLines.count == purchases.count)
        // Newest first, each line ending with its owner (testdata's tokens are their owners here).
        #expect(run.stdoutLines.map { String($0.prefix(16)) } == purchases.reversed())
        let json = try Self.json(
            try await Self.iap(["ledger", "history", "--data", bench.data, "--app-transaction-id", account, "--json"])
                .stdout
        )
        #expect(json["appTransactionId"] as? String == account)
        let items = try #require(json["items"] as? [[String: Any]])
        #expect(items.compactMap { $0["transactionId"] as? String } == purchases.reversed())
        #expect(items.allSatisfy { ($0["userId"] as? String).map { !$0.isEmpty } ?? false })
        let none = try await Self.iap(["ledger", "history", "--data", bench.data, "--app-transaction-id", "999"])
        #expect(none.status == 0 && none.stdoutLines == ["no purchase carries app transaction id 999"])
        for bad in [["--app-transaction-id", "a b"], ["--app-transaction-id", account, "--user", "alice"]] {
            #expect(try await Self.iap(["ledger", "history", "--data", bench.data] + bad).status == 2, "\(bad)")
        }
    }

    @Test func textOutputShowsDatesInISO8601AndJSONKeepsMilliseconds() async throws {
        let bench = try await Workbench()
        defer { bench.remove() }
        // One line at a time, so that the ledger records them in input order (with a window, lines about different
        // purchases are recorded in the order they complete, and the history lists them in that order).
        await #expect(try bench.ingest(bench.tokens, ["--user", "alice", "--window", "1"]).status == 0)

        // The transactions were bought one second apart from 2026-01-01T00:00:00Z.
        let history = try await Self.iap(["ledger", "history", "--data", bench.data, "--user", "alice", "--limit", "3"])
        #expect(history.status == 0)
        #expect(
            history.stdoutLines == [
                "2000000000000008  plus.monthly  delivered  2026-01-01T00:00:07Z  until 2026-01-31T00:00:07Z",
                "2000000000000007  pro.lifetime  delivered  2026-01-01T00:00:06Z",
                "2000000000000006  coins.100  delivered  2026-01-01T00:00:05Z",
                "more: --cursor v1:6",
            ]
        )
        let historyJSON = try Self.json(
            try await Self.iap(["ledger", "history", "--data", bench.data, "--user", "alice", "--limit", "3", "--json"])
                .stdout
        )
        let items = try #require(historyJSON["items"] as? [[String: Any]])
        #expect(items.first?["purchaseDate"] as? Int == 1_767_225_607_000)
        #expect(items.first?["expiresDate"] as? Int == 1_769_817_607_000)

        // --at takes an ISO 8601 time as well as milliseconds, and the answer says it the same way.
        let entitlements = try await Self.iap([
            "ledger", "entitlements", "--data", bench.data, "--user", "alice", "--at", "2026-01-01T00:10:00Z",
        ])
        #expect(entitlements.status == 0, "\(entitlements.stderr)")
        #expect(entitlements.stdoutLines.first == "entitlements of alice at 2026-01-01T00:10:00Z")
        #expect(entitlements.stdoutLines.contains("  plus.monthly  autoRenewable  active until 2026-01-31T00:00:07Z"))
        let millis = try await Self.iap([
            "ledger", "entitlements", "--data", bench.data, "--user", "alice", "--at", "1767226200000",
        ])
        #expect(millis.stdout == entitlements.stdout)
        let json = try Self.json(
            try await Self.iap([
                "ledger", "entitlements", "--data", bench.data, "--user", "alice", "--at", "2026-01-01T00:10:00Z",
                "--json",
            ]).stdout
        )
        #expect(json["at"] as? Int == 1_767_226_200_000)
        let rows = try #require(json["entitlements"] as? [[String: Any]])
        #expect(
            rows.contains {
                $0["productId"] as? String == "plus.monthly" && $0["expiresDate"] as? Int == 1_769_817_607_000
            }
        )
        #expect(
            try await Self.iap(["ledger", "entitlements", "--data", bench.data, "--user", "u", "--at", "tomorrow"])
                .status
                == 2
        )
    }

    @Test func environmentListsAreAcceptedAndTheLedgerCountsTransactionsPerEnvironment() async throws {
        let bench = try await Workbench()  // 8 Sandbox transactions, ids ...01 to ...08
        defer { bench.remove() }
        let productionRoot = bench.directory.appending(path: "production-root.der").path
        let production = try await Self.iap([
            "testdata", "transactions", "--count", "12", "--users", "2", "--environment", "Production", "--root-out",
            productionRoot,
        ])
        #expect(production.status == 0)
        let later = Array(production.stdoutLines.suffix(4))  // ids ...09 to ...12

        let productionOnly = try await bench.ingest(
            [bench.tokens[0]],
            ["--root", productionRoot, "--environment", "Production", "--user", "alice"]
        )
        #expect(productionOnly.status == 1)
        #expect(productionOnly.stdoutLines == ["REJECT 1 environmentMismatch"])

        let both = try await bench.ingest(
            bench.tokens + later,
            ["--root", productionRoot, "--environment", "Production,Sandbox", "--user", "alice"]
        )
        #expect(both.status == 0, "\(both.stderr)")
        #expect(both.stdoutLines.count == 12 && both.stdoutLines.allSatisfy { $0.hasSuffix(" delivered") })

        let json = try Self.json(try await Self.iap(["ledger", "stats", "--data", bench.data, "--json"]).stdout)
        #expect(json["environments"] as? [String: Int] == ["Production": 4, "Sandbox": 8])
        let text = try await Self.iap(["ledger", "stats", "--data", bench.data])
        #expect(
            text.stdoutLines.last?.split(separator: " ").joined(separator: " ")
                == "environments Production 4, Sandbox 8"
        )

        let token = Data(bench.tokens[0].utf8)
        let verify = ["verify", "--root", bench.root, "--bundle-id", "com.example.app", "--app-apple-id", "1"]
        #expect(try await Self.iap(verify + ["--environment", "Production,Sandbox"], input: token).status == 0)
        #expect(try await Self.iap(verify + ["--environment", "Production"], input: token).status == 1)
        let bogus = try await Self.iap(verify + ["--environment", "Sandbox,Staging"], input: token)
        #expect(bogus.status == 2)
        #expect(bogus.stderr.contains("'Staging'"))
        let reserved = try await bench.ingest([bench.tokens[0]], ["--user", "unowned:2000000000000001"])
        #expect(reserved.status == 2)
        #expect(reserved.stdout.isEmpty)
    }

    @Test func testDataBelongsToTheTokensOfUserNAsItsHelpSays() async throws {
        let bench = try await Workbench()  // 8 transactions, --users 2
        defer { bench.remove() }
        let namespaceText = "6f1b7c7e-3f52-4a8e-9a1e-0c2d9f6b5a10"
        let help = try await Self.iap(["testdata", "transactions", "--help"])
        #expect(help.stdout.contains(namespaceText))
        #expect(help.stdout.contains("delivers each purchase to its token"))
        let namespace = try #require(UUID(uuidString: namespaceText))
        let owners = ["user-0", "user-1"].map {
            AppAccountToken.derive(from: $0, namespace: namespace).uuidString.lowercased()
        }
        // Each transaction carries its owner's token (user-0 the even ones, user-1 the odd ones).
        let decoded = try await Self.iap(["decode"], input: Data(bench.tokens[1].utf8))
        #expect(decoded.stdout.contains(owners[1]))

        // Without --user, each purchase is delivered to its token: two users, both UUIDs, and no user-0.
        let ingest = try await bench.ingest(bench.tokens)
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let stats = try Self.json(try await Self.iap(["ledger", "stats", "--data", bench.data, "--json"]).stdout)
        #expect(stats["users"] as? Int == 2)
        func entitlements(_ user: String) async throws -> [String: Any] {
            try Self.json(
                try await Self.iap([
                    "ledger", "entitlements", "--data", bench.data, "--user", user, "--at", "1767225700000", "--json",
                ]).stdout
            )
        }
        for (owner, product) in zip(owners, ["pro.lifetime", "plus.monthly"]) {
            let held = try await entitlements(owner)
            #expect((held["balances"] as? [String: Int])?["coins.100"] == 200)
            let rows = try #require(held["entitlements"] as? [[String: Any]])
            #expect(rows.contains { $0["productId"] as? String == product && $0["state"] as? String == "active" })
        }
        let named = try await entitlements("user-0")
        #expect((named["entitlements"] as? [Any])?.isEmpty == true)
    }

    @Test func benchServeClientsHoldTokensTheServerAccepts() async throws {
        // iap-bench serve's server admits user tokens of an hour at most: every submission answered 200 shows that its
        // clients' tokens carry iat and live no longer than that.
        let run = try await IAPBenchCommandTests.bench([
            "serve", "--seconds", "1", "--clients", "2", "--transactions", "100",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let report = try Self.json(run.stdout)
        let submissions = try #require(report["submissions"] as? Int)
        #expect(submissions > 0)
        #expect(report["errors"] as? Int == 0)
        #expect(report["statuses"] as? [String: Int] == ["200": submissions])
    }

    @Test func statsPrintsTextForPeopleAndJSONOnRequest() async throws {
        let bench = try await Workbench()
        defer { bench.remove() }
        await #expect(try bench.ingest(bench.tokens, ["--user", "alice"]).status == 0)

        let text = try await Self.iap(["ledger", "stats", "--data", bench.data])
        #expect(text.status == 0)
        #expect(text.stdout.hasSuffix("\n"))
        #expect(!text.stdout.hasPrefix("{"))
        #expect(text.stdoutLines.first == "ledger \(bench.data)")
        #expect(
            text.stdoutLines.dropFirst().map { $0.split(separator: " ").joined(separator: " ") } == [
                "transactions 8", "users 1", "delivered 8", "pending retries 0", "dead letters 0", "revoked 0",
                "environments Sandbox 8",
            ]
        )

        let json = try await Self.iap(["ledger", "stats", "--data", bench.data, "--json"])
        #expect(json.status == 0)
        #expect(json.stdout.hasSuffix("}\n"))
        let stats = try Self.json(json.stdout)
        #expect(stats["transactions"] as? Int == 8)
        #expect(stats["users"] as? Int == 1)
    }
}
