import Foundation
import IAPCore
import IAPStorageFile
import IAPTestSupport
import Testing

/// `iap ledger stats` and `iap ledger check` on a ledger a deliverer left mid-delivery: the claim it took has
/// expired (it was killed between its claim and the outcome), another claim still holds.
@Suite("iap ledger: claims left by a stopped deliverer")
struct LedgerClaimsCommandTests {
    typealias CLI = CommandLineContractTests

    /// A file ledger holding, for each id, a consumable claimed by a deliverer until `expiry`.
    static func ledger(claims: [(String, Date)], in directory: URL) async throws {
        let store = try FileEntitlementStore(directory: directory)
        let now = SystemClock().now
        for (id, expiry) in claims {
            var entry = LedgerEntry(
                transaction: TransactionPayload(
                    originalTransactionId: id,
                    transactionId: id,
                    productId: "coins.100",
                    type: .consumable,
                    environment: .sandbox
                ),
                transactionId: id,
                originalTransactionId: id,
                userId: "alice",
                productId: "coins.100",
                recordedAt: now
            )
            entry.deliveryState = .pending
            entry.deliveryAttempts = 1
            entry.nextAttemptAt = expiry
            _ = try await store.insert(entry)
        }
        await store.close()
    }

    @Test func statsCountsClaimsAndCheckNamesTheStaleOnes() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-claims-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = SystemClock().now
        try await Self.ledger(
            claims: [("5001", now.addingTimeInterval(-3_600)), ("5002", now.addingTimeInterval(3_600))],
            in: directory
        )

        let json = try await CLI.iap(["ledger", "stats", "--data", directory.path, "--json"])
        #expect(json.status == 0)
        let stats = try CLI.json(json.stdout)
        #expect(stats["transactions"] as? Int == 2)
        #expect(stats["delivered"] as? Int == 0)
        #expect(stats["claimed"] as? Int == 1)
        #expect(stats["staleClaims"] as? Int == 1)

        let text = try await CLI.iap(["ledger", "stats", "--data", directory.path])
        #expect(text.stdoutLines.contains { $0.hasPrefix("  being delivered  1 ") })
        #expect(text.stdoutLines.contains { $0.hasPrefix("  stale claims     1 (claims expired since ") })

        let check = try await CLI.iap(["ledger", "check", "--data", directory.path, "--json"])
        #expect(check.status == 0, "a stale claim is work left to do, not damage")
        let report = try CLI.json(check.stdout)
        let found = try #require(report["found"] as? [String: Any])
        #expect(found["claimed"] as? Int == 1)
        #expect(found["staleClaims"] as? Int == 1)
        let notes = report["notes"] as? [String] ?? []
        #expect(notes.contains { $0.hasPrefix("1 purchase(s) claimed by a deliverer that stopped") })
        #expect((report["problems"] as? [String])?.isEmpty == true)
    }

    @Test func drainDeliversStaleClaimsAndLeavesTheOnesThatHoldWaitingUpToItsBound() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-drain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let now = SystemClock().now
        try await Self.ledger(
            claims: [
                ("6001", now.addingTimeInterval(-3_600)), ("6002", now.addingTimeInterval(-60)),
                ("6003", now.addingTimeInterval(3_600)),
            ],
            in: directory
        )
        let secret = "a-shared-secret-of-32-bytes-long"
        let secretFile = directory.appending(path: "grant-secret")
        try Data(secret.utf8).write(to: secretFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretFile.path)
        let wallet = try LoopbackServer.wallet(secret: secret)
        defer { wallet.stop() }
        let catalog = directory.appending(path: "catalog.json")
        try Data(
            #"{"version": 1, "products": [{"productId": "coins.100", "type": "consumable", "unitsPerPurchase": 100}]}"#
                .utf8
        ).write(to: catalog)
        let grant = [
            "--catalog", catalog.path, "--grant-url", wallet.url.appending(path: "iap").absoluteString,
            "--grant-secret-file", secretFile.path,
        ]

        // The two stale claims are delivered at once; the one that holds is left to its deliverer, and said.
        let first = try await CLI.iap(["ledger", "drain", "--data", directory.path, "--json"] + grant)
        #expect(first.status == 0, "\(first.stderr)")
        let drained = try CLI.json(first.stdout)
        #expect(drained["delivered"] as? Int == 2)
        #expect(drained["deferred"] as? Int == 0)
        #expect(drained["claimed"] as? Int == 1)
        #expect(drained["staleClaims"] as? Int == 0)
        #expect(
            (drained["claimsHoldUntil"] as? Int).map { abs($0 - Int(now.millisecondsSince1970) - 3_600_000) < 2 }
                == true
        )
        #expect(Set(wallet.requests.compactMap { $0.headers["idempotency-key"] }).count == 2)

        // With --wait it waits for the claim, up to its bound, saying so, and leaves it while it holds.
        let waited = try await CLI.iap(["ledger", "drain", "--data", directory.path, "--wait", "2"] + grant)
        #expect(waited.status == 0, "\(waited.stderr)")
        #expect(waited.stderr.contains("waiting for 1 claimed delivery (the last claim expires at "))
        #expect(waited.stdoutLines.contains("  delivered        0"))
        #expect(waited.stdoutLines.contains { $0.hasPrefix("  being delivered  1 (claims hold until ") })
        #expect(wallet.requests.count == 2)

        // Once the claim has expired (its deliverer stopped), a drain delivers what it left.
        let store = try FileEntitlementStore(directory: directory)
        let held = try #require(try await store.entry(transactionId: "6003"))
        var expired = held
        expired.nextAttemptAt = SystemClock().now.addingTimeInterval(-1)
        #expect(try await store.replace(expired, ifRevision: held.revision))
        await store.close()
        let second = try await CLI.iap(["ledger", "drain", "--data", directory.path] + grant)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdoutLines.contains("  delivered        1"))
        #expect(second.stdoutLines.contains("  being delivered  0"))
        let keys = wallet.requests.compactMap { $0.headers["idempotency-key"] }
        #expect(keys.count == 3 && Set(keys).count == 3)
        let stats = try CLI.json(try await CLI.iap(["ledger", "stats", "--data", directory.path, "--json"]).stdout)
        #expect(stats["delivered"] as? Int == 3)
        #expect(stats["claimed"] as? Int == 0)
        #expect(stats["staleClaims"] as? Int == 0)

        // Nothing is left: a drain delivers nothing and says so.
        let third = try await CLI.iap(["ledger", "drain", "--data", directory.path] + grant)
        #expect(third.status == 0)
        #expect(third.stdoutLines.contains("  delivered        0"))
        #expect(wallet.requests.count == 3)
    }

    @Test func drainRefusesBadOptionsWithAUsageError() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-drain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await Self.ledger(claims: [], in: directory)
        for arguments in [
            ["--data", directory.path],  // no GRANT
            ["--data", directory.path, "--ledger-only", "--wait", "-1"],
            ["--data", directory.path, "--ledger-only", "--wait", "86401"],
            ["--data", directory.path, "--ledger-only", "extra"],
        ] {
            let run = try await CLI.iap(["ledger", "drain"] + arguments)
            #expect(run.status == 2, "\(arguments): \(run.stderr)")
        }
        let missing = try await CLI.iap(["ledger", "drain", "--data", directory.path + "-none", "--ledger-only"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("notFound"))
    }
}
