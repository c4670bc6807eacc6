import IAPCore
/// One signed transaction: the body of the App Store Server API's Get Transaction Info.
///
/// Mirrors Apple's `TransactionInfoResponse` (`GET /inApps/v1/transactions/{transactionId}`), with Apple's JSON
/// names.
public struct TransactionInfoResponse: Codable, Hashable, Sendable {
    /// The signed transaction (`JWSTransaction`).
    public var signedTransactionInfo: String?

    /// Creates a value from its field.
    ///
    /// - Parameter signedTransactionInfo: The signed transaction.
    public init(signedTransactionInfo: String? = nil) {
        self.signedTransactionInfo = signedTransactionInfo
    }
}
