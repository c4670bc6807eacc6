#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
public import IAPApp
public import IAPCore
import IAPServerAPI

/// One device signed in to one account of a ``SimulatedAppStore``: the ``StoreClient`` an app sees, on Linux.
///
/// Several clients of the same account are several devices: they see the same purchases, and each receives
/// through ``transactionUpdates()`` what the others bought, renewals, approved Ask to Buy requests, refunds and
/// revocations. Like StoreKit, the updates start with every unfinished transaction, so a new client on the same
/// account is the app launched again; the transaction a purchase of this client returns is not sent through its
/// updates. ``setOffline(_:)`` makes the store unreachable.
///
/// Offers are checked as the App Store checks them (``SimulatedAppStore/Configuration/subscriptionOffers`` and
/// ``SimulatedAppStore/Configuration/offerSigningKeys``); the sheets (refund, manage subscriptions, offer codes) are
/// recorded for the test to look at, and a test decides what the customer does in them.
///
/// ```swift
/// let phone = SimulatedStoreClient(store: appStore, account: "alice")
/// let coordinator = PurchaseCoordinator(store: phone, delivery: delivery, outbox: outbox, configuration: config)
/// ```
public actor SimulatedStoreClient: StoreClient {
    /// The store.
    public nonisolated let store: SimulatedAppStore
    /// The App Store account the device is signed in to.
    public nonisolated let account: String
    private nonisolated let deviceId = UUID()

    private var offline = false
    private var askToBuy: Bool
    private var cancelNext = 0
    private var refundAnswers: [Result<RefundRequestStatus, IAPError>] = []
    private var refundRequestIds: [String] = []
    private var syncs = 0
    private var sheetsSupported = true
    private var manageSubscriptionsSheets: [String?] = []
    private var offerCodeRedemptions: [(productId: String, offerId: String)] = []
    private var offerCodeSheets = 0
    private var lastOptions: StorePurchaseOptions?
    private var includesFinishedConsumables = false
    private var paymentsAllowed = true
    private nonisolated let intents = AsyncStream.makeStream(of: AppStorePurchaseIntent.self)

    /// Creates a device signed in to an account.
    ///
    /// - Parameters:
    ///   - store: The store.
    ///   - account: The account; created at the first purchase if new.
    ///   - askToBuy: Whether the account is a child's, whose purchases a parent approves.
    public init(store: SimulatedAppStore, account: String, askToBuy: Bool = false) {
        self.store = store
        self.account = account
        self.askToBuy = askToBuy
    }

    // MARK: - Test controls

    /// Cuts the device off from the App Store, or reconnects it: offline, products, purchases, sync and refund
    /// requests fail with a retryable `transportFailure`.
    ///
    /// - Parameter offline: Whether the device is offline.
    public func setOffline(_ offline: Bool) {
        self.offline = offline
    }

    /// Lets the customer make payments on this device, or not (Screen Time's restriction): ``canMakePayments()``
    /// answers it, and a purchase fails with `purchaseNotAllowed` while payments are off.
    ///
    /// - Parameter allowed: Whether payments are allowed.
    public func setPaymentsAllowed(_ allowed: Bool) {
        paymentsAllowed = allowed
    }

    /// The customer starts a purchase on the App Store (a promoted in-app purchase, or a win-back offer): the app
    /// hears of it through ``purchaseIntents()`` and completes it.
    ///
    /// - Parameters:
    ///   - productId: The product.
    ///   - offerId: The win-back offer, if any.
    public func startPurchaseOnAppStore(productId: String, offerId: String? = nil) {
        intents.continuation.yield(AppStorePurchaseIntent(productId: productId, offerId: offerId))
    }

    /// Makes the account a child's (purchases wait for a parent) or not.
    ///
    /// - Parameter enabled: Whether Ask to Buy applies.
    public func setAskToBuy(_ enabled: Bool) {
        askToBuy = enabled
    }

    /// Makes the customer back out of the next purchase.
    public func cancelNextPurchase() {
        cancelNext += 1
    }

    /// Makes the next refund request answer `status` (`.success` by default).
    ///
    /// - Parameter status: The answer.
    public func answerNextRefundRequest(with status: RefundRequestStatus) {
        refundAnswers.append(.success(status))
    }

    /// Makes the next refund request fail as the App Store can: `refundAlreadyRequested` (StoreKit's
    /// `duplicateRequest`), `refundRequestFailed` (`failed`), `transportFailure`, `unsupportedOperation`...
    ///
    /// - Parameter error: The failure.
    public func failNextRefundRequest(with error: IAPError) {
        refundAnswers.append(.failure(error))
    }

    /// Makes the device one without the App Store's sheets (tvOS, watchOS): refund requests, manage subscriptions
    /// and offer codes fail with `unsupportedOperation`.
    ///
    /// - Parameter supported: Whether the sheets exist.
    public func setSheetsSupported(_ supported: Bool) {
        sheetsSupported = supported
    }

    /// The customer redeems an offer code in the next offer code sheet: a subscription purchase with `offerType`
    /// 3 and the offer id, made outside the app's purchase calls, so that it reaches the app through the updates.
    ///
    /// - Parameters:
    ///   - productId: The auto-renewable subscription the code is for.
    ///   - offerId: The offer code's offer id.
    public func redeemOfferCodeInNextSheet(productId: String, offerId: String) {
        offerCodeRedemptions.append((productId, offerId))
    }

    /// Makes the device an app with `SKIncludeConsumableInAppPurchaseHistory` set in its Info.plist on iOS 18
    /// or later: ``allTransactions()`` and ``latestTransaction(for:)`` then include finished consumables.
    ///
    /// - Parameter included: Whether finished consumables are listed.
    public func setIncludesFinishedConsumables(_ included: Bool) {
        includesFinishedConsumables = included
    }

    /// The manage-subscriptions sheets shown, in order, with the group each was for (`nil` for all).
    public var manageSubscriptionsRequests: [String?] { manageSubscriptionsSheets }

    /// How many offer code sheets were shown.
    public var offerCodeSheetCount: Int { offerCodeSheets }

    /// The options of the last purchase asked for, as the store received them.
    public var lastPurchaseOptions: StorePurchaseOptions? { lastOptions }

    /// The transactions a refund was requested for from this device, in order.
    public var refundRequests: [String] { refundRequestIds }

    /// How many times ``sync()`` succeeded.
    public var syncCount: Int { syncs }

    // MARK: - StoreClient

    /// The products of the store's catalog with these ids.
    ///
    /// - Parameter productIds: The ids.
    /// - Returns: The products the store sells; unknown ids are left out.
    /// - Throws: ``IAPError`` `transportFailure` (retryable) when offline.
    public func products(for productIds: Set<String>) async throws -> [StoreProduct] {
        try checkOnline("load products")
        let configuration = store.configuration
        var products: [StoreProduct] = []
        for product in store.products where productIds.contains(product.productId) {
            let milli = configuration.prices[product.productId] ?? configuration.defaultPrice
            var item = StoreProduct(
                id: product.productId,
                displayName: product.displayName ?? product.productId,
                displayPrice: Self.format(milli, currency: configuration.currency),
                type: product.kind.appStoreType,
                subscriptionGroupId: product.kind == .autoRenewable ? product.subscriptionGroupId : nil,
                price: Decimal(milli) / 1000,
                currencyCode: configuration.currency
            )
            if product.kind == .autoRenewable, let groupId = product.subscriptionGroupId {
                let period =
                    configuration.subscriptionPeriods[product.productId] ?? product.duration
                    ?? SubscriptionPeriod(value: 1, unit: .month)
                let offers = configuration.subscriptionOffers.filter { $0.productId == product.productId }
                func present(_ offer: SimulatedSubscriptionOffer, as kind: StoreSubscriptionOffer.Kind)
                    -> StoreSubscriptionOffer
                {
                    StoreSubscriptionOffer(
                        id: kind == .introductory ? nil : offer.id,
                        kind: kind,
                        paymentMode: offer.discountType == .freeTrial
                            ? .freeTrial : offer.discountType == .payUpFront ? .payUpFront : .payAsYouGo,
                        price: Decimal(offer.price) / 1000,
                        displayPrice: Self.format(offer.price, currency: configuration.currency),
                        period: offer.period ?? period,
                        periodCount: offer.periodCount
                    )
                }
                item.subscriptionPeriod = period
                item.introductoryOffer = offers.first { $0.kind == .introductory }.map {
                    present($0, as: .introductory)
                }
                item.promotionalOffers = offers.filter { $0.kind == .promotional }.map { present($0, as: .promotional) }
                item.winBackOffers = offers.filter { $0.kind == .winBack }.map { present($0, as: .winBack) }
                item.isEligibleForIntroOffer = await store.isEligibleForIntroOffer(account: account, groupId: groupId)
            }
            products.append(item)
        }
        return products
    }

    /// Whether the customer may make payments on this device (``setPaymentsAllowed(_:)``).
    public func canMakePayments() async -> Bool {
        paymentsAllowed
    }

    /// The purchases started on the App Store with ``startPurchaseOnAppStore(productId:offerId:)``, in order; one
    /// stream per device, for its one listener.
    public nonisolated func purchaseIntents() -> AsyncStream<AppStorePurchaseIntent> {
        intents.stream
    }

    /// Buys a product on this device, with its options: the App Store checks the offer and its signature.
    ///
    /// - Parameters:
    ///   - productId: The product.
    ///   - options: The appAccountToken, quantity, offer and introductory offer eligibility.
    /// - Returns: The signed transaction, `.pending` under Ask to Buy, or `.userCancelled`.
    /// - Throws: ``IAPError`` `transportFailure` (retryable) when offline; the store's failure (injected, unknown
    ///   product, bad quantity, `offerInvalid`, `offerIneligible`).
    public func purchase(productId: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult {
        try checkOnline("purchase")
        guard paymentsAllowed else {
            throw IAPError(.purchaseNotAllowed, "payments are turned off on this device")
        }
        lastOptions = options
        if cancelNext > 0 {
            cancelNext -= 1
            return .userCancelled
        }
        let result = try await store.purchase(
            productId: productId,
            account: account,
            appAccountToken: options.appAccountToken,
            quantity: options.quantity,
            askToBuy: askToBuy,
            offer: options.offer,
            introductoryOfferEligibility: options.introductoryOfferEligibility,
            device: deviceId
        )
        switch result {
        case .purchased(let transaction): return .success(signedTransaction: transaction.signedTransaction)
        case .pending: return .pending
        case .failed(let error): throw error
        }
    }

    /// The account's transactions as they change, starting with the unfinished ones.
    ///
    /// - Returns: Signed transactions (JWS).
    public nonisolated func transactionUpdates() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let store = self.store
        let account = self.account
        let device = deviceId
        let forward = Task {
            let updates = await store.observeTransactions(ofAccount: account, device: device)
            for await signed in updates {
                continuation.yield(signed)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in forward.cancel() }
        return stream
    }

    /// The account's transactions not finished yet, as StoreKit's `Transaction.unfinished`.
    ///
    /// - Returns: Signed transactions (JWS), oldest first.
    /// - Throws: ``IAPError`` if signing fails.
    public func unfinishedTransactions() async throws -> [String] {
        try await store.accountTransactions(ofAccount: account).filter { !$0.isFinished }
            .map(\.transaction.signedTransaction)
    }

    /// The account's most recent transaction of a product, as StoreKit's `Transaction.latest(for:)`: finished
    /// consumables are left out as in ``allTransactions()``.
    ///
    /// - Parameter productId: The product.
    /// - Returns: The signed transaction, or `nil` when the account never bought it.
    /// - Throws: ``IAPError`` if signing fails.
    public func latestTransaction(for productId: String) async throws -> String? {
        try await store.accountTransactions(ofAccount: account)
            .filter { $0.transaction.payload.productId == productId && isListed($0) }
            .max {
                ($0.transaction.payload.purchaseDate ?? .distantPast)
                    < ($1.transaction.payload.purchaseDate ?? .distantPast)
            }?
            .transaction.signedTransaction
    }

    /// The status of each of the account's subscriptions in a group (family-shared ones included), as StoreKit's
    /// `Product.SubscriptionInfo.status(for:)`: the state, latest transaction and renewal information, signed now.
    ///
    /// - Parameter groupId: The subscription group.
    /// - Returns: The statuses; empty when the account never subscribed in the group.
    /// - Throws: ``IAPError`` `transportFailure` (retryable) when offline.
    public func subscriptionStatuses(groupId: String) async throws -> [StoreSubscriptionStatus] {
        try checkOnline("read subscription statuses")
        guard let anyTransaction = try await store.accountTransactions(ofAccount: account).first else { return [] }
        let response = try await store.allSubscriptionStatuses(
            anyTransactionId: anyTransaction.transaction.transactionId
        )
        return (response.data ?? []).filter { $0.subscriptionGroupIdentifier == groupId }
            .flatMap { $0.lastTransactions ?? [] }
            .compactMap { item in
                guard let state = item.status, let transaction = item.signedTransactionInfo,
                    let renewal = item.signedRenewalInfo
                else { return nil }
                return StoreSubscriptionStatus(state: state, signedTransaction: transaction, signedRenewalInfo: renewal)
            }
    }

    /// The account's signed app transaction (``SimulatedAppStore/appTransaction(ofAccount:)``).
    ///
    /// - Parameter refresh: Whether to fetch it again (it fails offline then, as StoreKit's `refresh()` does).
    /// - Returns: The signed app transaction.
    /// - Throws: ``IAPError`` `transportFailure` (retryable) when refreshing offline.
    public func appTransaction(refresh: Bool) async throws -> String {
        if refresh {
            try checkOnline("refresh the app transaction")
        }
        return try await store.appTransaction(ofAccount: account)
    }

    /// The account's transactions, as StoreKit's `Transaction.all`: finished consumables are left out (unless
    /// refunded, or listed with ``setIncludesFinishedConsumables(_:)``).
    ///
    /// - Returns: Signed transactions (JWS), oldest first.
    /// - Throws: ``IAPError`` if signing fails.
    public func allTransactions() async throws -> [String] {
        try await store.accountTransactions(ofAccount: account).filter(isListed).map(\.transaction.signedTransaction)
    }

    /// Whether StoreKit lists a transaction in `Transaction.all` and `latest(for:)`: a finished consumable only
    /// with ``setIncludesFinishedConsumables(_:)`` (or once refunded).
    private func isListed(_ item: SimulatedAppStore.AccountTransaction) -> Bool {
        let payload = item.transaction.payload
        return includesFinishedConsumables || !(item.isFinished && payload.type == .consumable)
            || payload.revocationDate != nil
    }

    /// The latest transaction of each product the account is entitled to now, as StoreKit's
    /// `Transaction.currentEntitlements`: non-consumables and non-renewing subscriptions not revoked, and live
    /// auto-renewable subscriptions; no consumables.
    ///
    /// - Returns: Signed transactions (JWS).
    /// - Throws: ``IAPError`` if signing fails.
    public func currentEntitlements() async throws -> [String] {
        let now = store.clock.now
        var latest: [String: SimulatedTransaction] = [:]
        var order: [String] = []
        for item in try await store.accountTransactions(ofAccount: account) {
            let payload = item.transaction.payload
            guard payload.type != .consumable, payload.revocationDate == nil, payload.isUpgraded != true else {
                continue
            }
            if payload.type == .autoRenewableSubscription, (payload.expiresDate ?? .distantPast) <= now {
                continue
            }
            let key =
                payload.type == .autoRenewableSubscription
                ? "sub:" + item.transaction.originalTransactionId : "tx:" + item.transaction.transactionId
            if let existing = latest[key],
                (existing.payload.purchaseDate ?? .distantPast) > (payload.purchaseDate ?? .distantPast)
            {
                continue
            }
            if latest[key] == nil {
                order.append(key)
            }
            latest[key] = item.transaction
        }
        return order.compactMap { latest[$0]?.signedTransaction }
    }

    /// Finishes a transaction of the device's account; like StoreKit, finishing a finished, unknown or other
    /// account's transaction does nothing.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Throws: ``IAPError`` if the store cannot be read.
    public func finish(transactionId: String) async throws {
        let owned = try await store.accountTransactions(ofAccount: account)
            .contains { $0.transaction.transactionId == transactionId }
        guard owned else { return }
        try await store.finishTransaction(transactionId: transactionId)
    }

    /// Syncs with the store (nothing to bring over in a simulation, but it fails offline).
    ///
    /// - Throws: ``IAPError`` `transportFailure` (retryable) when offline.
    public func sync() async throws {
        try checkOnline("sync")
        syncs += 1
    }

    /// Records a refund request; the refund itself is the test's call (``SimulatedAppStore/refund(transactionId:reason:percentage:)``).
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: `.success`, or the answer set with ``answerNextRefundRequest(with:)``.
    /// - Throws: ``IAPError`` `transportFailure` when offline, `unsupportedOperation` without sheets, `.notFound` for
    ///   a transaction of another account, or the failure set with ``failNextRefundRequest(with:)``.
    public func requestRefund(transactionId: String) async throws -> RefundRequestStatus {
        try checkSheets("request a refund")
        let owned = try await store.accountTransactions(ofAccount: account)
            .contains { $0.transaction.transactionId == transactionId }
        guard owned else {
            throw IAPError(.notFound, "account '\(account)' has no transaction \(transactionId)")
        }
        let answer = refundAnswers.isEmpty ? .success(.success) : refundAnswers.removeFirst()
        let status = try answer.get()
        if status == .success {
            refundRequestIds.append(transactionId)
        }
        return status
    }

    /// Shows the manage-subscriptions sheet: recorded in ``manageSubscriptionsRequests``; what the customer does in
    /// it is the test's call (``SimulatedAppStore/setAutoRenew(originalTransactionId:enabled:)``, ...).
    ///
    /// - Parameter groupId: The group, or `nil` for all.
    /// - Throws: ``IAPError`` `transportFailure` when offline, `unsupportedOperation` without sheets.
    public func showManageSubscriptions(groupId: String?) async throws {
        try checkSheets("show the subscriptions")
        manageSubscriptionsSheets.append(groupId)
    }

    /// Shows the offer code sheet: counted in ``offerCodeSheetCount``; a code set with
    /// ``redeemOfferCodeInNextSheet(productId:offerId:)`` is redeemed, and its transaction reaches the app through
    /// the updates.
    ///
    /// - Throws: ``IAPError`` `transportFailure` when offline, `unsupportedOperation` without sheets, the store's
    ///   failure when the code cannot be redeemed.
    public func presentOfferCodeRedemption() async throws {
        try checkSheets("show the offer code sheet")
        offerCodeSheets += 1
        guard !offerCodeRedemptions.isEmpty else { return }
        let redemption = offerCodeRedemptions.removeFirst()
        let result = try await store.redeemOfferCode(
            productId: redemption.productId,
            offerId: redemption.offerId,
            account: account
        )
        if case .failed(let error) = result {
            throw error
        }
    }

    /// Formats milliunits as `9.99 USD`.
    /// A price as the App Store shows it in the United States: `$9.99`; `€9.99`, `£9.99`, or `9.99 CHF` for
    /// another currency.
    static func format(_ milli: Int64, currency: String) -> String {
        let cents = (milli % 1000) / 10
        let amount = "\(milli / 1000).\(cents < 10 ? "0" : "")\(cents)"
        switch currency {
        case "USD": return "$" + amount
        case "EUR": return "€" + amount
        case "GBP": return "£" + amount
        default: return "\(amount) \(currency)"
        }
    }

    private func checkSheets(_ operation: String) throws {
        try checkOnline(operation)
        guard sheetsSupported else {
            throw IAPError(.unsupportedOperation, "this device has no App Store sheet to \(operation)")
        }
    }

    private func checkOnline(_ operation: String) throws {
        if offline {
            throw IAPError(
                .transportFailure,
                "the device is offline: could not \(operation)",
                isRetryable: true
            )
        }
    }
}
