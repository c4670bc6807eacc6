#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore
import IAPCrypto
public import IAPServerAPI

extension SimulatedAppStore {
    // MARK: - The app's download

    /// The signed app transaction of a customer (StoreKit's `AppTransaction.shared`): the app's bundle id, App Apple
    /// ID and version, the customer's `appTransactionId`, first download date and
    /// ``Configuration/originalApplicationVersion``, signed now like everything else the store signs.
    ///
    /// - Parameter account: The customer; created if new.
    /// - Returns: The compact JWS, which a verifier of ``verifierConfiguration`` accepts as an app transaction.
    /// - Throws: ``IAPError`` if signing fails.
    public func appTransaction(ofAccount account: String) throws -> String {
        let record = engine.ensureAccount(account)
        let now = clock.now
        let payload = AppTransactionPayload(
            receiptType: configuration.environment,
            appAppleId: configuration.environment == .production ? configuration.appAppleId : nil,
            bundleId: configuration.bundleId,
            applicationVersion: configuration.bundleVersion,
            receiptCreationDate: now,
            originalPurchaseDate: record.createdAt ?? now,
            originalApplicationVersion: configuration.originalApplicationVersion,
            appTransactionId: record.appTransactionId,
            originalPlatform: .iOS
        )
        return try engine.signer.sign(payload)
    }

    /// Get App Transaction Info: the signed app transaction of the customer who made a transaction, as
    /// ``appTransaction(ofAccount:)`` signs it.
    ///
    /// - Parameter anyTransactionId: Any transaction of the customer.
    /// - Returns: Apple's `AppTransactionInfoResponse`.
    /// - Throws: ``IAPError`` `.apiError`: 4000006 for an id that is not digits, 4040010 for an unknown one.
    public func appTransactionInfo(anyTransactionId: String) throws -> AppTransactionInfoResponse {
        guard !anyTransactionId.isEmpty, anyTransactionId.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw SimulatedAppStoreEngine.invalidTransactionId(anyTransactionId)
        }
        guard let record = engine.transactions[anyTransactionId] else {
            throw SimulatedAppStoreEngine.transactionIdNotFound(anyTransactionId)
        }
        return AppTransactionInfoResponse(signedAppTransactionInfo: try appTransaction(ofAccount: record.account))
    }

    // MARK: - Offers

    /// Whether a customer may have an introductory offer in a subscription group: they never subscribed in it (a
    /// family-shared subscription does not count), as StoreKit's `isEligibleForIntroOffer` says.
    ///
    /// - Parameters:
    ///   - account: The customer.
    ///   - groupId: The subscription group.
    public func isEligibleForIntroOffer(account: String, groupId: String) -> Bool {
        !engine.subscriptions.values.contains { subscription in
            subscription.account == account && subscription.groupId == groupId && subscription.sharedFrom == nil
        }
    }

    // MARK: - Consent

    /// A parent withdraws consent for a child's use of the app (Declared Age Range, age-assurance laws): a
    /// `RESCIND_CONSENT` notification goes out whose `appData` carries the customer's signed app transaction. The
    /// App Store changes nothing else; revoking access is the app's server's decision.
    ///
    /// - Parameter account: The customer.
    /// - Throws: ``IAPError`` `.notFound` for a customer the store never saw; an error if signing fails.
    public func rescindConsent(account: String) throws {
        guard engine.accounts[account] != nil else {
            throw IAPError(.notFound, "the store has no customer '\(account)'")
        }
        let signedAppTransaction = try appTransaction(ofAccount: account)
        try update { try $0.notifyApp(.rescindConsent, signedAppTransaction: signedAppTransaction) }
    }

    // MARK: - Offer codes

    /// A customer redeems an offer code in the App Store's sheet: a subscription purchase with the offer
    /// (`offerType` 3), outside any app's purchase call, so every device of the account sees it in its updates.
    ///
    /// - Parameters:
    ///   - productId: The auto-renewable subscription.
    ///   - offerId: An offer of kind ``SimulatedSubscriptionOffer/Kind/offerCode`` of the product.
    ///   - account: The customer.
    /// - Returns: The purchase, or `.failed` (`offerInvalid` for an unknown code, `offerIneligible` for a customer
    ///   subscribed in the group); nothing is recorded then.
    /// - Throws: ``IAPError`` if signing fails.
    public func redeemOfferCode(productId: String, offerId: String, account: String) throws -> SimulatedPurchaseResult {
        guard
            let offer = configuration.subscriptionOffers.first(where: {
                $0.id == offerId && $0.productId == productId && $0.kind == .offerCode
            })
        else {
            return .failed(IAPError(.offerInvalid, "\(productId) has no offer code offer '\(offerId)'"))
        }
        return try update {
            try $0.purchase(
                productId: productId,
                account: account,
                appAccountToken: nil,
                quantity: 1,
                askToBuy: false,
                offer: offer
            )
        }
    }

    /// Buys a subscription with one of its offers as the App Store applies it once StoreKit has accepted the
    /// purchase: a promotional offer's signature is StoreKit's to check (``purchase(productId:account:appAccountToken:quantity:askToBuy:offer:introductoryOfferEligibility:)``
    /// checks it), so this is for control planes and tests that stand for the customer's device.
    ///
    /// A new subscriber or a resubscriber gets `SUBSCRIBED` with the offer on the first transaction; a live
    /// subscriber redeeming a promotional offer or an offer code gets `OFFER_REDEEMED`: `UPGRADE` (at once, the
    /// offer on the upgrade's transaction) for a higher level of the group, `DOWNGRADE` for a lower one, none for the
    /// same product; the offer then applies from the next renewal.
    ///
    /// - Parameters:
    ///   - productId: The subscription.
    ///   - offerId: An offer of ``Configuration/subscriptionOffers`` for the product.
    ///   - account: The customer; created if new.
    ///   - appAccountToken: The app's UUID for its user.
    /// - Returns: The purchase, or `.failed`: `offerInvalid` for an offer the product does not have,
    ///   `offerIneligible` for an introductory offer to a former subscriber, an introductory or win-back offer to a
    ///   live subscriber, or a win-back offer to a customer who never subscribed; nothing is recorded then.
    /// - Throws: ``IAPError`` if signing fails.
    public func purchase(
        productId: String,
        offerId: String,
        account: String = "customer",
        appAccountToken: UUID? = nil
    ) throws -> SimulatedPurchaseResult {
        guard
            let offer = configuration.subscriptionOffers.first(where: {
                $0.id == offerId && $0.productId == productId
            })
        else {
            return .failed(IAPError(.offerInvalid, "\(productId) has no offer '\(offerId)'"))
        }
        return try update {
            try $0.purchase(
                productId: productId,
                account: account,
                appAccountToken: appAccountToken?.uuidString.lowercased(),
                quantity: 1,
                askToBuy: false,
                offer: offer
            )
        }
    }

    // MARK: - Price increases

    /// Announces a price increase of a purchaser's subscription, effective at its next renewal: the renewal
    /// information's `renewalPrice` and `priceIncreaseStatus` change, and a `PRICE_INCREASE` notification goes
    /// out (`PENDING` when the customer must consent, `ACCEPTED` when not). A subscription whose customer has not
    /// consented when it falls due expires (`EXPIRED` `PRICE_INCREASE`, expiration intent 3).
    ///
    /// - Parameters:
    ///   - originalTransactionId: The purchaser's live subscription.
    ///   - price: The new price, in milliunits.
    ///   - needsConsent: Whether the customer must consent.
    /// - Throws: ``IAPError`` `.notFound`, or `.invalidArgument` for an ended or family-shared subscription or a
    ///   price that is not positive.
    public func announcePriceIncrease(originalTransactionId: String, price: Int64, needsConsent: Bool) throws {
        try update {
            try $0.announcePriceIncrease(
                originalTransactionId: originalTransactionId,
                price: price,
                needsConsent: needsConsent
            )
        }
    }

    /// The customer consents to a pending price increase (`PRICE_INCREASE` `ACCEPTED`).
    ///
    /// - Parameter originalTransactionId: The purchaser's subscription.
    /// - Throws: ``IAPError`` `.notFound`, or `.invalidArgument` when no price increase waits for consent.
    public func consentToPriceIncrease(originalTransactionId: String) throws {
        try update { try $0.consentToPriceIncrease(originalTransactionId: originalTransactionId) }
    }
}
