/// The app and signed data a notification is about.
///
/// Mirrors Apple's `data` object of a notification payload, the type Apple documents as `Data` (`NotificationData`
/// in Apple's Swift library, to avoid Foundation's `Data`). ``signedTransactionInfo`` and ``signedRenewalInfo`` are
/// compact JWS still to be verified.
public struct NotificationData: Codable, Hashable, Sendable {
    /// The environment the notification is for.
    public var environment: AppStoreEnvironment?
    /// The App Store identifier of the app; absent in the sandbox.
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The build version of the app.
    public var bundleVersion: String?
    /// The transaction, as a JWS to verify.
    public var signedTransactionInfo: String?
    /// The subscription renewal information, as a JWS to verify.
    public var signedRenewalInfo: String?
    /// The status of the subscription.
    public var status: SubscriptionStatus?
    /// The reason the customer gave for a refund request, for `CONSUMPTION_REQUEST`.
    public var consumptionRequestReason: ConsumptionRequestReason?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        environment: AppStoreEnvironment? = nil,
        appAppleId: Int64? = nil,
        bundleId: String? = nil,
        bundleVersion: String? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil,
        status: SubscriptionStatus? = nil,
        consumptionRequestReason: ConsumptionRequestReason? = nil
    ) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
    }
}
