public import IAPCore
/// The status of every auto-renewable subscription of a customer: the body of the App Store Server API's Get All
/// Subscription Statuses.
///
/// Mirrors Apple's `StatusResponse` (`GET /inApps/v1/subscriptions/{transactionId}`), with Apple's JSON names.
public struct StatusResponse: Codable, Hashable, Sendable {
    /// The environment of the subscriptions.
    public var environment: AppStoreEnvironment?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// One item per subscription group the customer has subscribed in.
    public var data: [SubscriptionGroupIdentifierItem]?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        environment: AppStoreEnvironment? = nil,
        bundleId: String? = nil,
        appAppleId: Int64? = nil,
        data: [SubscriptionGroupIdentifierItem]? = nil
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}
