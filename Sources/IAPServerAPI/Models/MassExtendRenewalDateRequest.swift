import IAPCore
/// A request to extend the renewal date of every active subscriber of a product: the body of the App Store Server
/// API's Extend Subscription Renewal Dates for All Active Subscribers.
///
/// Mirrors Apple's `MassExtendRenewalDateRequest` (`POST /inApps/v1/subscriptions/extend/mass`), with Apple's JSON
/// names.
public struct MassExtendRenewalDateRequest: Codable, Hashable, Sendable {
    /// The number of days to extend by, 1 to 90.
    public var extendByDays: Int32?
    /// Why.
    public var extendReasonCode: ExtendReasonCode?
    /// A unique identifier of this request, such as a UUID, at most 128 characters; pass it to the status endpoint.
    public var requestIdentifier: String?
    /// Only subscribers of these storefronts (ISO 3166-1 alpha-3); `nil` for all.
    public var storefrontCountryCodes: [String]?
    /// The product identifier of the subscription.
    public var productId: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        extendByDays: Int32? = nil,
        extendReasonCode: ExtendReasonCode? = nil,
        requestIdentifier: String? = nil,
        storefrontCountryCodes: [String]? = nil,
        productId: String? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.productId = productId
    }
}
