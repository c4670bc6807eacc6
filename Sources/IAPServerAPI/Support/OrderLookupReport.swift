import IAPCore
/// What a support lookup of an order id found (and, with redelivery, did).
public struct OrderLookupReport: Codable, Sendable, Hashable {
    /// The order id asked for.
    public var orderId: String
    /// Whether Apple knows the order (status valid); `false` for an order id that is invalid or has no in-app
    /// purchases of the app.
    public var found: Bool
    /// The order's transactions that verified.
    public var transactions: [OrderLookupItem]
    /// Signed transactions that did not verify, as `code: message`.
    public var rejectedSignatures: [String]
    /// Whether a redelivery ran (and was audited).
    public var redelivered: Bool
}
