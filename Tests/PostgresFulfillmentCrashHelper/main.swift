// A child process for the crash tests of transactional fulfillment (IntegrationTests/PostgresTransactionalCrashTests):
// it delivers or refunds a fixed set of purchases through a DeliveryPipeline whose PostgreSQL ledger grants into a
// wallet table in the same transaction, and kills itself with SIGKILL at a named step when told to.
//
//   PostgresFulfillmentCrashHelper URL SCHEMA grant|refund|grouped-grant|grouped-refund [STEP N]
//
// Steps: `written` (the hook starts: the ledger's write is in the open transaction, the wallet's not yet),
// `granted` (the hook's wallet statement ran, the transaction is not committed), `committed` (the pipeline
// answered). With STEP and N, the process dies the N-th time it reaches STEP. The first attempt of every fourth
// purchase's grant fails (the transaction rolls back and the pipeline records a retry), so retries cross the
// crashes too. With `grouped-`, the purchases are delivered all at once through a store with group commit, so that
// several of them share each transaction. Exit status 0 when every purchase was answered, 1 otherwise.
import Foundation
import IAPCore
import IAPStoragePostgres

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 6,
    ["grant", "refund", "grouped-grant", "grouped-refund"].contains(arguments[3])
else {
    FileHandle.standardError.write(
        Data(
            "usage: PostgresFulfillmentCrashHelper URL SCHEMA grant|refund|grouped-grant|grouped-refund [STEP N]\n".utf8
        )
    )
    exit(2)
}
let url = arguments[1]
let schema = arguments[2]
let grouped = arguments[3].hasPrefix("grouped-")
let phase = grouped ? String(arguments[3].dropFirst("grouped-".count)) : arguments[3]
let killStep = arguments.count == 6 ? arguments[4] : nil
let killAt = arguments.count == 6 ? Int(arguments[5]) ?? 1 : 0

/// Counts the steps reached, and dies at the chosen one.
final class Steps: Sendable {
    private let counts = LockedValue<[String: Int]>([:])

    func reach(_ step: String) {
        let count = counts.withLock { counts in
            counts[step, default: 0] += 1
            return counts[step, default: 0]
        }
        if step == killStep, count == killAt {
            kill(getpid(), SIGKILL)
        }
    }
}

/// Coins per user in `SCHEMA.wallet`, no idempotency keys.
struct Wallet: PostgresTransactionalFulfillmentHook {
    let schema: String
    let steps: Steps
    let failedOnce = LockedValue<Set<String>>([])

    func grant(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {
        steps.reach("written")
        try connection.execute(
            """
            INSERT INTO \(schema).wallet AS w (user_id, coins) VALUES ($1, $2::bigint)
            ON CONFLICT (user_id) DO UPDATE SET coins = w.coins + excluded.coins
            """,
            [delivery.userId, String(delivery.units)]
        )
        let failsNow =
            (Int(delivery.transactionId) ?? 0) % 4 == 0
            && failedOnce.withLock { $0.insert(delivery.transactionId).inserted }
        if failsNow {
            throw IAPError(.fulfillmentFailed, "the wallet's first try for \(delivery.transactionId) fails")
        }
        steps.reach("granted")
    }

    func revoke(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {
        steps.reach("written")
        try connection.execute(
            "UPDATE \(schema).wallet SET coins = coins - $2::bigint WHERE user_id = $1",
            [delivery.userId, String(delivery.units)]
        )
        steps.reach("granted")
    }
}

/// A verifier that refuses every signed input: the helper hands payloads straight to `deliver(_:userId:)` and
/// `apply(_:)`, which take what a verifier already checked.
struct NoSignedData: Verifier {
    var acceptedEnvironments: Set<AppStoreEnvironment>? { [.production] }

    func verifyTransaction(_ signedTransaction: String) async throws -> TransactionPayload {
        throw IAPError(.malformedSignedData, "this helper takes no signed data")
    }

    func verifyRenewalInfo(_ signedRenewalInfo: String) async throws -> RenewalInfoPayload {
        throw IAPError(.malformedSignedData, "this helper takes no signed data")
    }

    func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
        throw IAPError(.malformedSignedData, "this helper takes no signed data")
    }

    func verifyAppTransaction(_ signedAppTransaction: String) async throws -> AppTransactionPayload {
        throw IAPError(.malformedSignedData, "this helper takes no signed data")
    }
}

let epoch = Date(millisecondsSince1970: 1_767_225_600_000)

@Sendable func purchase(_ index: Int) -> TransactionPayload {
    let id = String(9_000 + index)
    return TransactionPayload(
        originalTransactionId: id,
        transactionId: id,
        bundleId: "com.example.app",
        productId: "coins.100",
        purchaseDate: epoch,
        originalPurchaseDate: epoch,
        quantity: 1,
        type: .consumable,
        inAppOwnershipType: .purchased,
        signedDate: epoch,
        environment: .production
    )
}

let steps = Steps()

/// Delivers (or refunds) purchase `index`; returns 1 when the pipeline rejected it.
@Sendable func settle(_ index: Int, through pipeline: DeliveryPipeline) async -> Int {
    let outcome: DeliveryOutcome?
    if phase == "grant" {
        outcome = await pipeline.deliver(purchase(index), userId: "user-\(index % 3)")
    } else if index < 6 {
        var refunded = purchase(index)
        refunded.revocationDate = epoch.addingTimeInterval(60)
        refunded.signedDate = epoch.addingTimeInterval(60)
        outcome = await pipeline.apply(refunded)
    } else {
        return 0
    }
    steps.reach("committed")
    if case .rejected(let error) = outcome {
        FileHandle.standardError.write(Data("rejected: \(error)\n".utf8))
        return 1
    }
    return 0
}

let code: Int32 = await {
    do {
        let store = try await PostgresEntitlementStore(configuration: .init(url: url, schema: schema, poolSize: 2))
        let wallet = Wallet(schema: schema, steps: steps)
        let ledger =
            grouped
            ? try PostgresTransactionalFulfillmentStore(
                store: store,
                hook: wallet,
                groupCommit: .init(concurrentGroups: 2)
            )
            : PostgresTransactionalFulfillmentStore(store: store, hook: wallet)
        let pipeline = DeliveryPipeline(
            verifier: NoSignedData(),
            catalog: try StaticProductCatalog(products: [
                CatalogProduct(productId: "coins.100", kind: .consumable, unitsPerPurchase: 100)
            ]),
            store: ledger,
            retryPolicy: RetryPolicy(initialDelay: .zero, jitter: 0)
        )
        var failures = 0
        if grouped {
            failures = await withTaskGroup(of: Int.self) { group in
                for index in 0..<12 {
                    group.addTask { await settle(index, through: pipeline) }
                }
                var failures = 0
                for await failed in group {
                    failures += failed
                }
                return failures
            }
        } else {
            for index in 0..<12 {
                failures += await settle(index, through: pipeline)
            }
        }
        // What failed or what an earlier process left: delivered now.
        var report = await pipeline.drainDueRetries(limit: 100)
        while report.delivered + report.deferred > 0, report.errors.isEmpty {
            report = await pipeline.drainDueRetries(limit: 100)
        }
        failures += report.errors.count
        await store.close()
        return failures == 0 ? 0 : 1
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        return 1
    }
}()
exit(code)
