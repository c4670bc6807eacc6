#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
import IAPCore

/// The device's store, as the app sees it: StoreKit on Apple platforms, `SimulatedStoreClient` in tests.
///
/// Every transaction crosses this protocol as the compact JWS the App Store signed (StoreKit's
/// `jwsRepresentation`), so that the server verifies exactly what Apple signed. The app never decides anything
/// from an unverified transaction except where to send it. ``PurchaseCoordinator`` is built on this protocol;
/// `StoreKitStoreClient` (in `IAPStoreKit`) adapts StoreKit 2 to it.
///
/// ## Implementation requirements
/// - ``purchase(productId:options:)`` applies every option it is given or fails: the appAccountToken and quantity,
///   the offer (a promotional offer with the server's signature, a win-back offer) and the signed introductory offer
///   eligibility. It returns the signed transaction of a completed purchase, ``StorePurchaseResult/pending`` while a
///   parent or a bank must approve, ``StorePurchaseResult/userCancelled`` when the customer backed out; it throws
///   ``IAPError`` for anything else (`transportFailure` marked retryable when the store cannot be reached,
///   `unknownProduct`, `purchaseNotAllowed`, `offerInvalid`, `offerIneligible`, `unsupportedOperation` for an option
///   this OS does not have, ...). A thrown purchase charged nothing.
/// - ``transactionUpdates()`` emits, for as long as the sequence is iterated, every transaction that changes
///   outside a purchase call of this device: renewals, Ask to Buy approvals, refunds and revocations, purchases
///   made on other devices or in the App Store. At its start it emits each unfinished transaction once, as
///   StoreKit does at launch. It does not emit the transaction a ``purchase(productId:options:)`` of this device
///   returned.
/// - ``unfinishedTransactions()`` lists what StoreKit's `Transaction.unfinished` does: every transaction of the
///   account not finished yet, whichever way it came.
/// - ``finish(transactionId:)`` is idempotent: finishing a finished or unknown transaction does nothing.
/// - Sheets (refund, manage subscriptions, offer codes) throw `unsupportedOperation` on a platform without them,
///   and map the store's errors to ``IAPError`` codes ``PurchaseFailureKind`` classifies.
/// - Safe to call from many tasks at once.
public protocol StoreClient: Sendable {
    /// Loads products by id.
    ///
    /// - Parameter productIds: The product ids to load.
    /// - Returns: The products the store knows; ids it does not know are missing from the answer.
    /// - Throws: ``IAPError`` when the store cannot be asked (`transportFailure`, retryable).
    func products(for productIds: Set<String>) async throws -> [StoreProduct]

    /// Buys a product.
    ///
    /// - Parameters:
    ///   - productId: The product to buy.
    ///   - options: The appAccountToken, quantity and offers (StoreKit's purchase options).
    /// - Returns: The signed transaction, pending, or cancelled by the customer.
    /// - Throws: ``IAPError`` when the purchase failed; nothing was charged.
    func purchase(productId: String, options: StorePurchaseOptions) async throws -> StorePurchaseResult

    /// The transactions that change outside this device's purchase calls, starting with the unfinished ones.
    ///
    /// - Returns: A sequence of signed transactions (JWS).
    func transactionUpdates() -> AsyncStream<String>

    /// The transactions not finished yet, as StoreKit's `Transaction.unfinished`.
    ///
    /// - Returns: Signed transactions (JWS).
    /// - Throws: ``IAPError`` when the store cannot be asked.
    func unfinishedTransactions() async throws -> [String]

    /// Every transaction of the signed-in App Store account, as StoreKit's `Transaction.all` (finished
    /// consumables left out).
    ///
    /// - Returns: Signed transactions (JWS).
    /// - Throws: ``IAPError`` when the store cannot be asked.
    func allTransactions() async throws -> [String]

    /// The latest transaction of every product the account is entitled to now (no consumables, no revoked or
    /// expired purchases), as StoreKit's `Transaction.currentEntitlements`.
    ///
    /// - Returns: Signed transactions (JWS).
    /// - Throws: ``IAPError`` when the store cannot be asked.
    func currentEntitlements() async throws -> [String]

    /// The account's most recent transaction of a product, as StoreKit's `Transaction.latest(for:)`.
    ///
    /// - Parameter productId: The product.
    /// - Returns: The signed transaction (JWS), or `nil` when the account never bought it.
    /// - Throws: ``IAPError`` when the store cannot be asked.
    func latestTransaction(for productId: String) async throws -> String?

    /// The status of each subscription of a group the account has or had, as StoreKit's
    /// `Product.SubscriptionInfo.status(for:)` (more than one with Family Sharing).
    ///
    /// - Parameter groupId: The subscription group.
    /// - Returns: The statuses; empty when the account never subscribed in the group.
    /// - Throws: ``IAPError`` when the store cannot be asked.
    func subscriptionStatuses(groupId: String) async throws -> [StoreSubscriptionStatus]

    /// The App Store's signed record of the app's download, as StoreKit's `AppTransaction.shared`.
    ///
    /// - Parameter refresh: Whether to fetch it from the App Store again (`AppTransaction.refresh()`, which asks the
    ///   customer to sign in: only after the customer asked for it).
    /// - Returns: The signed app transaction (JWS).
    /// - Throws: ``IAPError`` when it is not available.
    func appTransaction(refresh: Bool) async throws -> String

    /// Tells the store the app is done with a transaction; it is then no longer re-delivered at launch.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Throws: ``IAPError`` when the store cannot be told (the transaction is re-delivered later).
    func finish(transactionId: String) async throws

    /// Brings the device up to date with the App Store (StoreKit's `AppStore.sync()`, "Restore Purchases").
    ///
    /// - Throws: ``IAPError``: `transportFailure` (retryable) when the App Store cannot be reached, `userCancelled`
    ///   when the customer declined to sign in.
    func sync() async throws

    /// Shows the App Store's refund request sheet for a transaction.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: Whether the request was sent (which says nothing about the refund itself).
    /// - Throws: ``IAPError`` when the sheet cannot be shown or the request failed: `refundAlreadyRequested`,
    ///   `refundRequestFailed`, `transportFailure`, `unsupportedOperation`, ...
    func requestRefund(transactionId: String) async throws -> RefundRequestStatus

    /// Shows the App Store's sheet where the customer manages their subscriptions (StoreKit's
    /// `AppStore.showManageSubscriptions(in:)`); returns once it is closed.
    ///
    /// - Parameter groupId: Only this subscription group, or `nil` for every subscription of the app.
    /// - Throws: ``IAPError`` when the sheet cannot be shown (`unsupportedOperation` on a platform without it).
    func showManageSubscriptions(groupId: String?) async throws

    /// Shows the App Store's sheet where the customer redeems an offer code (StoreKit's
    /// `AppStore.presentOfferCodeRedeemSheet(in:)`); a redeemed code arrives as a transaction through the
    /// updates.
    ///
    /// - Throws: ``IAPError`` when the sheet cannot be shown (`unsupportedOperation` on a platform without it).
    func presentOfferCodeRedemption() async throws

    /// Whether this customer may make payments on this device (StoreKit's `AppStore.canMakePayments`). The extension
    /// answers `true`.
    func canMakePayments() async -> Bool

    /// The purchases customers start on the App Store (StoreKit's `PurchaseIntent.intents`). The extension's stream
    /// ends at once.
    func purchaseIntents() -> AsyncStream<AppStorePurchaseIntent>
}

extension StoreClient {
    /// Whether this customer may make payments on this device (StoreKit's `AppStore.canMakePayments`: `false` when
    /// Screen Time or a device management profile blocks purchases). `true` unless the store says otherwise.
    public func canMakePayments() async -> Bool {
        true
    }

    /// The purchases customers start on the App Store (StoreKit's `PurchaseIntent.intents`), as they come; a store
    /// without them never yields.
    public func purchaseIntents() -> AsyncStream<AppStorePurchaseIntent> {
        AsyncStream { $0.finish() }
    }

    /// Buys a product with an appAccountToken and a quantity only.
    ///
    /// - Parameters:
    ///   - productId: The product to buy.
    ///   - appAccountToken: The app's UUID for the purchase.
    ///   - quantity: How many (consumables only; 1 otherwise).
    /// - Returns: The signed transaction, pending, or cancelled by the customer.
    /// - Throws: ``IAPError`` when the purchase failed; nothing was charged.
    public func purchase(productId: String, appAccountToken: UUID, quantity: Int) async throws
        -> StorePurchaseResult
    {
        try await purchase(
            productId: productId,
            options: StorePurchaseOptions(appAccountToken: appAccountToken, quantity: quantity)
        )
    }
}
