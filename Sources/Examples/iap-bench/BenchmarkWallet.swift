import IAPCore
import IAPStoragePostgres

/// The transactional benchmark's wallet: a table of coins per user in the ledger's schema, granted in the ledger's
/// transaction.
struct BenchmarkWallet: PostgresTransactionalFulfillmentHook {
    static let createTable =
        "CREATE TABLE IF NOT EXISTS iap_bench_wallet (user_id text PRIMARY KEY, coins bigint NOT NULL)"
    static let total = "SELECT coalesce(sum(coins), 0)::text FROM iap_bench_wallet"
    static let product = CatalogProduct(productId: "coins.100", kind: .consumable, unitsPerPurchase: 100)

    func grant(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {
        try connection.execute(
            """
            INSERT INTO iap_bench_wallet AS wallet (user_id, coins) VALUES ($1, $2::bigint)
            ON CONFLICT (user_id) DO UPDATE SET coins = wallet.coins + excluded.coins
            """,
            [delivery.userId, String(delivery.units)]
        )
    }

    func revoke(_ delivery: Delivery, on connection: PostgresTransactionConnection) throws {
        try connection.execute(
            "UPDATE iap_bench_wallet SET coins = coins - $2::bigint WHERE user_id = $1",
            [delivery.userId, String(delivery.units)]
        )
    }
}
