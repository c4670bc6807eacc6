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

    @Test func statsCountsClaimsAndCheckNamesTheStaleOnes() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "iap-claims-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try FileEntitlementStore(directory: directory)
        let now = SystemClock().now
        for (id, expiry) in [("5001", now.addingTimeInterval(-3_600)), ("5002", now.addingTimeInterval(3_600))] {
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
}
