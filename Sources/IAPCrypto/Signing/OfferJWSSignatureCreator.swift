#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPCore

/// Creates the JWS signatures that StoreKit 2 purchase options carry: the version 2 promotional offer
/// signature and the introductory offer eligibility signature.
///
/// Each is a compact ES256 JWS with header `kid` and `typ: JWT`, and claims `iss`, `bid`, `aud`
/// (the feature), `iat` (seconds) and `nonce` (a fresh UUID), plus the feature's own claims. There is
/// no `exp`.
public struct OfferJWSSignatureCreator: Sendable {
    private let signer: JWSSigner
    private let issuerId: String
    private let bundleId: String
    private let clock: any WallClock

    /// Creates a signature creator.
    ///
    /// - Parameters:
    ///   - privateKey: The App Store Connect in-app purchase key.
    ///   - keyId: Its key id.
    ///   - issuerId: The issuer id.
    ///   - bundleId: The app's bundle id.
    ///   - clock: The clock for `iat`.
    public init(
        privateKey: P256PrivateKey,
        keyId: String,
        issuerId: String,
        bundleId: String,
        clock: any WallClock = SystemClock()
    ) {
        self.signer = JWSSigner(key: privateKey, keyId: keyId, type: "JWT")
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.clock = clock
    }

    private struct PromotionalOfferClaims: Encodable {
        let iss: String
        let bid: String
        let aud = "promotional-offer"
        let iat: Int64
        let nonce: String
        let productId: String
        let offerIdentifier: String
        let transactionId: String?
    }

    private struct IntroductoryOfferEligibilityClaims: Encodable {
        let iss: String
        let bid: String
        let aud = "introductory-offer-eligibility"
        let iat: Int64
        let nonce: String
        let productId: String
        let allowIntroductoryOffer: Bool
        let transactionId: String
    }

    /// Signs a version 2 promotional offer.
    ///
    /// - Parameters:
    ///   - productId: The subscription's product id.
    ///   - offerIdentifier: The promotional offer's id.
    ///   - transactionId: Any transaction id of the customer (recommended), or `nil`.
    /// - Returns: The compact JWS.
    /// - Throws: ``IAPError`` if an argument is empty or signing fails.
    public func promotionalOfferSignature(
        productId: String,
        offerIdentifier: String,
        transactionId: String? = nil
    ) throws -> String {
        guard !productId.isEmpty, !offerIdentifier.isEmpty else {
            throw IAPError(.invalidArgument, "the product id and offer identifier must not be empty")
        }
        return try signer.sign(
            PromotionalOfferClaims(
                iss: issuerId,
                bid: bundleId,
                iat: issuedAt(),
                nonce: UUID().uuidString.lowercased(),
                productId: productId,
                offerIdentifier: offerIdentifier,
                transactionId: transactionId
            )
        )
    }

    /// Signs an introductory offer eligibility decision.
    ///
    /// - Parameters:
    ///   - productId: The subscription's product id.
    ///   - allowIntroductoryOffer: Whether the customer may have the introductory offer.
    ///   - transactionId: Any transaction id of the customer.
    /// - Returns: The compact JWS.
    /// - Throws: ``IAPError`` if an argument is empty or signing fails.
    public func introductoryOfferEligibilitySignature(
        productId: String,
        allowIntroductoryOffer: Bool,
        transactionId: String
    ) throws -> String {
        guard !productId.isEmpty, !transactionId.isEmpty else {
            throw IAPError(.invalidArgument, "the product id and transaction id must not be empty")
        }
        return try signer.sign(
            IntroductoryOfferEligibilityClaims(
                iss: issuerId,
                bid: bundleId,
                iat: issuedAt(),
                nonce: UUID().uuidString.lowercased(),
                productId: productId,
                allowIntroductoryOffer: allowIntroductoryOffer,
                transactionId: transactionId
            )
        )
    }

    private func issuedAt() -> Int64 {
        Int64(clock.now.timeIntervalSince1970.rounded(.down))
    }
}
