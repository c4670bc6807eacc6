#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
public import IAPApp
import IAPCore

/// One device signed in to one account of a ``SimulatedAppStore``: the ``StoreClient`` an app sees, on Linux.
///
/// Several clients of the same account are several devices: they see the same purchases, and each receives
/// through ``transactionUpdates()`` what the others bought, renewals, approved Ask to Buy requests, refunds and
/// revocations. Like StoreKit, the updates start with every unfinished transaction, so a new client on the same
/// account is the app launched again; the transaction a purchase of this client returns is not sent through its
/// updates. ``setOffline(_:)`` makes the store unreachable.
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
    private var refundAnswers: [RefundRequestStatus] = []
    private var refundRequestIds: [String] = []
    private var syncs = 0

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
        refundAnswers.append(status)
    }

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
        let prices = store.configuration.prices
        let defaultPrice = store.configuration.defaultPrice
        let currency = store.configuration.currency
        return store.products.filter { productIds.contains($0.productId) }.map { product in
            let milli = prices[product.productId] ?? defaultPrice
            return StoreProduct(
                id: product.productId,
                displayName: product.productId,
                displayPrice: Self.format(milli, currency: currency),
                type: product.kind.appStoreType
            )
        }
    }

    /// Buys a product on this device.
    ///
    /// - Parameters:
    ///   - productId: The product.
    ///   - appAccountToken: The token signed into the transaction.
    ///   - quantity: How many.
    /// - Returns: The signed transaction, `.pending` under Ask to Buy, or `.userCancelled`.
    /// - Throws: ``IAPError`` `transportFailure` (retryable) when offline; the store's failure (injected, unknown
    ///   product, bad quantity).
    public func purchase(productId: String, appAccountToken: UUID, quantity: Int) async throws
        -> StorePurchaseResult
    {
        try checkOnline("purchase")
        if cancelNext > 0 {
            cancelNext -= 1
            return .userCancelled
        }
        let result = try await store.purchase(
            productId: productId,
            account: account,
            appAccountToken: appAccountToken,
            quantity: quantity,
            askToBuy: askToBuy,
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

    /// The account's transactions, finished consumables left out, as StoreKit's `Transaction.all`.
    ///
    /// - Returns: Signed transactions (JWS), oldest first.
    /// - Throws: ``IAPError`` if signing fails.
    public func allTransactions() async throws -> [String] {
        try await store.accountTransactions(ofAccount: account)
            .filter { !($0.isFinished && $0.transaction.payload.type == .consumable) }
            .map(\.transaction.signedTransaction)
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
    /// - Throws: ``IAPError`` `transportFailure` when offline, `.notFound` for a transaction of another account.
    public func requestRefund(transactionId: String) async throws -> RefundRequestStatus {
        try checkOnline("request a refund")
        let owned = try await store.accountTransactions(ofAccount: account)
            .contains { $0.transaction.transactionId == transactionId }
        guard owned else {
            throw IAPError(.notFound, "account '\(account)' has no transaction \(transactionId)")
        }
        let status = refundAnswers.isEmpty ? RefundRequestStatus.success : refundAnswers.removeFirst()
        if status == .success {
            refundRequestIds.append(transactionId)
        }
        return status
    }

    /// Formats milliunits as `9.99 USD`.
    private static func format(_ milli: Int64, currency: String) -> String {
        let cents = (milli % 1000) / 10
        return "\(milli / 1000).\(cents < 10 ? "0" : "")\(cents) \(currency)"
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
