/// The parts of an Xcode `.storekit` file (format versions 3 to 5) that a catalog needs.
///
/// Apple does not publish the schema; this follows the files Xcode writes. Keys a catalog has no use for
/// (prices, offers, billing plans, policies) are ignored, and missing arrays count as empty.
struct StoreKitConfigurationFile: Decodable {
    /// The file's `version` object.
    struct Version: Decodable {
        var major: Int
        var minor: Int?
    }

    /// One entry of a product's `localizations`.
    struct Localization: Decodable {
        var displayName: String?
        var locale: String?
    }

    /// A product in `products`, `nonRenewingSubscriptions` or a group's `subscriptions`.
    struct Product: Decodable {
        var productID: String
        var type: String
        var referenceName: String?
        var familyShareable: Bool?
        var localizations: [Localization]?
        var subscriptionGroupID: String?
        var groupNumber: Int?
        var recurringSubscriptionPeriod: String?

        /// The product's kind, from its `type`.
        var kind: ProductKind? {
            switch type {
            case "Consumable": .consumable
            case "NonConsumable": .nonConsumable
            case "NonRenewingSubscription": .nonRenewing
            case "RecurringSubscription": .autoRenewable
            default: nil
            }
        }

        /// The first localization's display name, or the reference name when that is missing or empty.
        var displayName: String? {
            if let name = localizations?.first?.displayName, !name.isEmpty {
                return name
            }
            return referenceName
        }
    }

    /// An entry of `subscriptionGroups`.
    struct SubscriptionGroup: Decodable {
        var id: String?
        var name: String?
        var subscriptions: [Product]?
    }

    /// One entry of the settings' `_storeKitErrors`.
    struct StoreKitError: Decodable {
        var name: String?
        var enabled: Bool?
    }

    /// The file's `settings` object.
    struct Settings: Decodable {
        var askToBuyEnabled: Bool?
        var billingIssuesEnabled: Bool?
        var billingGracePeriodEnabled: Bool?
        var renewalBillingIssuesEnabled: Bool?
        var failTransactionsEnabled: Bool?
        var disableDialogs: Bool?
        var locale: String?
        var storefront: String?
        var timeRate: Int?
        var storeKitErrors: [StoreKitError]?

        private enum CodingKeys: String, CodingKey {
            case askToBuyEnabled = "_askToBuyEnabled"
            case billingIssuesEnabled = "_billingIssuesEnabled"
            case billingGracePeriodEnabled = "_billingGracePeriodEnabled"
            case renewalBillingIssuesEnabled = "_renewalBillingIssuesEnabled"
            case failTransactionsEnabled = "_failTransactionsEnabled"
            case disableDialogs = "_disableDialogs"
            case locale = "_locale"
            case storefront = "_storefront"
            case timeRate = "_timeRate"
            case storeKitErrors = "_storeKitErrors"
        }

        /// The settings with `SKTestSession`'s defaults for what the file leaves out.
        var configurationSettings: StoreKitConfigurationSettings {
            let defaults = StoreKitConfigurationSettings()
            return StoreKitConfigurationSettings(
                askToBuyEnabled: askToBuyEnabled ?? defaults.askToBuyEnabled,
                billingIssuesEnabled: billingIssuesEnabled ?? defaults.billingIssuesEnabled,
                billingGracePeriodEnabled: billingGracePeriodEnabled ?? defaults.billingGracePeriodEnabled,
                renewalBillingIssuesEnabled: renewalBillingIssuesEnabled ?? defaults.renewalBillingIssuesEnabled,
                failTransactionsEnabled: failTransactionsEnabled ?? defaults.failTransactionsEnabled,
                disableDialogs: disableDialogs ?? defaults.disableDialogs,
                locale: locale ?? defaults.locale,
                storefront: storefront ?? defaults.storefront,
                timeRate: timeRate ?? defaults.timeRate,
                failingStoreKitAPIs: (storeKitErrors ?? []).compactMap { $0.enabled == true ? $0.name : nil }
            )
        }
    }

    var version: Version
    var products: [Product]?
    var nonRenewingSubscriptions: [Product]?
    var subscriptionGroups: [SubscriptionGroup]?
    var settings: Settings?
}
