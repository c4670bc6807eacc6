public import IAPCore

extension SimulatedAppStore {
    /// The app, storefront, prices and subscription rules a ``SimulatedAppStore`` simulates.
    public struct Configuration: Sendable, Hashable {
        /// The bundle identifier of the app, in every transaction and notification.
        public var bundleId: String
        /// The App Store identifier of the app. Notifications carry it in Production only, as Apple's do; API
        /// responses always.
        public var appAppleId: Int64
        /// The environment the store signs for: `.sandbox` (the default) or `.production`.
        public var environment: AppStoreEnvironment
        /// The app build version in notification data (`bundleVersion`).
        public var bundleVersion: String
        /// The length of the billing grace period in days (Apple offers 3, 16 or 28), or `nil` for none: a failed
        /// renewal then goes straight to billing retry.
        public var gracePeriodDays: Int?
        /// How many days after a failed renewal the App Store gives up retrying: 60, as Apple does.
        public var billingRetryDays: Int
        /// The storefront country code (ISO 3166-1 alpha-3).
        public var storefront: String
        /// Apple's identifier of ``storefront``.
        public var storefrontId: String
        /// The currency of every price (ISO 4217).
        public var currency: String
        /// The price, in milliunits of ``currency``, of products that have none in ``prices``.
        public var defaultPrice: Int64
        /// Prices in milliunits of ``currency`` (10990 is 10.99), by product id.
        public var prices: [String: Int64]
        /// Subscription periods of auto-renewable subscriptions, by product id. A product without one renews every
        /// `duration` of its catalog entry, or monthly.
        public var subscriptionPeriods: [String: SubscriptionPeriod]
        /// The products that Family Sharing shares with the purchaser's family (non-consumables and auto-renewable
        /// subscriptions only, as on the App Store).
        public var familyShareableProductIds: Set<String>
        /// The first transaction identifier the store hands out; later ones count up from it.
        public var firstTransactionId: UInt64
        /// The subscription offers of the store's auto-renewable subscriptions.
        public var subscriptionOffers: [SimulatedSubscriptionOffer]
        /// The in-app purchase keys that sign promotional offers and introductory offer eligibility, by key id: the
        /// PEM of each public key (App Store Connect holds the public half of the `.p8` the app's server signs with).
        public var offerSigningKeys: [String: String]
        /// The issuer id that JWS offer signatures must carry in `iss`, or `nil` to accept any.
        public var offerIssuerId: String?
        /// The app version a customer's first download had, in the app transaction (`originalApplicationVersion`).
        public var originalApplicationVersion: String
        /// Auto-renewable subscriptions billed with a commitment (`billingPlanType` `MONTHLY`), by product id: how
        /// many billing periods one commitment lasts (12 for Apple's monthly plan with a 12-month commitment).
        /// Turning auto-renew off during a commitment ends the subscription when the commitment ends, not before.
        public var commitmentPlans: [String: Int]

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - bundleId: The bundle identifier of the app.
        ///   - appAppleId: The App Store identifier of the app.
        ///   - environment: `.sandbox` or `.production`.
        ///   - bundleVersion: The app build version.
        ///   - gracePeriodDays: The billing grace period in days, or `nil` for none.
        ///   - billingRetryDays: How long billing retry lasts, in days.
        ///   - storefront: The storefront country code.
        ///   - storefrontId: Apple's identifier of the storefront.
        ///   - currency: The currency of every price.
        ///   - defaultPrice: The price of products without one in `prices`, in milliunits.
        ///   - prices: Prices by product id, in milliunits.
        ///   - subscriptionPeriods: Subscription periods by product id.
        ///   - familyShareableProductIds: The products Family Sharing shares.
        ///   - firstTransactionId: The first transaction identifier.
        ///   - subscriptionOffers: The subscription offers.
        ///   - offerSigningKeys: The public keys that sign offers, by key id (PEM).
        ///   - offerIssuerId: The issuer id JWS offer signatures carry, if checked.
        ///   - originalApplicationVersion: The app version of customers' first downloads.
        ///   - commitmentPlans: Billing periods per commitment, by product id.
        public init(
            bundleId: String = "com.example.app",
            appAppleId: Int64 = 1_234_567_890,
            environment: AppStoreEnvironment = .sandbox,
            bundleVersion: String = "1",
            gracePeriodDays: Int? = nil,
            billingRetryDays: Int = 60,
            storefront: String = "USA",
            storefrontId: String = "143441",
            currency: String = "USD",
            defaultPrice: Int64 = 990,
            prices: [String: Int64] = [:],
            subscriptionPeriods: [String: SubscriptionPeriod] = [:],
            familyShareableProductIds: Set<String> = [],
            firstTransactionId: UInt64 = 2_000_000_000_000_001,
            subscriptionOffers: [SimulatedSubscriptionOffer] = [],
            offerSigningKeys: [String: String] = [:],
            offerIssuerId: String? = nil,
            originalApplicationVersion: String = "1",
            commitmentPlans: [String: Int] = [:]
        ) {
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.environment = environment
            self.bundleVersion = bundleVersion
            self.gracePeriodDays = gracePeriodDays
            self.billingRetryDays = billingRetryDays
            self.storefront = storefront
            self.storefrontId = storefrontId
            self.currency = currency
            self.defaultPrice = defaultPrice
            self.prices = prices
            self.subscriptionPeriods = subscriptionPeriods
            self.familyShareableProductIds = familyShareableProductIds
            self.firstTransactionId = firstTransactionId
            self.subscriptionOffers = subscriptionOffers
            self.offerSigningKeys = offerSigningKeys
            self.offerIssuerId = offerIssuerId
            self.originalApplicationVersion = originalApplicationVersion
            self.commitmentPlans = commitmentPlans
        }
    }
}
