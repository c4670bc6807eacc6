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
/// - ``purchase(productId:appAccountToken:quantity:)`` returns the signed transaction of a completed purchase,
///   ``StorePurchaseResult/pending`` while a parent or a bank must approve, ``StorePurchaseResult/userCancelled``
///   when the customer backed out; it throws ``IAPError`` for anything else (`transportFailure` marked retryable
///   when the store cannot be reached, `unknownProduct`, `purchaseNotAllowed`, ...). A thrown purchase charged
///   nothing.
/// - ``transactionUpdates()`` emits, for as long as the sequence is iterated, every transaction that changes
///   outside a purchase call of this device: renewals, Ask to Buy approvals, refunds and revocations, purchases
///   made on other devices or in the App Store. At its start it emits each unfinished transaction once, as
///   StoreKit does at launch. It does not emit the transaction a ``purchase(productId:appAccountToken:quantity:)``
///   of this device returned.
/// - ``finish(transactionId:)`` is idempotent: finishing a finished or unknown transaction does nothing.
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
    ///   - appAccountToken: The app's UUID for the purchase; the App Store signs it into the transaction.
    ///   - quantity: How many (consumables only; 1 otherwise).
    /// - Returns: The signed transaction, pending, or cancelled by the customer.
    /// - Throws: ``IAPError`` when the purchase failed; nothing was charged.
    func purchase(productId: String, appAccountToken: UUID, quantity: Int) async throws -> StorePurchaseResult

    /// The transactions that change outside this device's purchase calls, starting with the unfinished ones.
    ///
    /// - Returns: A sequence of signed transactions (JWS).
    func transactionUpdates() -> AsyncStream<String>

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
    /// - Throws: ``IAPError`` when the sheet cannot be shown or the request failed.
    func requestRefund(transactionId: String) async throws -> RefundRequestStatus
}
