import IAPCore
/// The in-app purchases of one order: the body of the App Store Server API's Look Up Order ID.
///
/// Mirrors Apple's `OrderLookupResponse` (`GET /inApps/v1/lookup/{orderId}`), with Apple's JSON names. The order
/// id is the one on the customer's emailed receipt, such as `MK5TTTVWJH`.
public struct OrderLookupResponse: Codable, Hashable, Sendable {
    /// Whether the order id is valid.
    public var status: OrderLookupStatus?
    /// The signed transactions (`JWSTransaction`) of the order; empty when the status is invalid.
    public var signedTransactions: [String]?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(status: OrderLookupStatus? = nil, signedTransactions: [String]? = nil) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}
