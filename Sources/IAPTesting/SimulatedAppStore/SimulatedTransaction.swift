public import IAPCore

/// A transaction made by ``SimulatedAppStore``: its decoded payload and the JWS the store signed it as.
///
/// ``signedTransaction`` is exactly what StoreKit's `jwsRepresentation` and the App Store Server API hand out; verify
/// it with an `AppStoreSignedDataVerifier` configured with ``SimulatedAppStore/verifierConfiguration``.
public struct SimulatedTransaction: Sendable, Hashable {
    /// The transaction as signed.
    public var payload: TransactionPayload
    /// The compact JWS (`JWSTransaction`) of ``payload``.
    public var signedTransaction: String
    /// The order id on the customer's receipt (`M` and nine letters or digits), or `nil` for a family-shared
    /// transaction, which has no order of its own.
    public var orderId: String?

    /// Creates a value.
    ///
    /// - Parameters:
    ///   - payload: The transaction as signed.
    ///   - signedTransaction: The compact JWS of the payload.
    ///   - orderId: The order id, if the transaction has one.
    public init(payload: TransactionPayload, signedTransaction: String, orderId: String?) {
        self.payload = payload
        self.signedTransaction = signedTransaction
        self.orderId = orderId
    }

    /// The transaction identifier; never empty for a transaction the store made.
    public var transactionId: String { payload.transactionId ?? "" }

    /// The original transaction identifier; never empty for a transaction the store made.
    public var originalTransactionId: String { payload.originalTransactionId ?? "" }
}
