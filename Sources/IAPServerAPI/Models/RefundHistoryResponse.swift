import IAPCore
/// A page of a customer's refunded and revoked transactions: the body of the App Store Server API's Get Refund
/// History.
///
/// Mirrors Apple's `RefundHistoryResponse` (`GET /inApps/v2/refund/lookup/{transactionId}`), with Apple's JSON
/// names. Pass ``revision`` back to get the next page while ``hasMore`` is `true`.
public struct RefundHistoryResponse: Codable, Hashable, Sendable {
    /// Up to 20 signed transactions (`JWSTransaction`), each with a `revocationDate`.
    public var signedTransactions: [String]?
    /// The token to pass as `revision` to get the next page, or later to get only new refunds.
    public var revision: String?
    /// Whether more transactions follow this page.
    public var hasMore: Bool?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(signedTransactions: [String]? = nil, revision: String? = nil, hasMore: Bool? = nil) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}
