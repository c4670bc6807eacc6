#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPApp
import IAPCore
import IAPCrypto

/// Checks the offers of a purchase as the App Store does: the offer exists for the product, and a promotional
/// offer or an introductory offer eligibility carries a signature of a configured in-app purchase key that covers
/// this bundle, product, offer, appAccountToken and nonce, made less than 24 hours ago.
struct SimulatedOfferChecker {
    /// What a purchase's offers came to.
    struct Decision {
        /// The offer to apply, if any.
        var offer: SimulatedSubscriptionOffer?
        /// The server's signed introductory offer eligibility, if given.
        var introductoryEligibility: Bool?
        /// The nonces the signatures used, which the store then refuses to see again.
        var nonces: [String] = []
    }

    let configuration: SimulatedAppStore.Configuration
    let keys: [String: P256PublicKey]
    let now: Date

    /// How old a signature may be.
    static let signatureLifetime: TimeInterval = 24 * 3_600
    /// How far in the future a signature's time may be, for clocks that disagree a little.
    static let allowedSkew: TimeInterval = 60

    /// Checks a purchase's offer and introductory offer eligibility.
    ///
    /// - Parameters:
    ///   - offer: The offer the purchase names.
    ///   - eligibility: The server's signed introductory offer eligibility (compact JWS).
    ///   - productId: The product bought.
    ///   - appAccountToken: The purchase's token, lowercase.
    ///   - accountTransactionIds: The customer's transaction ids, which a JWS's `transactionId` must be one of.
    ///   - usedNonces: The nonces seen before.
    /// - Returns: What to apply.
    /// - Throws: ``IAPError`` `offerInvalid`.
    func check(
        offer: PurchaseOffer?,
        eligibility: String?,
        productId: String,
        appAccountToken: String?,
        accountTransactionIds: Set<String>,
        usedNonces: Set<String>
    ) throws -> Decision {
        var decision = Decision()
        switch offer {
        case .promotional(let signature)?:
            let definition = try definition(signature.offerId, of: .promotional, for: productId)
            try checkV1(signature, productId: productId, appAccountToken: appAccountToken)
            decision.nonces.append("v1:" + signature.nonce.uuidString.lowercased())
            decision.offer = definition
        case .promotionalJWS(let offerId, let compactJWS)?:
            let definition = try definition(offerId, of: .promotional, for: productId)
            let claims = try checkJWS(
                compactJWS,
                audience: "promotional-offer",
                productId: productId,
                accountTransactionIds: accountTransactionIds
            )
            guard claims.offerIdentifier == offerId else {
                throw IAPError(.offerInvalid, "the promotional offer signature is for another offer")
            }
            decision.nonces.append("jws:" + (claims.nonce ?? ""))
            decision.offer = definition
        case .winBack(let offerId)?:
            decision.offer = try definition(offerId, of: .winBack, for: productId)
        case nil:
            break
        }
        if let eligibility {
            let claims = try checkJWS(
                eligibility,
                audience: "introductory-offer-eligibility",
                productId: productId,
                accountTransactionIds: accountTransactionIds
            )
            guard let allowed = claims.allowIntroductoryOffer, claims.transactionId != nil else {
                throw IAPError(
                    .offerInvalid,
                    "the introductory offer eligibility needs allowIntroductoryOffer and transactionId"
                )
            }
            decision.introductoryEligibility = allowed
            decision.nonces.append("jws:" + (claims.nonce ?? ""))
        }
        let nonces = decision.nonces
        guard Set(nonces).count == nonces.count, usedNonces.isDisjoint(with: nonces) else {
            throw IAPError(.offerInvalid, "an offer signature's nonce was used before")
        }
        return decision
    }

    private func definition(
        _ offerId: String,
        of kind: SimulatedSubscriptionOffer.Kind,
        for productId: String
    ) throws -> SimulatedSubscriptionOffer {
        guard
            let offer = configuration.subscriptionOffers.first(where: {
                $0.id == offerId && $0.kind == kind && $0.productId == productId
            })
        else {
            throw IAPError(.offerInvalid, "\(productId) has no \(kind) offer '\(offerId)'")
        }
        return offer
    }

    /// Checks a version 1 signature: ECDSA P-256 over the joined fields, DER, standard base64.
    private func checkV1(_ signature: PromotionalOfferSignature, productId: String, appAccountToken: String?) throws {
        guard let key = keys[signature.keyId] else {
            throw IAPError(.offerInvalid, "the promotional offer is signed with an unknown key '\(signature.keyId)'")
        }
        guard let der = signature.signatureData else {
            throw IAPError(.offerInvalid, "the promotional offer signature is not base64")
        }
        let message = [
            configuration.bundleId, signature.keyId, productId, signature.offerId, appAccountToken ?? "",
            signature.nonce.uuidString.lowercased(), String(signature.timestamp),
        ]
        .joined(separator: "\u{2063}")
        guard key.isValidDERSignature(Array(der), for: Array(message.utf8)) else {
            throw IAPError(.offerInvalid, "the promotional offer signature does not verify")
        }
        try checkAge(Double(signature.timestamp) / 1_000)
    }

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
        var typ: String?
    }

    private struct Claims: Decodable {
        var iss: String?
        var bid: String?
        var aud: String?
        var iat: Double?
        var nonce: String?
        var productId: String?
        var offerIdentifier: String?
        var transactionId: String?
        var allowIntroductoryOffer: Bool?
    }

    /// Checks a compact ES256 JWS of the app's server and returns its claims.
    private func checkJWS(
        _ token: String,
        audience: String,
        productId: String,
        accountTransactionIds: Set<String>
    ) throws -> Claims {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 16 * 1024 }),
            let headerBytes = Base64.decodeURL(segments[0]),
            let claimBytes = Base64.decodeURL(segments[1]),
            let signature = Base64.decodeURL(segments[2])
        else {
            throw IAPError(.offerInvalid, "the \(audience) signature is not a compact JWS")
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)), header.alg == "ES256",
            let keyId = header.kid, let key = keys[keyId]
        else {
            throw IAPError(.offerInvalid, "the \(audience) signature is not ES256 with a known key id")
        }
        let signingInput = Array("\(segments[0]).\(segments[1])".utf8)
        guard signature.count == 64, key.isValidSignature(Array(signature), for: signingInput) else {
            throw IAPError(.offerInvalid, "the \(audience) signature does not verify")
        }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes)) else {
            throw IAPError(.offerInvalid, "the \(audience) claims are not JSON")
        }
        guard claims.aud == audience, claims.bid == configuration.bundleId, claims.productId == productId else {
            throw IAPError(.offerInvalid, "the \(audience) signature is for another audience, app or product")
        }
        if let issuer = configuration.offerIssuerId, claims.iss != issuer {
            throw IAPError(.offerInvalid, "the \(audience) signature's iss is not the configured issuer id")
        }
        guard let nonce = claims.nonce, !nonce.isEmpty else {
            throw IAPError(.offerInvalid, "the \(audience) signature has no nonce")
        }
        if let transactionId = claims.transactionId, !accountTransactionIds.contains(transactionId) {
            throw IAPError(.offerInvalid, "the \(audience) signature names a transaction of another customer")
        }
        guard let issued = claims.iat else {
            throw IAPError(.offerInvalid, "the \(audience) signature has no iat")
        }
        try checkAge(issued)
        return claims
    }

    /// Checks that a signature made at `seconds` since 1970 is not older than 24 hours nor in the future.
    private func checkAge(_ seconds: Double) throws {
        let age = now.timeIntervalSince1970 - seconds
        guard seconds.isFinite, age <= Self.signatureLifetime, age >= -Self.allowedSkew else {
            throw IAPError(.offerInvalid, "the offer signature has expired or is dated in the future")
        }
    }
}
