#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// Creates the version 1 promotional offer signature that StoreKit's `Product.PurchaseOption.promotionalOffer`
/// (and StoreKit 1's `SKPaymentDiscount`) carry.
///
/// The signed string joins, with U+2063 INVISIBLE SEPARATOR: bundle id, key id, product id, offer id,
/// the lowercased appAccountToken (or an empty string), the lowercased nonce and the timestamp in
/// milliseconds. The signature is ECDSA P-256 with SHA-256, DER-encoded, in standard base64: the
/// opposite encoding of a JWS.
public struct PromotionalOfferV1SignatureCreator: Sendable {
    /// The separator Apple specifies.
    public static let separator = "\u{2063}"

    private let key: P256PrivateKey
    private let keyId: String
    private let bundleId: String

    /// Creates a signature creator.
    ///
    /// - Parameters:
    ///   - privateKey: The App Store Connect in-app purchase key.
    ///   - keyId: Its key id.
    ///   - bundleId: The app's bundle id.
    public init(privateKey: P256PrivateKey, keyId: String, bundleId: String) {
        self.key = privateKey
        self.keyId = keyId
        self.bundleId = bundleId
    }

    /// The exact string that is signed.
    ///
    /// - Parameters:
    ///   - productId: The subscription's product id.
    ///   - offerId: The promotional offer's id.
    ///   - appAccountToken: The appAccountToken the purchase will carry, if any.
    ///   - nonce: A fresh nonce for this signature.
    ///   - timestamp: When the signature was made, in milliseconds since 1970.
    /// - Returns: The payload string.
    public func payload(
        productId: String,
        offerId: String,
        appAccountToken: String?,
        nonce: UUID,
        timestamp: Int64
    ) -> String {
        [
            bundleId, keyId, productId, offerId, (appAccountToken ?? "").lowercased(),
            nonce.uuidString.lowercased(), String(timestamp),
        ]
        .joined(separator: Self.separator)
    }

    /// Signs a promotional offer.
    ///
    /// - Parameters:
    ///   - productId: The subscription's product id.
    ///   - offerId: The promotional offer's id.
    ///   - appAccountToken: The appAccountToken the purchase will carry, if any.
    ///   - nonce: A fresh nonce for this signature.
    ///   - timestamp: When the signature was made, in milliseconds since 1970. Apple accepts it for 24 hours.
    /// - Returns: The DER signature in standard base64.
    /// - Throws: ``IAPError`` if an argument is empty or signing fails.
    public func signature(
        productId: String,
        offerId: String,
        appAccountToken: String?,
        nonce: UUID,
        timestamp: Int64
    ) throws -> String {
        guard !productId.isEmpty, !offerId.isEmpty else {
            throw IAPError(.invalidArgument, "the product id and offer id must not be empty")
        }
        let message = payload(
            productId: productId,
            offerId: offerId,
            appAccountToken: appAccountToken,
            nonce: nonce,
            timestamp: timestamp
        )
        return Base64.encodeStandard(try key.derSignature(for: Array(message.utf8)))
    }
}
