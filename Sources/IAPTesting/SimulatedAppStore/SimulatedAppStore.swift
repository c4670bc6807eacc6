#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPApp
public import IAPCore
public import IAPCrypto
import IAPInMemory
public import IAPServerAPI

/// An App Store that runs in the test process: what StoreKit Testing in Xcode is on Apple platforms, on Linux and
/// for servers.
///
/// The store sells the products of a catalog to simulated customers, keeps their transactions and subscriptions,
/// and signs everything exactly in Apple's formats: compact JWS with header `alg` `ES256` and an `x5c` chain of a
/// ``TestPKI`` shaped like Apple's. An `AppStoreSignedDataVerifier` configured with ``verifierConfiguration``
/// verifies every transaction, renewal information and notification it produces; a verifier for another bundle
/// id or environment rejects them.
///
/// It reproduces:
/// - purchases of every product kind, with Ask to Buy and injected failures;
/// - auto-renewable subscriptions over time, driven by a `WallClock` (tests pass a ``ManualClock`` and call
///   ``advance(by:)``): renewals, billing failure with grace period, billing retry and recovery, auto-renew on
///   and off, voluntary expiry, upgrades (at once) and downgrades or crossgrades (at the next renewal);
/// - refunds, refund reversals and declines, consumption requests, and Family Sharing with its revocations;
/// - an outbox of App Store Server Notifications V2 for every event;
/// - the App Store Server API's queries: transaction info, transaction history with revisions, refund history,
///   all subscription statuses and order lookup, answered with Apple's response bodies and Apple's error codes.
///
/// Every operation is all or nothing: when one throws, the store is as it was before it.
///
/// ```swift
/// let clock = ManualClock(now: Date(millisecondsSince1970: 1_767_225_600_000))
/// let store = try SimulatedAppStore(products: catalog, configuration: .init(gracePeriodDays: 16), clock: clock)
/// let verifier = try store.makeVerifier()
/// let result = try await store.purchase(productId: "pro.monthly", account: "alice")
/// try await store.advance(by: .seconds(31 * 86_400))  // renews: DID_RENEW
/// for signedPayload in await store.drainNotifications() {
///     let notification = try verifier.notification(signedPayload)
/// }
/// ```
public actor SimulatedAppStore {
    /// The app, storefront, prices and subscription rules the store simulates.
    public nonisolated let configuration: Configuration
    /// The certificates and keys the store signs with.
    public nonisolated let pki: TestPKI
    /// The products the store sells.
    public nonisolated let products: [CatalogProduct]
    /// The clock every date comes from.
    public nonisolated let clock: any WallClock

    private let manualClock: ManualClock?
    /// The keys of ``Configuration/offerSigningKeys``, parsed.
    nonisolated let offerKeys: [String: P256PublicKey]
    var engine: SimulatedAppStoreEngine
    /// The devices watching their account's transactions (``SimulatedStoreClient``), by registration id.
    var transactionObservers: [UUID: SimulatedTransactionObserver] = [:]

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - products: The products the store sells. Auto-renewable subscriptions need a subscription group; their
    ///     `groupLevel` (1 is the highest) decides between upgrades and downgrades.
    ///   - configuration: The app, storefront, prices and subscription rules.
    ///   - pki: The chain to sign with; by default a new ``TestPKI`` valid from a year before the clock's time to
    ///     25 years after it.
    ///   - clock: Where every date comes from; a ``ManualClock`` lets ``advance(by:)`` move it.
    /// - Throws: ``IAPError`` `.invalidConfiguration` for duplicate product ids, a subscription without a group, or
    ///   a grace period or billing retry length out of range; an error of ``TestPKI/generate(_:)``.
    public init(
        products: [CatalogProduct],
        configuration: Configuration = Configuration(),
        pki: TestPKI? = nil,
        clock: any WallClock
    ) throws {
        var byId: [String: CatalogProduct] = [:]
        for product in products {
            guard byId.updateValue(product, forKey: product.productId) == nil else {
                throw IAPError(.invalidConfiguration, "the product id '\(product.productId)' appears twice")
            }
            if product.kind == .autoRenewable, product.subscriptionGroupId?.isEmpty ?? true {
                throw IAPError(
                    .invalidConfiguration,
                    "the auto-renewable subscription '\(product.productId)' has no subscription group"
                )
            }
        }
        guard configuration.billingRetryDays >= 1 else {
            throw IAPError(.invalidConfiguration, "billingRetryDays must be at least 1")
        }
        if let grace = configuration.gracePeriodDays, !(1..<configuration.billingRetryDays).contains(grace) {
            throw IAPError(
                .invalidConfiguration,
                "gracePeriodDays must be at least 1 and shorter than the billing retry period"
            )
        }
        guard configuration.environment == .sandbox || configuration.environment == .production else {
            throw IAPError(.invalidConfiguration, "the simulated store signs for Sandbox or Production only")
        }
        for offer in configuration.subscriptionOffers where byId[offer.productId]?.kind != .autoRenewable {
            throw IAPError(
                .invalidConfiguration,
                "the offer '\(offer.id)' is for '\(offer.productId)', which is not an auto-renewable subscription"
            )
        }
        var offerKeys: [String: P256PublicKey] = [:]
        for (keyId, pem) in configuration.offerSigningKeys {
            do {
                offerKeys[keyId] = try P256PublicKey(pemRepresentation: pem)
            } catch {
                throw IAPError.wrapping(error, as: .invalidConfiguration, "the offer signing key '\(keyId)'")
            }
        }
        self.offerKeys = offerKeys
        let start = clock.now
        let pki =
            try pki
            ?? TestPKI.generate(
                .init(
                    notBefore: start.addingTimeInterval(-365 * 86_400),
                    notAfter: start.addingTimeInterval(25 * 365 * 86_400)
                )
            )
        self.configuration = configuration
        self.pki = pki
        self.products = products
        self.clock = clock
        self.manualClock = clock as? ManualClock
        self.engine = SimulatedAppStoreEngine(
            configuration: configuration,
            products: byId,
            signer: JWSSigner(key: pki.leafKey, certificateChain: pki.x5c),
            clock: clock
        )
    }

    /// The configuration of an `AppStoreSignedDataVerifier` that accepts exactly what this store signs: the
    /// store's root, bundle id, environment and App Apple ID.
    public nonisolated var verifierConfiguration: AppStoreSignedDataVerifier.Configuration {
        AppStoreSignedDataVerifier.Configuration(
            rootCertificates: [pki.root],
            bundleId: configuration.bundleId,
            environment: configuration.environment,
            appAppleId: configuration.appAppleId,
            clock: clock
        )
    }

    /// Makes a verifier with ``verifierConfiguration``.
    ///
    /// - Returns: A verifier that accepts what this store signs.
    /// - Throws: ``IAPError`` if the verifier cannot be created.
    public nonisolated func makeVerifier() throws -> AppStoreSignedDataVerifier {
        try AppStoreSignedDataVerifier(configuration: verifierConfiguration)
    }

    /// Runs an operation on a copy of the state and keeps the copy only when the operation succeeds.
    func update<Result>(_ body: (inout SimulatedAppStoreEngine) throws -> Result) rethrows -> Result {
        var copy = engine
        let result = try body(&copy)
        engine = copy
        publishTransactionChanges()
        return result
    }

    // MARK: - Accounts and Family Sharing

    /// Creates a customer account, or returns the existing one. Purchases create their account too.
    ///
    /// - Parameter id: The id to name the customer by.
    /// - Returns: The customer's `appTransactionId`.
    @discardableResult
    public func createAccount(_ id: String) -> String {
        engine.ensureAccount(id).appTransactionId
    }

    /// The `appTransactionId` of a customer, or `nil` when there is no such account.
    ///
    /// - Parameter account: The customer's id.
    /// - Returns: The customer's app transaction id.
    public func appTransactionId(ofAccount account: String) -> String? {
        engine.accounts[account]?.appTransactionId
    }

    /// Adds a customer to the family of an organizer (creating the family). Family-shareable non-consumables and
    /// live subscriptions of each member are shared with the newcomer and the newcomer's with them: each member gets
    /// a `FAMILY_SHARED` transaction of their own, with a notification.
    ///
    /// - Parameters:
    ///   - member: The customer joining.
    ///   - organizer: The family's organizer.
    /// - Throws: ``IAPError`` `.invalidArgument` when `member` is `organizer` or in another family.
    public func addFamilyMember(_ member: String, toFamilyOf organizer: String) throws {
        try update { try $0.addFamilyMember(member, organizer: organizer) }
    }

    /// Removes a customer from their family: what was shared with them, and what they shared with the others, is
    /// revoked (`revocationType` `FAMILY_REVOKE`, a `REVOKE` notification each).
    ///
    /// - Parameter member: The customer leaving.
    /// - Throws: ``IAPError`` `.invalidArgument` when the customer is in no family.
    public func removeFamilyMember(_ member: String) throws {
        try update { try $0.removeFamilyMember(member) }
    }

    // MARK: - Purchases

    /// Buys a product.
    ///
    /// A consumable, non-consumable or non-renewing subscription makes a transaction of its own and a
    /// `ONE_TIME_CHARGE` notification. An auto-renewable subscription makes `SUBSCRIBED` (`INITIAL_BUY`, or
    /// `RESUBSCRIBE` when the customer had an expired subscription in the group, which keeps its original
    /// transaction id); when the customer is subscribed in the group already, buying another product of it upgrades
    /// (a lower `groupLevel`: at once, `DID_CHANGE_RENEWAL_PREF` `UPGRADE`) or downgrades or crossgrades (at the
    /// next renewal, `DID_CHANGE_RENEWAL_PREF` `DOWNGRADE`). Family-shareable purchases are shared with the family.
    ///
    /// - Parameters:
    ///   - productId: The product to buy.
    ///   - account: The customer; created if new.
    ///   - appAccountToken: The app's UUID for its user, recorded in the transaction.
    ///   - quantity: How many; 1...10 for consumables, 1 otherwise.
    ///   - askToBuy: Whether the customer is a child whose purchases a parent approves.
    ///   - offer: A subscription offer of ``Configuration/subscriptionOffers``; a promotional offer must carry a
    ///     signature of a key of ``Configuration/offerSigningKeys`` over this purchase, made less than 24 hours ago,
    ///     with a nonce not used before.
    ///   - introductoryOfferEligibility: The app server's signed decision on the introductory offer (compact JWS of
    ///     `OfferJWSSignatureCreator`), which overrides the store's own rule (never subscribed in the group).
    /// - Returns: `.purchased`, `.pending` for Ask to Buy, or `.failed` for an injected failure, an unknown product,
    ///   a bad quantity, or an offer the App Store would refuse (`offerInvalid`, `offerIneligible`); nothing is
    ///   recorded then.
    /// - Throws: ``IAPError`` if signing fails.
    public func purchase(
        productId: String,
        account: String = "customer",
        appAccountToken: UUID? = nil,
        quantity: Int = 1,
        askToBuy: Bool = false,
        offer: PurchaseOffer? = nil,
        introductoryOfferEligibility: String? = nil
    ) throws -> SimulatedPurchaseResult {
        try purchase(
            productId: productId,
            account: account,
            appAccountToken: appAccountToken,
            quantity: quantity,
            askToBuy: askToBuy,
            offer: offer,
            introductoryOfferEligibility: introductoryOfferEligibility,
            device: nil
        )
    }

    /// The Ask to Buy requests waiting for a parent, oldest first.
    public var pendingAskToBuyRequestIds: [String] {
        engine.askToBuyRequests.keys.sorted(by: SimulatedAppStoreEngine.numericOrder)
    }

    /// A parent approves an Ask to Buy request: the purchase happens now, with its transaction and notification.
    ///
    /// - Parameter requestId: The id from ``SimulatedPurchaseResult/pending(askToBuyRequestId:)``.
    /// - Returns: The result of the purchase.
    /// - Throws: ``IAPError`` `.notFound` for an unknown or already answered request.
    public func approveAskToBuy(_ requestId: String) throws -> SimulatedPurchaseResult {
        try update { try $0.approveAskToBuy(requestId) }
    }

    /// A parent declines an Ask to Buy request: nothing is granted or recorded.
    ///
    /// - Parameter requestId: The id from ``SimulatedPurchaseResult/pending(askToBuyRequestId:)``.
    /// - Throws: ``IAPError`` `.notFound` for an unknown or already answered request.
    public func declineAskToBuy(_ requestId: String) throws {
        try update { try $0.declineAskToBuy(requestId) }
    }

    /// Makes the next purchase fail with `error`, recording nothing. Calls queue up: each fails one purchase.
    ///
    /// - Parameter error: The error the purchase fails with, such as `IAPError(.transportFailure)`.
    public func failNextPurchase(with error: IAPError) {
        engine.purchaseFailures.append(error)
    }

    /// Finishes a transaction, as the App Store Server API's Finish Transaction does: transaction history then
    /// leaves the consumable out unless it is refunded.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Throws: ``IAPError`` `.apiError` 4000006 or 4040010 for a bad or unknown id.
    public func finishTransaction(transactionId: String) throws {
        try update { try $0.finishTransaction(transactionId: transactionId) }
    }

    /// Extend a Subscription Renewal Date: the purchaser's active subscription (its family members' too) ends `days`
    /// later, the current transaction's `expiresDate` with it, and a `RENEWAL_EXTENDED` notification goes out. At
    /// most two extensions in 365 days, as Apple allows; a `requestIdentifier` asked again answers as it did.
    ///
    /// - Parameters:
    ///   - originalTransactionId: The purchaser's subscription.
    ///   - days: 1 to 90.
    ///   - requestIdentifier: The caller's identifier of the request.
    /// - Returns: Apple's `ExtendRenewalDateResponse`.
    /// - Throws: ``IAPError`` `.apiError`: 4000009 for days outside 1...90, 4000011 for an empty or longer than 128
    ///   identifier, 4000006 for an id that is not digits, 4040005 for an unknown (or family-shared) subscription,
    ///   4030004 for one that is not active, 4030005 after two extensions in a year.
    public func extendRenewalDate(
        originalTransactionId: String,
        days: Int,
        requestIdentifier: String
    ) throws -> ExtendRenewalDateResponse {
        guard (1...90).contains(days) else {
            throw SimulatedAppStoreEngine.apiError(status: 400, code: 4_000_009, "Invalid extend by days value.")
        }
        guard (1...128).contains(requestIdentifier.count) else {
            throw SimulatedAppStoreEngine.apiError(status: 400, code: 4_000_011, "Invalid request identifier.")
        }
        let extended = try update {
            try $0.extendRenewalDate(
                originalTransactionId: originalTransactionId,
                days: days,
                requestIdentifier: requestIdentifier
            )
        }
        return ExtendRenewalDateResponse(
            originalTransactionId: originalTransactionId,
            webOrderLineItemId: extended.webOrderLineItemId,
            success: true,
            effectiveDate: extended.effectiveDate
        )
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers: every purchaser's active subscription to the
    /// product (in the storefronts given, as `USA`, all when empty) is extended as
    /// ``extendRenewalDate(originalTransactionId:days:requestIdentifier:)`` extends one, with its `RENEWAL_EXTENDED`
    /// (a subscription that had its two extensions of the year is counted failed); then a `RENEWAL_EXTENSION`
    /// `SUMMARY` notification carries the counts. It completes at once; the same identifier for the product again
    /// changes nothing.
    ///
    /// - Parameters:
    ///   - productId: An auto-renewable subscription of the catalog.
    ///   - days: 1 to 90.
    ///   - requestIdentifier: The caller's identifier of the request.
    ///   - storefrontCountryCodes: The storefronts (`USA`, ...) to extend in; all when empty.
    /// - Returns: Apple's `MassExtendRenewalDateResponse`.
    /// - Throws: ``IAPError`` `.apiError`: 4000009, 4000011 as for one subscription, 4000023 for a product that is not
    ///   an auto-renewable subscription of the catalog.
    public func extendRenewalDatesForAllActiveSubscribers(
        productId: String,
        days: Int,
        requestIdentifier: String,
        storefrontCountryCodes: [String] = []
    ) throws -> MassExtendRenewalDateResponse {
        guard (1...90).contains(days) else {
            throw SimulatedAppStoreEngine.apiError(status: 400, code: 4_000_009, "Invalid extend by days value.")
        }
        guard (1...128).contains(requestIdentifier.count) else {
            throw SimulatedAppStoreEngine.apiError(status: 400, code: 4_000_011, "Invalid request identifier.")
        }
        try update {
            try $0.extendRenewalDatesForAllActiveSubscribers(
                productId: productId,
                days: days,
                requestIdentifier: requestIdentifier,
                storefronts: storefrontCountryCodes
            )
        }
        return MassExtendRenewalDateResponse(requestIdentifier: requestIdentifier)
    }

    /// Get Status of Subscription Renewal Date Extensions: a mass extension's counts, complete at once.
    ///
    /// - Parameters:
    ///   - productId: The product it extended.
    ///   - requestIdentifier: Its identifier.
    /// - Returns: Apple's `MassExtendRenewalDateStatusResponse`.
    /// - Throws: ``IAPError`` `.apiError` 4040009 when there is no such request for the product.
    public func renewalExtensionStatus(productId: String, requestIdentifier: String) throws
        -> MassExtendRenewalDateStatusResponse
    {
        guard let done = engine.massExtensions[productId + "/" + requestIdentifier] else {
            throw SimulatedAppStoreEngine.apiError(
                status: 404,
                code: 4_040_009,
                "No renewal-date extension request \(requestIdentifier) for \(productId)."
            )
        }
        return MassExtendRenewalDateStatusResponse(
            requestIdentifier: done.requestIdentifier,
            complete: true,
            completeDate: done.completeDate,
            succeededCount: done.succeededCount,
            failedCount: done.failedCount
        )
    }

    /// Set App Account Token: the server gives a purchase (one made outside the app, such as an offer code redeemed
    /// in the App Store) its `appAccountToken`, or changes it; a subscription's later renewals carry it too. No
    /// notification is sent, as Apple sends none.
    ///
    /// - Parameters:
    ///   - originalTransactionId: The purchase's original transaction id.
    ///   - appAccountToken: The token.
    /// - Throws: ``IAPError`` `.apiError`: 4000006 for an id that is not digits, 4040010 for an unknown one, 4000187
    ///   for a transaction that is not an original one, 4000185 for a family-shared one.
    public func setAppAccountToken(originalTransactionId: String, appAccountToken: UUID) throws {
        try update {
            try $0.setAppAccountToken(
                originalTransactionId: originalTransactionId,
                token: appAccountToken.uuidString.lowercased()
            )
        }
    }

    /// Every transaction of a customer, oldest first, signed now.
    ///
    /// - Parameter account: The customer.
    /// - Returns: The transactions, including family-shared ones.
    /// - Throws: ``IAPError`` if signing fails.
    public func transactions(ofAccount account: String) throws -> [SimulatedTransaction] {
        try engine.transactionIdsByAccount[account, default: []].map { try engine.signedTransaction(id: $0) }
    }

    /// A transaction, signed now.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: The transaction and its JWS.
    /// - Throws: ``IAPError`` `.notFound`.
    public func transaction(id transactionId: String) throws -> SimulatedTransaction {
        try engine.signedTransaction(id: transactionId)
    }

    // MARK: - Time

    /// Moves the ``ManualClock`` forward and runs every subscription event that falls due on the way, each at its
    /// own instant (the clock is set to it first): renewals, failed renewals, the end of grace periods and of
    /// billing retry, and expiries.
    ///
    /// When an event cannot be signed the store keeps its state from before the call, but the clock may already
    /// have moved to that event.
    ///
    /// - Parameter duration: How far to move the clock; not negative.
    /// - Throws: ``IAPError`` `.invalidConfiguration` when the store's clock is not a ``ManualClock``,
    ///   `.invalidArgument` for a negative duration.
    public func advance(by duration: Duration) throws {
        guard let manualClock else {
            throw IAPError(
                .invalidConfiguration,
                "advance(by:) moves a ManualClock; this store's clock is not one, use processDueEvents()"
            )
        }
        guard duration >= .zero else {
            throw IAPError(.invalidArgument, "the clock only moves forward")
        }
        let target = manualClock.now.addingTimeInterval(duration.timeInterval)
        try update { try $0.processDueEvents(until: target, manualClock: manualClock) }
        if manualClock.now < target {
            manualClock.set(target)
        }
    }

    /// Runs every subscription event due by the clock's current time, oldest first. Use it after moving the clock
    /// yourself; events are dated when they fell due and signed now.
    ///
    /// - Throws: ``IAPError`` if signing fails.
    public func processDueEvents() throws {
        let now = clock.now
        try update { try $0.processDueEvents(until: now, manualClock: nil) }
    }

    // MARK: - Subscriptions

    /// The customer turns auto-renew off or on: `DID_CHANGE_RENEWAL_STATUS` (`AUTO_RENEW_DISABLED` or
    /// `AUTO_RENEW_ENABLED`). With auto-renew off, the subscription expires at the end of the period (`EXPIRED`
    /// `VOLUNTARY`). Setting the current value does nothing.
    ///
    /// - Parameters:
    ///   - originalTransactionId: The purchaser's subscription.
    ///   - enabled: Whether it renews.
    /// - Throws: ``IAPError`` `.notFound`, or `.invalidArgument` for an ended or family-shared subscription.
    public func setAutoRenew(originalTransactionId: String, enabled: Bool) throws {
        try update { try $0.setAutoRenew(originalTransactionId: originalTransactionId, enabled: enabled) }
    }

    /// Makes charging the customer fail, or succeed again.
    ///
    /// While billing fails, a renewal that falls due fails instead: `DID_FAIL_TO_RENEW` with subtype
    /// `GRACE_PERIOD` and a grace period when one is configured (then `GRACE_PERIOD_EXPIRED`), without otherwise;
    /// the renewal information shows `isInBillingRetryPeriod`. Billing retry ends after
    /// ``Configuration/billingRetryDays`` with `EXPIRED` `BILLING_RETRY`. Fixing billing during the grace period or
    /// billing retry renews at once: `DID_RENEW` `BILLING_RECOVERY`.
    ///
    /// - Parameters:
    ///   - originalTransactionId: The purchaser's subscription.
    ///   - failing: Whether charging fails.
    /// - Throws: ``IAPError`` `.notFound`, or `.invalidArgument` for a family-shared subscription.
    public func setBillingFailure(originalTransactionId: String, failing: Bool) throws {
        try update { try $0.setBillingFailure(originalTransactionId: originalTransactionId, failing: failing) }
    }

    /// The renewal information of a subscription, signed now.
    ///
    /// - Parameter originalTransactionId: The subscription.
    /// - Returns: The renewal information, its JWS and the subscription's status.
    /// - Throws: ``IAPError`` `.notFound`.
    public func renewalInfo(originalTransactionId: String) throws -> SimulatedRenewalInfo {
        try engine.signedRenewal(try engine.subscription(originalTransactionId))
    }

    // MARK: - Refunds

    /// The App Store refunds a transaction: `revocationDate`, `revocationReason` and `revocationType` are set and
    /// a `REFUND` notification is sent. A refunded subscription transaction that is the latest revokes the
    /// subscription (status 5, auto-renew off); family-shared copies are revoked with `REVOKE`.
    ///
    /// - Parameters:
    ///   - transactionId: The purchaser's transaction.
    ///   - reason: Why; `.refundedForOtherReason` (0) by default, `.refundedDueToIssue` (1) for an app issue.
    ///   - percentage: For a prorated refund, the refunded share in milliunits of a percent (50000 is 50%);
    ///     `nil` for a full refund.
    /// - Returns: The refunded transaction, signed now.
    /// - Throws: ``IAPError`` `.notFound`, or `.invalidArgument` for a revoked or family-shared transaction or a
    ///   percentage outside 1...100000.
    @discardableResult
    public func refund(
        transactionId: String,
        reason: RevocationReason = .refundedForOtherReason,
        percentage: Int32? = nil
    ) throws -> SimulatedTransaction {
        try update { try $0.refund(transactionId: transactionId, reason: reason, percentage: percentage) }
    }

    /// The App Store reverses a refund: the revocation fields are cleared, a revoked subscription is restored,
    /// and a `REFUND_REVERSED` notification is sent. Family-shared copies stay revoked.
    ///
    /// - Parameter transactionId: The refunded transaction.
    /// - Returns: The transaction, signed now.
    /// - Throws: ``IAPError`` `.notFound`, or `.invalidArgument` when it is not refunded.
    @discardableResult
    public func reverseRefund(transactionId: String) throws -> SimulatedTransaction {
        try update { try $0.reverseRefund(transactionId: transactionId) }
    }

    /// The App Store declines a refund request: a `REFUND_DECLINED` notification.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Throws: ``IAPError`` `.notFound`.
    public func declineRefund(transactionId: String) throws {
        try update { try $0.declineRefund(transactionId: transactionId) }
    }

    /// The customer asks for a refund and the App Store asks the app for consumption information: a
    /// `CONSUMPTION_REQUEST` notification with `consumptionRequestReason`.
    ///
    /// - Parameters:
    ///   - transactionId: The transaction.
    ///   - reason: The reason the customer gave.
    /// - Throws: ``IAPError`` `.notFound`.
    public func requestConsumptionInformation(
        transactionId: String,
        reason: ConsumptionRequestReason = .unintendedPurchase
    ) throws {
        try update { try $0.requestConsumptionInformation(transactionId: transactionId, reason: reason) }
    }

    /// The app answers a consumption request (Send Consumption Information, version 2), checked as the App Store
    /// checks it: a known transaction, the customer's consent, a percentage from 0 to 100000, a known delivery status.
    ///
    /// - Parameters:
    ///   - transactionId: The transaction of the refund request.
    ///   - request: The answer.
    /// - Throws: ``IAPError`` `apiError` with Apple's code (4040010, 4000035, 4000036) when Apple would refuse it.
    public func receiveConsumptionInformation(transactionId: String, _ request: ConsumptionRequest) throws {
        try update { try $0.receiveConsumptionInformation(transactionId: transactionId, request) }
    }

    /// Every consumption answer the app sent about a transaction, oldest first.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: The answers.
    public func consumptionInformation(transactionId: String) -> [ConsumptionRequest] {
        engine.consumptionAnswers[transactionId] ?? []
    }

    // MARK: - Notifications

    /// The signed notifications (`signedPayload` values) not yet drained, oldest first.
    public var pendingNotifications: [String] {
        engine.outbox
    }

    /// Every signed notification the store has sent, oldest first, drained or not.
    public var notificationHistory: [String] {
        engine.notificationHistory
    }

    /// Takes the signed notifications out of the outbox, as the App Store would post them to the app's server.
    ///
    /// - Returns: The `signedPayload` values, oldest first.
    public func drainNotifications() -> [String] {
        defer { engine.outbox.removeAll() }
        return engine.outbox
    }

    /// Sends a `TEST` notification, as the App Store Server API's Request a Test Notification does.
    ///
    /// - Returns: The test notification token, `<notificationUUID>_<signedDate in ms>` as Apple shapes it; the UUID
    ///   is the `notificationUUID` of the `TEST` notification, so the token names the notification it asks about.
    /// - Throws: ``IAPError`` if signing fails.
    @discardableResult
    public func requestTestNotification() throws -> String {
        try update { engine in
            let notificationUUID = try engine.notify(.test)
            let signedDate = engine.now.millisecondsSince1970
            return "\(notificationUUID)_\(signedDate)"
        }
    }

    // MARK: - App Store Server API

    /// Get Transaction Info: one transaction, signed now.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: Apple's `TransactionInfoResponse`.
    /// - Throws: ``IAPError`` `.apiError` with `apiErrorCode` 4000006 (HTTP 400) for an id that is not a number,
    ///   4040010 (HTTP 404) for an unknown one.
    public func transactionInfo(transactionId: String) throws -> TransactionInfoResponse {
        try engine.transactionInfo(transactionId: transactionId)
    }

    /// Get Transaction History (v2): the customer's transactions, 20 a page, ordered by when they were last
    /// modified.
    ///
    /// Pass the returned `revision` for the next page while `hasMore` is `true`. A revision saved from the last
    /// page resumes later with only the transactions that are new or changed since (a refund, an upgrade, ...).
    /// Finished consumables are left out unless refunded, as in v2.
    ///
    /// - Parameters:
    ///   - anyTransactionId: Any transaction id, original transaction id or app transaction id of the customer.
    ///   - revision: The revision of the previous page, or `nil` to start.
    ///   - request: Filters and order; send the same with every page.
    /// - Returns: Apple's `HistoryResponse`.
    /// - Throws: ``IAPError`` `.apiError`: 4000006 or 4040010 for the id, 4000005 for a revision of another
    ///   customer or listing, 4000013 for a start date not before the end date.
    public func transactionHistory(
        anyTransactionId: String,
        revision: String? = nil,
        request: TransactionHistoryRequest = TransactionHistoryRequest()
    ) throws -> HistoryResponse {
        try engine.transactionHistory(anyTransactionId: anyTransactionId, revision: revision, request: request)
    }

    /// Get Refund History (v2): the customer's refunded and revoked transactions, 20 a page.
    ///
    /// - Parameters:
    ///   - anyTransactionId: Any transaction id of the customer.
    ///   - revision: The revision of the previous page, or `nil` to start.
    /// - Returns: Apple's `RefundHistoryResponse`.
    /// - Throws: ``IAPError`` `.apiError`: 4000006 or 4040010 for the id, 4000005 for a bad revision.
    public func refundHistory(anyTransactionId: String, revision: String? = nil) throws -> RefundHistoryResponse {
        try engine.refundHistory(anyTransactionId: anyTransactionId, revision: revision)
    }

    /// Get All Subscription Statuses: per subscription group, the status, latest transaction and renewal
    /// information of each of the customer's subscriptions (family-shared ones included).
    ///
    /// - Parameters:
    ///   - anyTransactionId: Any transaction id of the customer.
    ///   - status: Only subscriptions with these statuses; `nil` or empty for all.
    /// - Returns: Apple's `StatusResponse`.
    /// - Throws: ``IAPError`` `.apiError`: 4000006 or 4040010 for the id.
    public func allSubscriptionStatuses(
        anyTransactionId: String,
        status: [SubscriptionStatus]? = nil
    ) throws -> StatusResponse {
        try engine.allSubscriptionStatuses(anyTransactionId: anyTransactionId, status: status)
    }

    /// Look Up Order ID: the transactions of an order.
    ///
    /// - Parameter orderId: The order id from the customer's receipt (``SimulatedTransaction/orderId``).
    /// - Returns: Apple's `OrderLookupResponse`: status valid with the signed transactions, or invalid with none.
    /// - Throws: ``IAPError`` if signing fails.
    public func lookUpOrderId(_ orderId: String) throws -> OrderLookupResponse {
        try engine.lookUpOrder(orderId: orderId)
    }
}
