#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// What kind of in-app purchase a product is, as the business sells it.
public enum ProductKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// Bought again and again; each purchase adds units to a balance.
    case consumable
    /// Bought once and owned for good, unless refunded.
    case nonConsumable
    /// An auto-renewable subscription in a subscription group.
    case autoRenewable
    /// A subscription that does not renew: access for a fixed duration from purchase.
    case nonRenewing

    /// The App Store's `type` value for this kind.
    public var appStoreType: ProductType {
        switch self {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .autoRenewable: .autoRenewableSubscription
        case .nonRenewing: .nonRenewingSubscription
        }
    }
}

/// A calendar period, such as one month, as subscriptions and non-renewing durations use it.
public struct SubscriptionPeriod: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The unit of a period.
    public enum Unit: String, Codable, Sendable, Hashable {
        case day, week, month, year
    }

    /// How many units.
    public var value: Int
    /// The unit.
    public var unit: Unit

    /// Creates a period.
    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    /// Parses an ISO 8601 period of one unit, as Xcode's `.storekit` files write it (`P1M`, `P1Y`, `P7D`, `P2W`).
    ///
    /// - Parameter iso8601: The period text.
    /// - Returns: The period, or `nil` if the text is not a positive single-unit period.
    public init?(iso8601: String) {
        guard iso8601.hasPrefix("P"), let last = iso8601.last else { return nil }
        let number = iso8601.dropFirst().dropLast()
        guard let value = Int(number), value > 0 else { return nil }
        switch last {
        case "D": self.init(value: value, unit: .day)
        case "W": self.init(value: value, unit: .week)
        case "M": self.init(value: value, unit: .month)
        case "Y": self.init(value: value, unit: .year)
        default: return nil
        }
    }

    public var description: String {
        "P\(value)\(unit.rawValue.prefix(1).uppercased())"
    }

    /// `count` of these periods end to end, as one period: a 12-month commitment of a monthly plan, the whole of a
    /// three-month offer.
    ///
    /// - Parameter count: How many; values below 1 count as 1.
    public func repeated(_ count: Int) -> SubscriptionPeriod {
        SubscriptionPeriod(value: value * max(1, count), unit: unit)
    }

    /// The instant one period after `date`, in the Gregorian calendar in UTC.
    ///
    /// - Parameter date: The start.
    /// - Returns: The end.
    public func advance(_ date: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let component: Calendar.Component =
            switch unit {
            case .day: .day
            case .week: .weekOfYear
            case .month: .month
            case .year: .year
            }
        return calendar.date(byAdding: component, value: value, to: date) ?? date
    }
}

/// A product the business sells, and what buying it grants.
public struct CatalogProduct: Codable, Sendable, Hashable {
    /// The App Store product id.
    public var productId: String
    /// What kind of purchase it is.
    public var kind: ProductKind
    /// The subscription group, for auto-renewable subscriptions.
    public var subscriptionGroupId: String?
    /// The product's level in its subscription group: 1 is the highest tier, as in App Store Connect.
    public var groupLevel: Int?
    /// The entitlement ids a purchase unlocks (for example `"premium"`); by default the product's own id, in code
    /// as in a JSON catalog or a `.storekit` file.
    public var entitlements: [String]
    /// How many units one purchase of a consumable adds to the balance; 1 by default.
    public var unitsPerPurchase: Int
    /// How long a non-renewing subscription grants access; for an auto-renewable subscription, its
    /// renewal period (informational: the App Store's `expiresDate` decides).
    public var duration: SubscriptionPeriod?
    /// A human-readable name.
    public var displayName: String?
    /// Whether family members can share a purchase through Family Sharing; `false` by default.
    public var familyShareable: Bool

    /// Creates a product.
    ///
    /// - Parameters:
    ///   - productId: The App Store product id.
    ///   - kind: What kind of purchase it is.
    ///   - subscriptionGroupId: The subscription group, for auto-renewable subscriptions.
    ///   - groupLevel: The level in the subscription group, 1 the highest.
    ///   - entitlements: The entitlement ids a purchase unlocks; `nil` (the default) for the product's own id, as
    ///     a catalog file without `entitlements` says; `[]` for none.
    ///   - unitsPerPurchase: The units one purchase of a consumable adds.
    ///   - duration: The access of a non-renewing subscription; a subscription's renewal period.
    ///   - displayName: A human-readable name.
    ///   - familyShareable: Whether Family Sharing shares a purchase.
    public init(
        productId: String,
        kind: ProductKind,
        subscriptionGroupId: String? = nil,
        groupLevel: Int? = nil,
        entitlements: [String]? = nil,
        unitsPerPurchase: Int = 1,
        duration: SubscriptionPeriod? = nil,
        displayName: String? = nil,
        familyShareable: Bool = false
    ) {
        self.productId = productId
        self.kind = kind
        self.subscriptionGroupId = subscriptionGroupId
        self.groupLevel = groupLevel
        self.entitlements = entitlements ?? [productId]
        self.unitsPerPurchase = unitsPerPurchase
        self.duration = duration
        self.displayName = displayName
        self.familyShareable = familyShareable
    }
}

extension CatalogProduct {
    private enum CodingKeys: String, CodingKey {
        case productId, kind, subscriptionGroupId, groupLevel, entitlements, unitsPerPurchase, duration
        case displayName, familyShareable
    }

    /// Decodes a product; `entitlements` (then the product's own id), `unitsPerPurchase` and `familyShareable` may
    /// be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            productId: try container.decode(String.self, forKey: .productId),
            kind: try container.decode(ProductKind.self, forKey: .kind),
            subscriptionGroupId: try container.decodeIfPresent(String.self, forKey: .subscriptionGroupId),
            groupLevel: try container.decodeIfPresent(Int.self, forKey: .groupLevel),
            entitlements: try container.decodeIfPresent([String].self, forKey: .entitlements),
            unitsPerPurchase: try container.decodeIfPresent(Int.self, forKey: .unitsPerPurchase) ?? 1,
            duration: try container.decodeIfPresent(SubscriptionPeriod.self, forKey: .duration),
            displayName: try container.decodeIfPresent(String.self, forKey: .displayName),
            familyShareable: try container.decodeIfPresent(Bool.self, forKey: .familyShareable) ?? false
        )
    }
}
