#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// The claims of a signed transaction read without verifying it: only to route it on the device.
///
/// The app reads the transaction id, product and appAccountToken to know which purchase a JWS is, whom it
/// belongs to and what to finish. Nothing is granted on these claims: the server verifies the JWS before it
/// delivers (``DeliveryPipeline``), and the app finishes a transaction only after the server confirmed it.
public struct UnverifiedTransaction: Sendable, Hashable {
    /// The compact JWS, exactly as the store handed it out.
    public var signedTransaction: String
    /// The payload as it claims to be.
    public var payload: TransactionPayload
    /// The transaction id; never empty.
    public var transactionId: String
    /// The product id; never empty.
    public var productId: String

    /// Reads the payload of a compact JWS.
    ///
    /// - Parameter signedTransaction: The JWS.
    /// - Throws: ``IAPError`` `.malformedSignedData` when it is not three base64url parts with a JSON transaction
    ///   payload that names a transaction id and a product id.
    public init(signedTransaction: String) throws {
        let payload = try UnverifiedPayload.decode(
            TransactionPayload.self,
            from: signedTransaction,
            what: "transaction"
        )
        guard let transactionId = payload.transactionId, !transactionId.isEmpty else {
            throw IAPError(.malformedSignedData, "the signed transaction has no transactionId")
        }
        guard let productId = payload.productId, !productId.isEmpty else {
            throw IAPError(.malformedSignedData, "transaction \(transactionId) has no productId")
        }
        self.signedTransaction = signedTransaction
        self.payload = payload
        self.transactionId = transactionId
        self.productId = productId
    }

    /// The appAccountToken in lowercase canonical form, or `nil`.
    public var appAccountToken: String? {
        payload.appAccountToken.flatMap(AppAccountToken.normalized)
    }
}
