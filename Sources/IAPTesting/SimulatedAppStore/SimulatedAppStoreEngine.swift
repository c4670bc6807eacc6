#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPCore
import IAPCrypto
import IAPServerAPI

/// The state and rules of ``SimulatedAppStore``.
///
/// A value type so that the actor can apply an operation all or nothing: it runs the operation on a copy and keeps
/// the copy only when the operation succeeded. The extensions hold the rules: `+Purchases`, `+Subscriptions`,
/// `+Refunds`, `+Family` and `+Queries`.
struct SimulatedAppStoreEngine: Sendable {
    /// Apple's page size for transaction and refund history.
    static let historyPageSize = 20
    /// The largest quantity of a consumable one purchase may buy, as on the App Store.
    static let maximumQuantity = 10

    let configuration: SimulatedAppStore.Configuration
    let products: [String: CatalogProduct]
    let signer: JWSSigner
    let clock: any WallClock

    var accounts: [String: SimulatedAccountRecord] = [:]
    var accountIdsByAppTransactionId: [String: String] = [:]
    var transactions: [String: SimulatedTransactionRecord] = [:]
    /// Each account's transaction ids, in creation order.
    var transactionIdsByAccount: [String: [String]] = [:]
    /// Subscriptions by original transaction id.
    var subscriptions: [String: SimulatedSubscriptionRecord] = [:]
    /// The renewal-date extensions each subscription received (by original transaction id), oldest first.
    var renewalExtensions: [String: [SimulatedRenewalExtension]] = [:]
    /// The renewal-date extensions for all active subscribers of a product, by `productId/requestIdentifier`.
    var massExtensions: [String: SimulatedMassExtension] = [:]
    /// Family members by family id (the organizer's account id), organizer first.
    var families: [String: [String]] = [:]
    var askToBuyRequests: [String: SimulatedAskToBuyRequest] = [:]
    var purchaseFailures: [IAPError] = []
    /// The nonces of the offer signatures purchases used; a signature is good for one purchase.
    var usedOfferNonces: Set<String> = []
    var outbox: [String] = []
    var notificationHistory: [String] = []
    /// The consumption information the app sent, by transaction id, oldest first.
    var consumptionAnswers: [String: [ConsumptionRequest]] = [:]

    var nextTransactionNumber: UInt64
    var nextWebOrderLineItemNumber: UInt64
    var nextAppTransactionNumber: UInt64 = 704_289_572_311_371_001
    var orderCount: UInt64 = 0
    var askToBuyCount: UInt64 = 0

    init(
        configuration: SimulatedAppStore.Configuration,
        products: [String: CatalogProduct],
        signer: JWSSigner,
        clock: any WallClock
    ) {
        self.configuration = configuration
        self.products = products
        self.signer = signer
        self.clock = clock
        self.nextTransactionNumber = configuration.firstTransactionId
        self.nextWebOrderLineItemNumber = configuration.firstTransactionId &+ 900_000_000
    }

    var now: Date { clock.now }

    // MARK: - Identifiers

    /// Orders decimal identifiers by their numeric value (shorter first, then digit by digit).
    static func numericOrder(_ lhs: String, _ rhs: String) -> Bool {
        (lhs.count, lhs) < (rhs.count, rhs)
    }

    mutating func makeTransactionId() -> String {
        defer { nextTransactionNumber &+= 1 }
        return String(nextTransactionNumber)
    }

    mutating func makeWebOrderLineItemId() -> String {
        defer { nextWebOrderLineItemNumber &+= 1 }
        return String(nextWebOrderLineItemNumber)
    }

    /// Makes an order id shaped like Apple's: `M` and nine capital letters or digits, distinct for every order.
    mutating func makeOrderId() -> String {
        orderCount &+= 1
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        let modulus: UInt64 = 101_559_956_668_416  // 36^9
        // An affine map with a multiplier prime to 36 is a bijection of Z/36^9: distinct counts, distinct ids.
        let product = (orderCount % modulus).multipliedFullWidth(by: 1_000_000_007)
        var value = (modulus.dividingFullWidth(product).remainder + 48_271_000_000_123) % modulus
        var characters: [Character] = []
        for _ in 0..<9 {
            characters.append(alphabet[Int(value % 36)])
            value /= 36
        }
        return "M" + String(characters.reversed())
    }

    // MARK: - Accounts

    /// Returns the account with `id`, creating it first when it does not exist.
    @discardableResult
    mutating func ensureAccount(_ id: String) -> SimulatedAccountRecord {
        if let account = accounts[id] {
            return account
        }
        let appTransactionId = String(nextAppTransactionNumber)
        nextAppTransactionNumber &+= 1
        let account = SimulatedAccountRecord(id: id, appTransactionId: appTransactionId, createdAt: now)
        accounts[id] = account
        accountIdsByAppTransactionId[appTransactionId] = id
        return account
    }

    /// Records a change to a transaction: bumps its account's modification counter and moves the transaction to
    /// the end of the account's modification order.
    mutating func touch(_ transactionId: String) {
        guard var record = transactions[transactionId], var account = accounts[record.account] else { return }
        account.modificationCounter += 1
        record.sequence = account.modificationCounter
        accounts[record.account] = account
        transactions[transactionId] = record
    }

    // MARK: - Products

    func price(of productId: String) -> Int64 {
        configuration.prices[productId] ?? configuration.defaultPrice
    }

    func period(of productId: String) -> SubscriptionPeriod {
        configuration.subscriptionPeriods[productId] ?? products[productId]?.duration
            ?? SubscriptionPeriod(value: 1, unit: .month)
    }

    func isFamilyShareable(_ productId: String) -> Bool {
        guard configuration.familyShareableProductIds.contains(productId), let product = products[productId] else {
            return false
        }
        return product.kind == .nonConsumable || product.kind == .autoRenewable
    }

    /// The end of a period of `productId` that starts at `start`, never at or before `start`.
    func periodEnd(of productId: String, from start: Date) -> Date {
        let end = period(of: productId).advance(start)
        return end > start ? end : start.addingTimeInterval(86_400)
    }

    // MARK: - Transactions

    /// The fields every transaction of `productId` for `account` carries.
    func basePayload(productId: String, account: String, purchaseDate: Date) -> TransactionPayload {
        let product = products[productId]
        return TransactionPayload(
            bundleId: configuration.bundleId,
            productId: productId,
            subscriptionGroupIdentifier: product?.kind == .autoRenewable ? product?.subscriptionGroupId : nil,
            purchaseDate: purchaseDate,
            quantity: 1,
            type: product?.kind.appStoreType,
            inAppOwnershipType: .purchased,
            environment: configuration.environment,
            storefront: configuration.storefront,
            storefrontId: configuration.storefrontId,
            transactionReason: .purchase,
            currency: configuration.currency,
            price: price(of: productId),
            appTransactionId: accounts[account]?.appTransactionId
        )
    }

    /// Records a new transaction: gives it the next transaction id (and makes it its own original transaction
    /// unless `payload` names one) and appends it to its account's history.
    mutating func insert(
        _ payload: TransactionPayload,
        account: String,
        orderId: String?,
        sharedFrom: String? = nil
    ) -> SimulatedTransactionRecord {
        ensureAccount(account)
        var payload = payload
        let id = makeTransactionId()
        payload.transactionId = id
        if payload.originalTransactionId == nil {
            payload.originalTransactionId = id
        }
        if payload.originalPurchaseDate == nil {
            payload.originalPurchaseDate = payload.purchaseDate
        }
        let record = SimulatedTransactionRecord(
            payload: payload,
            account: account,
            orderId: orderId,
            sharedFrom: sharedFrom,
            sequence: 0
        )
        transactions[id] = record
        transactionIdsByAccount[account, default: []].append(id)
        touch(id)
        return transactions[id] ?? record
    }

    /// Signs a transaction as of now.
    func signed(_ record: SimulatedTransactionRecord) throws -> SimulatedTransaction {
        var payload = record.payload
        payload.signedDate = now
        return SimulatedTransaction(
            payload: payload,
            signedTransaction: try signer.sign(payload),
            orderId: record.orderId
        )
    }

    /// Signs the transaction with `id` as of now.
    func signedTransaction(id: String) throws -> SimulatedTransaction {
        guard let record = transactions[id] else {
            throw IAPError(.notFound, "no transaction \(id)")
        }
        return try signed(record)
    }

    // MARK: - Renewal information

    /// The renewal information of a subscription as of now.
    func renewalPayload(_ subscription: SimulatedSubscriptionRecord) -> RenewalInfoPayload {
        let retrying = subscription.phase == .gracePeriod || subscription.phase == .billingRetry
        let ended = subscription.phase == .expired || subscription.phase == .revoked
        let nextOffer =
            ended ? nil : subscription.pendingOffer ?? (subscription.offerRenewalsLeft > 0 ? subscription.offer : nil)
        var renewalPrice =
            subscription.autoRenewProductId == subscription.productId
            ? subscription.increasedPrice ?? price(of: subscription.autoRenewProductId)
            : price(of: subscription.autoRenewProductId)
        var offerPeriod: String?
        if let nextOffer {
            renewalPrice = nextOffer.price
            offerPeriod = self.offerPeriod(of: nextOffer).repeated(nextOffer.periodCount).description
        }
        return RenewalInfoPayload(
            expirationIntent: ended ? subscription.expirationIntent : nil,
            originalTransactionId: subscription.originalTransactionId,
            autoRenewProductId: subscription.autoRenewProductId,
            productId: subscription.productId,
            autoRenewStatus: subscription.autoRenewEnabled || (!ended && owesRenewals(subscription)) ? .on : .off,
            isInBillingRetryPeriod: retrying,
            priceIncreaseStatus: ended ? nil : subscription.priceIncreaseStatus,
            gracePeriodExpiresDate: retrying ? subscription.gracePeriodExpiresDate : nil,
            offerType: nextOffer?.offerType,
            offerIdentifier: nextOffer?.kind == .introductory ? nil : nextOffer?.id,
            signedDate: now,
            environment: configuration.environment,
            recentSubscriptionStartDate: subscription.recentSubscriptionStartDate,
            renewalDate: subscription.expiresDate,
            currency: configuration.currency,
            renewalPrice: renewalPrice,
            offerDiscountType: nextOffer?.discountType,
            eligibleWinBackOfferIds: ended && subscription.sharedFrom == nil
                ? configuration.subscriptionOffers.filter {
                    $0.kind == .winBack && $0.productId == subscription.productId
                }.map(\.id) : nil,
            appAccountToken: subscription.appAccountToken,
            appTransactionId: accounts[subscription.account]?.appTransactionId,
            offerPeriod: offerPeriod,
            commitmentInfo: ended ? nil : renewalCommitment(subscription),
            renewalBillingPlanType: !ended && commitmentLength(of: subscription.autoRenewProductId) != nil
                ? .monthly : nil
        )
    }

    /// Signs the renewal information of a subscription as of now.
    func signedRenewal(_ subscription: SimulatedSubscriptionRecord) throws -> SimulatedRenewalInfo {
        let payload = renewalPayload(subscription)
        return SimulatedRenewalInfo(
            payload: payload,
            signedRenewalInfo: try signer.sign(payload),
            status: subscription.status
        )
    }

    /// The subscription with an original transaction id, or `.notFound`.
    func subscription(_ originalTransactionId: String) throws -> SimulatedSubscriptionRecord {
        guard let subscription = subscriptions[originalTransactionId] else {
            throw IAPError(
                .notFound,
                "no auto-renewable subscription with original transaction id \(originalTransactionId)"
            )
        }
        return subscription
    }

    // MARK: - Notifications

    /// Signs a notification V2 and appends it to the outbox.
    ///
    /// - Parameters:
    ///   - type: The notification type.
    ///   - subtype: The subtype, if the event has one.
    ///   - transaction: The transaction the notification is about, signed into `signedTransactionInfo`.
    ///   - subscription: The subscription, whose renewal information and status the notification carries.
    ///   - consumptionRequestReason: The reason of a `CONSUMPTION_REQUEST`.
    @discardableResult
    mutating func notify(
        _ type: NotificationType,
        _ subtype: NotificationSubtype? = nil,
        transaction: SimulatedTransactionRecord? = nil,
        subscription: SimulatedSubscriptionRecord? = nil,
        consumptionRequestReason: ConsumptionRequestReason? = nil
    ) throws -> String {
        var data = NotificationData(
            environment: configuration.environment,
            appAppleId: configuration.environment == .production ? configuration.appAppleId : nil,
            bundleId: configuration.bundleId,
            bundleVersion: type == .test ? nil : configuration.bundleVersion,
            consumptionRequestReason: consumptionRequestReason
        )
        if let transaction {
            data.signedTransactionInfo = try signed(transaction).signedTransaction
        }
        if let subscription {
            data.signedRenewalInfo = try signedRenewal(subscription).signedRenewalInfo
            data.status = subscription.status
        }
        let notificationUUID = UUID().uuidString.lowercased()
        let payload = NotificationPayload(
            notificationType: type,
            subtype: subtype,
            notificationUUID: notificationUUID,
            data: data,
            version: "2.0",
            signedDate: now
        )
        let signedPayload = try signer.sign(payload)
        outbox.append(signedPayload)
        notificationHistory.append(signedPayload)
        return notificationUUID
    }

    /// Signs an app-level notification V2 (`RESCIND_CONSENT`), whose `appData` carries the customer's signed app
    /// transaction instead of `data`, and appends it to the outbox.
    mutating func notifyApp(_ type: NotificationType, signedAppTransaction: String) throws {
        let payload = NotificationPayload(
            notificationType: type,
            notificationUUID: UUID().uuidString.lowercased(),
            version: "2.0",
            signedDate: now,
            appData: AppData(
                appAppleId: configuration.environment == .production ? configuration.appAppleId : nil,
                bundleId: configuration.bundleId,
                environment: configuration.environment,
                signedAppTransactionInfo: signedAppTransaction
            )
        )
        let signedPayload = try signer.sign(payload)
        outbox.append(signedPayload)
        notificationHistory.append(signedPayload)
    }

    /// Sends a notification about a subscription, with its latest transaction.
    mutating func notify(
        _ type: NotificationType,
        _ subtype: NotificationSubtype? = nil,
        subscription: SimulatedSubscriptionRecord
    ) throws {
        try notify(
            type,
            subtype,
            transaction: transactions[subscription.latestTransactionId],
            subscription: subscription
        )
    }
}
