import IAPCore
/// Information about a purchase for which the customer asked a refund: the body of the App Store Server API's Send
/// Consumption Information (version 2).
///
/// Mirrors Apple's `ConsumptionRequest` (`PUT /inApps/v2/transactions/consumption/{transactionId}`), with Apple's
/// JSON names. Send it within 12 hours of a `CONSUMPTION_REQUEST` notification, and only when the customer
/// consented.
public struct ConsumptionRequest: Codable, Hashable, Sendable {
    /// Whether the customer consented to share the information; Apple requires `true`.
    public var customerConsented: Bool
    /// How much of the purchase was consumed, in thousandths (0 to 100000).
    public var consumptionPercentage: Int32?
    /// Whether the app delivered the purchase.
    public var deliveryStatus: DeliveryStatus?
    /// The refund outcome the developer prefers.
    public var refundPreference: RefundPreference?
    /// Whether the app offered a free sample or trial before the purchase.
    public var sampleContentProvided: Bool

    /// Creates a value from its fields; each optional one defaults to `nil`.
    public init(
        customerConsented: Bool,
        consumptionPercentage: Int32? = nil,
        deliveryStatus: DeliveryStatus? = nil,
        refundPreference: RefundPreference? = nil,
        sampleContentProvided: Bool
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }
}
