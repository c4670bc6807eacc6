import IAPCore
/// A request to extend the renewal date of one subscription: the body of the App Store Server API's Extend a
/// Subscription Renewal Date.
///
/// Mirrors Apple's `ExtendRenewalDateRequest` (`PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`), with
/// Apple's JSON names. Apple uses ``requestIdentifier`` to recognise a repeated request, which is what makes the
/// request safe to retry.
public struct ExtendRenewalDateRequest: Codable, Hashable, Sendable {
    /// The number of days to extend by, 1 to 90.
    public var extendByDays: Int32?
    /// Why.
    public var extendReasonCode: ExtendReasonCode?
    /// A unique identifier of this request, such as a UUID, at most 128 characters.
    public var requestIdentifier: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        extendByDays: Int32? = nil,
        extendReasonCode: ExtendReasonCode? = nil,
        requestIdentifier: String? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}
