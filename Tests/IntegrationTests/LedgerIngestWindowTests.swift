import Foundation
import IAPCore
import IAPCrypto
import IAPTesting
import IAPTestSupport
import Testing

/// `iap ledger ingest` with many lines in flight: answers in input order, each after its line is durable, the lines
/// about one purchase recorded in the order they came, and a pipe answered line by line.
@Suite("iap ledger ingest --window")
struct LedgerIngestWindowTests {
    typealias CLI = CommandLineContractTests

    /// Signed test transactions, their root and catalog, and a ledger directory.
    struct Workbench {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-window-\(UUID().uuidString)")
        var root: String { directory.appending(path: "root.der").path }
        var catalog: String { directory.appending(path: "catalog.json").path }
        let tokens: [String]

        init(count: Int) async throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let generated = try await CLI.iap([
                "testdata", "transactions", "--count", String(count), "--users", "3", "--root-out",
                directory.appending(path: "root.der").path, "--catalog-out",
                directory.appending(path: "catalog.json").path,
            ])
            #expect(generated.status == 0)
            tokens = generated.stdoutLines
        }

        func ledger(_ name: String) -> String {
            directory.appending(path: name).path
        }

        func arguments(ledger: String, window: Int?) -> [String] {
            [
                "ledger", "ingest", "--data", ledger, "--catalog", catalog, "--root", root, "--ledger-only",
                "--token-is-user",
            ]
                + (window.map { ["--window", String($0)] } ?? [])
        }

        func remove() {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The transaction id in a signed transaction's payload.
    static func transactionId(_ token: String) throws -> String {
        let segments = token.split(separator: ".")
        let payload = try #require(Base64.decodeURL(segments[1]))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        return try #require(object["transactionId"] as? String)
    }

    @Test func manyLinesInFlightAreAnsweredInInputOrderWithRejectedLinesInPlace() async throws {
        let bench = try await Workbench(count: 300)
        defer { bench.remove() }
        // Rejected lines among the good ones, at the start, in the middle and at the end, and a good line twice.
        var lines: [String] = ["not a token"]
        var expected: [String] = ["REJECT 1 malformedSignedData"]
        for (index, token) in bench.tokens.enumerated() {
            lines.append(token)
            expected.append("ACK \(try Self.transactionId(token)) delivered")
            if index % 37 == 5 {
                lines.append("eyJhbGciOiJFUzI1NiJ9.e30.c2ln")
                expected.append("REJECT \(lines.count) malformedSignedData")
            }
        }
        lines.append(bench.tokens[7])
        expected.append("ACK \(try Self.transactionId(bench.tokens[7])) alreadyDelivered")
        lines.append("garbage")
        expected.append("REJECT \(lines.count) malformedSignedData")
        let input = Data((lines.joined(separator: "\n") + "\n").utf8)

        let windowed = try await CLI.iap(bench.arguments(ledger: bench.ledger("windowed"), window: 32), input: input)
        #expect(windowed.status == 1)
        #expect(windowed.stdoutLines == expected)
        let rejected = expected.filter { $0.hasPrefix("REJECT") }.count
        #expect(windowed.stderrLines.last == "error: \(rejected) of \(lines.count) lines rejected")

        // One line at a time answers exactly the same.
        let single = try await CLI.iap(bench.arguments(ledger: bench.ledger("single"), window: 1), input: input)
        #expect(single.status == 1)
        #expect(single.stdoutLines == expected)

        // Everything acknowledged is in the ledger, once.
        let stats = try CLI.json(
            try await CLI.iap(["ledger", "stats", "--data", bench.ledger("windowed"), "--json"]).stdout
        )
        #expect(stats["delivered"] as? Int == bench.tokens.count)
        #expect(try await CLI.iap(["ledger", "check", "--data", bench.ledger("windowed")]).status == 0)
        // A rerun acknowledges every line as already delivered.
        let again = try await CLI.iap(
            bench.arguments(ledger: bench.ledger("windowed"), window: nil),
            input: Data((bench.tokens.joined(separator: "\n") + "\n").utf8)
        )
        #expect(again.status == 0)
        #expect(again.stdoutLines.count == bench.tokens.count)
        #expect(again.stdoutLines.allSatisfy { $0.hasSuffix(" alreadyDelivered") })
    }

    @Test func aPurchaseAndItsRefundNotificationInOneInputEndRevoked() async throws {
        let appStore = try SimulatedAppStore(
            products: [CatalogProduct(productId: "pro.lifetime", kind: .nonConsumable, entitlements: ["pro"])],
            clock: SystemClock()
        )
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-window-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = directory.appending(path: "root.der")
        try Data(appStore.pki.root.derBytes).write(to: root)

        // Each customer buys, and is refunded: the purchase and its refund notification follow each other, many
        // pairs in flight at once.
        var lines: [String] = []
        var ids: [String] = []
        for customer in 0..<40 {
            let account = "customer-\(customer)"
            let purchase = try #require(
                try await appStore.purchase(productId: "pro.lifetime", account: account).transaction
            )
            _ = await appStore.drainNotifications()
            try await appStore.refund(transactionId: purchase.transactionId)
            let refunds = await appStore.drainNotifications()
            #expect(refunds.count == 1)
            lines.append(purchase.signedTransaction)
            lines += refunds
            ids.append(purchase.transactionId)
        }
        let ledger = directory.appending(path: "ledger").path
        let run = try await CLI.iap(
            [
                "ledger", "ingest", "--data", ledger, "--root", root.path, "--bundle-id",
                appStore.configuration.bundleId, "--environment", "Sandbox", "--user", "alice", "--ledger-only",
                "--window", "64",
            ],
            input: Data((lines.joined(separator: "\n") + "\n").utf8)
        )
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutLines.count == lines.count)
        for (index, id) in ids.enumerated() {
            #expect(run.stdoutLines[2 * index] == "ACK \(id) delivered")
            #expect(run.stdoutLines[2 * index + 1].hasSuffix(" revoked"), "\(run.stdoutLines[2 * index + 1])")
        }
        let export = try await CLI.iap(["ledger", "export", "--data", ledger])
        #expect(export.status == 0)
        let entries = try export.stdoutLines.map { try CLI.json($0) }
        #expect(Set(entries.compactMap { $0["transactionId"] as? String }) == Set(ids))
        // Each purchase was granted, then taken back.
        #expect(entries.allSatisfy { $0["grantAttempted"] as? Bool == true && $0["revokedAt"] is Int })
        #expect(entries.allSatisfy { $0["revocationDelivered"] as? Bool == true }, "\(export.stdout)")
        let entitlements = try await CLI.iap(["ledger", "entitlements", "--data", ledger, "--user", "alice", "--json"])
        #expect(entitlements.status == 0)
        let granted = try #require(try CLI.json(entitlements.stdout)["entitlements"] as? [[String: Any]])
        #expect(!granted.isEmpty)
        #expect(granted.allSatisfy { $0["hasAccess"] as? Bool == false }, "\(entitlements.stdout)")
    }

    @Test func aPipeIsAnsweredLineByLineWhileTheWindowIsOpen() async throws {
        let bench = try await Workbench(count: 3)
        defer { bench.remove() }
        let process = try VerifyBatchCommandTests.launch(
            bench.arguments(ledger: bench.ledger("ledger"), window: nil),
            logFile: bench.directory.appending(path: "ingest.log")
        )
        let stdin = try #require(process.standardInput)
        defer { process.kill() }
        // Each answer is read on another thread; the test waits for it before it writes the next line.
        let (answers, arrived) = VerifyBatchCommandTests.readAnswers(process.standardOutput)

        let lines = [bench.tokens[0], "garbage", bench.tokens[1], bench.tokens[0], bench.tokens[2]]
        let expected = [
            "ACK \(try Self.transactionId(bench.tokens[0])) delivered", "REJECT 2 malformedSignedData",
            "ACK \(try Self.transactionId(bench.tokens[1])) delivered",
            "ACK \(try Self.transactionId(bench.tokens[0])) alreadyDelivered",
            "ACK \(try Self.transactionId(bench.tokens[2])) delivered",
        ]
        for (index, line) in lines.enumerated() {
            stdin.write(Data((line + "\n").utf8))
            let answered = await offPool { arrived.wait(timeout: .now() + 60) == .success }
            #expect(answered, "line \(index + 1) was not answered while the input stayed open")
            guard answered else { return }
            #expect(answers.withLock { $0.last } == expected[index])
        }
        try stdin.close()
        #expect(await process.exit(within: .seconds(60)), "iap ledger ingest did not end when its input closed")
        #expect(process.terminationStatus == 1)
        #expect(answers.withLock { $0 } == expected)
    }

    @Test func aWindowOutsideOneTo1024IsAUsageError() async throws {
        let bench = try await Workbench(count: 1)
        defer { bench.remove() }
        for window in ["0", "1025", "many"] {
            let run = try await CLI.iap(
                [
                    "ledger", "ingest", "--data", bench.ledger("ledger"), "--root", bench.root, "--ledger-only",
                    "--token-is-user",
                    "--window", window,
                ],
                input: Data()
            )
            #expect(run.status == 2)
            #expect(
                run.stderrLines.first
                    == "error: usage: --window takes a number of lines from 1 to 1024 (see iap ledger ingest --help)"
            )
        }
        #expect(!FileManager.default.fileExists(atPath: bench.ledger("ledger")))
    }
}
