/// The result of a mass subscription renewal-date extension.
///
/// Mirrors Apple's `Summary`, sent in `RENEWAL_EXTENSION` notifications with subtype `SUMMARY`.
public struct NotificationSummary: Codable, Hashable, Sendable {
    /// The environment of the extension.
    public var environment: AppStoreEnvironment?
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The product identifier of the extended subscriptions.
    public var productId: String?
    /// The UUID the developer gave the extension request.
    public var requestIdentifier: String?
    /// The storefronts (ISO 3166-1 alpha-3) the extension applied to.
    public var storefrontCountryCodes: [String]?
    /// The number of subscriptions extended.
    public var succeededCount: Int64?
    /// The number of subscriptions that could not be extended.
    public var failedCount: Int64?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        environment: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        productId: String? = nil,
        requestIdentifier: String? = nil,
        storefrontCountryCodes: [String]? = nil,
        succeededCount: Int64? = nil,
        failedCount: Int64? = nil
    ) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.productId = productId
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}
