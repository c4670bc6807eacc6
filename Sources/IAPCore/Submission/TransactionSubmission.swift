/// A signed transaction on its way to the server, with the context the app knows: the body of
/// `POST /iap/v1/transactions`.
public struct TransactionSubmission: Sendable, Hashable, Codable {
    /// The JWS from the device's store (StoreKit's `jwsRepresentation`).
    public var signedTransaction: String
    /// The business user the purchase is for, or `nil` to let the server resolve it from the transaction's
    /// appAccountToken binding.
    public var userId: String?
    /// The business order id the purchase was made for, if any.
    public var orderId: String?
    /// The App Store's signed app transaction (StoreKit's `AppTransaction.shared`, JWS), when the app sends it:
    /// the customer's `appTransactionId` and original app version, for a server that verifies it (``Verifier``,
    /// kind `appTransaction`). ``TransactionSubmissionHandler`` verifies it and records its `appTransactionId` against
    /// the user (event `submission.appTransaction`); it is left out of the JSON when `nil`.
    public var signedAppTransaction: String?

    /// Creates a submission.
    ///
    /// - Parameters:
    ///   - signedTransaction: The JWS.
    ///   - userId: The business user, if known.
    ///   - orderId: The business order id, if any.
    ///   - signedAppTransaction: The signed app transaction, if the app sends it.
    public init(
        signedTransaction: String,
        userId: String?,
        orderId: String? = nil,
        signedAppTransaction: String? = nil
    ) {
        self.signedTransaction = signedTransaction
        self.userId = userId
        self.orderId = orderId
        self.signedAppTransaction = signedAppTransaction
    }
}
