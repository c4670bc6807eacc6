import IAPCore
/// The signed app transaction of a customer: the body of the App Store Server API's Get App Transaction Info.
///
/// Mirrors Apple's `AppTransactionInfoResponse` (`GET /inApps/v1/transactions/appTransactions/{transactionId}`),
/// with Apple's JSON names.
public struct AppTransactionInfoResponse: Codable, Hashable, Sendable {
    /// The signed app transaction (`JWSAppTransaction`).
    public var signedAppTransactionInfo: String?

    /// Creates a value from its fields; each defaults to `nil`.
    public init(
        signedAppTransactionInfo: String? = nil
    ) {
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
