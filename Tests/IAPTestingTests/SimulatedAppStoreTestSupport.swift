import Foundation
import IAPCore
import IAPCrypto
import IAPInMemory
import IAPTesting
import Testing

/// The catalog the simulated-store tests sell.
enum SimulatedCatalog {
    static let coins = "com.example.coins"
    static let premium = "com.example.premium"
    static let seasonPass = "com.example.season"
    static let proMonthly = "com.example.pro.monthly"
    static let proYearly = "com.example.pro.yearly"
    static let maxMonthly = "com.example.max.monthly"
    static let basicMonthly = "com.example.basic.monthly"
    static let group = "21000001"

    static let products: [CatalogProduct] = [
        CatalogProduct(productId: coins, kind: .consumable, entitlements: ["coins"], unitsPerPurchase: 100),
        CatalogProduct(productId: premium, kind: .nonConsumable, entitlements: ["premium"]),
        CatalogProduct(
            productId: seasonPass,
            kind: .nonRenewing,
            entitlements: ["season"],
            duration: SubscriptionPeriod(value: 3, unit: .month)
        ),
        CatalogProduct(productId: maxMonthly, kind: .autoRenewable, subscriptionGroupId: group, groupLevel: 1),
        CatalogProduct(productId: proMonthly, kind: .autoRenewable, subscriptionGroupId: group, groupLevel: 2),
        CatalogProduct(productId: proYearly, kind: .autoRenewable, subscriptionGroupId: group, groupLevel: 2),
        CatalogProduct(productId: basicMonthly, kind: .autoRenewable, subscriptionGroupId: group, groupLevel: 3),
    ]

    static let configuration = SimulatedAppStore.Configuration(
        bundleId: "com.example.app",
        prices: [coins: 990, premium: 4990, seasonPass: 2990, proMonthly: 9990, proYearly: 99990, maxMonthly: 19990],
        subscriptionPeriods: [proYearly: SubscriptionPeriod(value: 1, unit: .year)],
        familyShareableProductIds: [premium, proMonthly, maxMonthly]
    )

    /// 2026-01-01T00:00:00Z.
    static let start = Date(millisecondsSince1970: 1_767_225_600_000)
}

/// A store on a manual clock, with a verifier for what it signs.
struct StoreHarness {
    let clock: ManualClock
    let store: SimulatedAppStore
    let verifier: AppStoreSignedDataVerifier

    init(configuration: SimulatedAppStore.Configuration = SimulatedCatalog.configuration) throws {
        clock = ManualClock(now: SimulatedCatalog.start)
        store = try SimulatedAppStore(products: SimulatedCatalog.products, configuration: configuration, clock: clock)
        verifier = try store.makeVerifier()
    }

    /// Buys a product and returns the transaction, failing the test for any other result.
    func buy(
        _ productId: String,
        account: String = "alice",
        token: UUID? = nil,
        quantity: Int = 1
    ) async throws -> SimulatedTransaction {
        let result = try await store.purchase(
            productId: productId,
            account: account,
            appAccountToken: token,
            quantity: quantity
        )
        return try #require(result.transaction, "expected a purchase, got \(result)")
    }

    /// Drains the outbox and verifies every notification, with the signed data nested in it.
    func notifications() async throws -> [VerifiedNotification] {
        try await store.drainNotifications().map { try verifier.notification($0) }
    }

    /// Drains the outbox and returns each notification's type and subtype.
    func events() async throws -> [Event] {
        try await notifications().map(Event.init)
    }

    /// Days as a duration.
    static func days(_ count: Int) -> Duration {
        .seconds(count * 86_400)
    }

    /// A date a number of days after the start.
    static func day(_ count: Double) -> Date {
        SimulatedCatalog.start.addingTimeInterval(count * 86_400)
    }
}

/// A notification's type and subtype, for comparing lists of events.
struct Event: Hashable, CustomStringConvertible {
    var type: NotificationType?
    var subtype: NotificationSubtype?

    init(_ type: NotificationType, _ subtype: NotificationSubtype? = nil) {
        self.type = type
        self.subtype = subtype
    }

    init(_ notification: VerifiedNotification) {
        type = notification.payload.notificationType
        subtype = notification.payload.subtype
    }

    var description: String {
        [type?.rawValue, subtype?.rawValue].compactMap(\.self).joined(separator: "/")
    }
}
