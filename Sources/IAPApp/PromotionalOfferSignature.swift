#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// A promotional offer signed by the app's server with the version 1 signature (`PromotionalOfferV1SignatureCreator`
/// in `IAPCrypto`), which the app passes to the purchase unchanged.
///
/// The server signs the bundle id, this key id, the product id, the offer id, the appAccountToken of the purchase
/// (lowercase), the nonce (lowercase) and the timestamp; the App Store checks the signature against the
/// subscription key and accepts it for 24 hours. The purchase must carry the same appAccountToken: ask the
/// coordinator for it first (``PurchaseCoordinator/appAccountToken(for:)``), have the server sign it, and pass it in
/// ``PurchaseOptions/appAccountToken``.
///
/// Its JSON form, which a server can send as it is: `{"offerId", "keyId", "nonce", "signature", "timestamp"}`, the
/// signature in standard base64 (as `PromotionalOfferV1SignatureCreator.signature(...)` returns it), the timestamp
/// in milliseconds since 1970.
public struct PromotionalOfferSignature: Sendable, Hashable, Codable {
    /// The promotional offer's id in App Store Connect.
    public var offerId: String
    /// The id of the in-app purchase key that signed.
    public var keyId: String
    /// The nonce that was signed.
    public var nonce: UUID
    /// The DER ECDSA signature in standard base64.
    public var signature: String
    /// When the server signed, in milliseconds since 1970.
    public var timestamp: Int64

    /// Creates a signed offer.
    ///
    /// - Parameters:
    ///   - offerId: The promotional offer's id.
    ///   - keyId: The signing key's id.
    ///   - nonce: The nonce that was signed.
    ///   - signature: The signature in standard base64.
    ///   - timestamp: When it was signed, in milliseconds since 1970.
    public init(offerId: String, keyId: String, nonce: UUID, signature: String, timestamp: Int64) {
        self.offerId = offerId
        self.keyId = keyId
        self.nonce = nonce
        self.signature = signature
        self.timestamp = timestamp
    }

    /// The signature's bytes (what StoreKit takes), or `nil` when ``signature`` is not standard base64.
    public var signatureData: Data? {
        Data(base64Encoded: signature)
    }
}
