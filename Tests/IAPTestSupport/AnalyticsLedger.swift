package import Foundation
package import IAPCore

/// A small ledger whose analytics were computed by hand (Documentation/Analytics.md walks through it): June 2026 in
/// Production, two currencies, a consumable, a full and a prorated refund, a free trial converted, a yearly
/// subscription cancelled, a monthly one that churns after its grace period, one reactivated, and what must not
/// count (a sandbox purchase, a family-shared copy).
package enum AnalyticsLedger {
    /// 2026-06-01T00:00:00Z, a Monday.
    package static let june = date("2026-06-01")
    /// 2026-07-01T00:00:00Z.
    package static let july = date("2026-07-01")
    /// The instant the figures are computed at.
    package static let now = date("2026-07-05")

    package static func date(_ text: String) -> Date {
        guard let date = AnalyticsCalendar.parse(text) else { preconditionFailure("not a date: \(text)") }
        return date
    }

    package static let catalog: StaticProductCatalog = {
        do {
            return try StaticProductCatalog(products: [
                CatalogProduct(productId: "coins.100", kind: .consumable, entitlements: [], unitsPerPurchase: 100),
                CatalogProduct(productId: "premium", kind: .nonConsumable, entitlements: ["premium"]),
                CatalogProduct(
                    productId: "pro.monthly",
                    kind: .autoRenewable,
                    subscriptionGroupId: "pro",
                    entitlements: ["pro"],
                    duration: SubscriptionPeriod(value: 1, unit: .month)
                ),
                CatalogProduct(
                    productId: "pro.yearly",
                    kind: .autoRenewable,
                    subscriptionGroupId: "pro",
                    entitlements: ["pro"],
                    duration: SubscriptionPeriod(value: 1, unit: .year)
                ),
            ])
        } catch {
            preconditionFailure("the analytics catalog: \(error)")
        }
    }()

    /// One ledger entry as the pipeline would have recorded it.
    package static func entry(
        _ id: Int,
        original: Int? = nil,
        user: String,
        product: String,
        price: Int64,
        currency: String = "USD",
        purchased: String,
        expires: String? = nil,
        quantity: Int32 = 1,
        environment: AppStoreEnvironment = .production,
        configure: (inout TransactionPayload) -> Void = { _ in }
    ) -> LedgerEntry {
        var transaction = TransactionPayload()
        transaction.transactionId = String(2_000_000_000_000_000 + id)
        transaction.originalTransactionId = String(2_000_000_000_000_000 + (original ?? id))
        transaction.productId = product
        transaction.bundleId = "com.example.app"
        transaction.purchaseDate = date(purchased)
        transaction.originalPurchaseDate = date(purchased)
        transaction.expiresDate = expires.map(date)
        transaction.price = price
        transaction.currency = currency
        transaction.quantity = quantity
        transaction.environment = environment
        transaction.inAppOwnershipType = .purchased
        transaction.signedDate = date(purchased)
        transaction.type = catalog[productId: product]?.kind.appStoreType
        configure(&transaction)
        var entry = LedgerEntry(
            transaction: transaction,
            transactionId: transaction.transactionId ?? "",
            originalTransactionId: transaction.originalTransactionId ?? "",
            userId: user,
            productId: product,
            recordedAt: date(purchased)
        )
        entry.deliveryState = .delivered
        entry.deliveredAt = date(purchased)
        entry.revokedAt = transaction.revocationDate
        entry.revocationDelivered = transaction.revocationDate != nil
        entry.sequence = Int64(id)
        entry.revision = 1
        return entry
    }

    package static let entries: [LedgerEntry] = [
        // A consumable: 2 × 100 coins for 19.90 USD (19900 milliunits).
        entry(1, user: "alice", product: "coins.100", price: 19_900, purchased: "2026-06-02T10:00:00Z", quantity: 2),
        // A non-consumable in EUR, refunded in full.
        entry(2, user: "bob", product: "premium", price: 49_900, currency: "EUR", purchased: "2026-06-03") {
            $0.revocationDate = date("2026-06-10")
            $0.revocationReason = .refundedForOtherReason
            $0.revocationType = .refundFull
        },
        // A free trial in May, converted on June 1.
        entry(3, user: "carol", product: "pro.monthly", price: 0, purchased: "2026-05-25", expires: "2026-06-01") {
            $0.offerType = .introductoryOffer
            $0.offerDiscountType = .freeTrial
        },
        entry(
            4,
            original: 3,
            user: "carol",
            product: "pro.monthly",
            price: 9_990,
            purchased: "2026-06-01",
            expires: "2026-07-01"
        ),
        // A yearly subscription, its auto-renewal turned off on June 20 (renewalInfos).
        entry(5, user: "dave", product: "pro.yearly", price: 599_900, purchased: "2026-06-05", expires: "2027-06-05"),
        // A monthly subscription that fails to renew on June 10 and keeps access in its grace period to June 16.
        entry(6, user: "erin", product: "pro.monthly", price: 9_990, purchased: "2026-05-10", expires: "2026-06-10"),
        // A monthly subscription that lapsed on May 1 and was bought again on June 15.
        entry(7, user: "frank", product: "pro.monthly", price: 9_990, purchased: "2026-04-01", expires: "2026-05-01"),
        entry(
            8,
            original: 7,
            user: "frank",
            product: "pro.monthly",
            price: 9_990,
            purchased: "2026-06-15",
            expires: "2026-07-15"
        ),
        // A non-consumable refunded at 40 %.
        entry(9, user: "gina", product: "premium", price: 49_900, purchased: "2026-06-04") {
            $0.revocationDate = date("2026-06-12")
            $0.revocationReason = .refundedForOtherReason
            $0.revocationType = .refundProrated
            $0.revocationPercentage = 40_000
        },
        // Not counted: a sandbox purchase, and a family member's copy of a purchase.
        entry(10, user: "hank", product: "premium", price: 49_900, purchased: "2026-06-06", environment: .sandbox),
        entry(11, user: "ivy", product: "premium", price: 49_900, purchased: "2026-06-07") {
            $0.inAppOwnershipType = .familyShared
        },
    ]

    package static let renewalInfos: [String: RenewalInfoPayload] = {
        var dave = RenewalInfoPayload()
        dave.originalTransactionId = "2000000000000005"
        dave.autoRenewStatus = .off
        dave.signedDate = date("2026-06-20")
        dave.environment = .production
        var erin = RenewalInfoPayload()
        erin.originalTransactionId = "2000000000000006"
        erin.autoRenewStatus = .on
        erin.isInBillingRetryPeriod = true
        erin.gracePeriodExpiresDate = date("2026-06-16")
        erin.signedDate = date("2026-06-10")
        erin.environment = .production
        return ["2000000000000005": dave, "2000000000000006": erin]
    }()
}
