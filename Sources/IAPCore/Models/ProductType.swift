/// The kind of in-app purchase a transaction is for.
///
/// Mirrors Apple's `Type`, the type of the `type` field of a signed transaction.
///
/// The set is open: a value Apple adds later decodes, compares and re-encodes unchanged, and
/// ``isKnown`` is `false` for it. Never `switch` exhaustively over the known values.
public struct ProductType: OpenEnumeration {
    /// The value as it appears on the wire.
    public let rawValue: String

    /// Creates a value from its wire form, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// An auto-renewable subscription (`Auto-Renewable Subscription`).
    public static let autoRenewableSubscription = ProductType(rawValue: "Auto-Renewable Subscription")
    /// A non-consumable in-app purchase (`Non-Consumable`).
    public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
    /// A consumable in-app purchase (`Consumable`).
    public static let consumable = ProductType(rawValue: "Consumable")
    /// A non-renewing subscription (`Non-Renewing Subscription`).
    public static let nonRenewingSubscription = ProductType(rawValue: "Non-Renewing Subscription")

    /// Every value this version of swift-iap knows, in Apple's documented order.
    public static let allKnown: [ProductType] = [
        .autoRenewableSubscription,
        .nonConsumable,
        .consumable,
        .nonRenewingSubscription,
    ]
}
