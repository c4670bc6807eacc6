public import IAPCore
/// A page of a customer's transaction history: the body of the App Store Server API's Get Transaction History.
///
/// Mirrors Apple's `HistoryResponse` (`GET /inApps/v2/history/{transactionId}`), with Apple's JSON names. Pass
/// ``revision`` back to get the next page while ``hasMore`` is `true`; keep the last revision to resume later
/// and receive only the transactions that are new or changed (refunded, upgraded, ...) since.
public struct HistoryResponse: Codable, Hashable, Sendable {
    /// The token to pass as `revision` to get the next page, or later to get only what changed.
    public var revision: String?
    /// Whether more transactions follow this page.
    public var hasMore: Bool?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The App Store identifier of the app.
    public var appAppleId: Int64?
    /// The environment of the transactions.
    public var environment: AppStoreEnvironment?
    /// Up to 20 signed transactions (`JWSTransaction`).
    public var signedTransactions: [String]?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        revision: String? = nil,
        hasMore: Bool? = nil,
        bundleId: String? = nil,
        appAppleId: Int64? = nil,
        environment: AppStoreEnvironment? = nil,
        signedTransactions: [String]? = nil
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}
