#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import IAPApp
import IAPCore

extension SimulatedAppStore {
    /// A transaction of an account, signed now, and whether the app finished it.
    public struct AccountTransaction: Sendable, Hashable {
        /// The transaction.
        public var transaction: SimulatedTransaction
        /// Whether the app finished it (``finishTransaction(transactionId:)``).
        public var isFinished: Bool
    }

    /// Every transaction of a customer with whether it is finished, oldest first, signed now.
    ///
    /// - Parameter account: The customer.
    /// - Returns: The transactions, including family-shared ones.
    /// - Throws: ``IAPError`` if signing fails.
    public func accountTransactions(ofAccount account: String) throws -> [AccountTransaction] {
        try engine.transactionIdsByAccount[account, default: []].compactMap { id in
            guard let record = engine.transactions[id] else { return nil }
            return AccountTransaction(transaction: try engine.signed(record), isFinished: record.isFinished)
        }
    }

    /// Watches a customer's transactions, as a device's StoreKit does: the stream first sends every unfinished
    /// transaction once, then every transaction that is created or changes (a purchase on another device, a
    /// renewal, an approved Ask to Buy, a refund, Family Sharing), signed at the time of the change.
    ///
    /// The stream ends when its consumer stops iterating.
    ///
    /// - Parameter account: The customer.
    /// - Returns: A stream of signed transactions (JWS).
    public func observeTransactions(ofAccount account: String) -> AsyncStream<String> {
        observeTransactions(ofAccount: account, device: UUID())
    }

    /// Registers an observer for a device (see ``observeTransactions(ofAccount:)``); the device's own purchases are
    /// not sent to it.
    func observeTransactions(ofAccount account: String, device: UUID) -> AsyncStream<String> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        engine.ensureAccount(account)
        let cursor = engine.accounts[account]?.modificationCounter ?? 0
        for id in engine.transactionIdsByAccount[account, default: []] {
            guard let record = engine.transactions[id], !record.isFinished,
                let signed = try? engine.signed(record)
            else { continue }
            continuation.yield(signed.signedTransaction)
        }
        transactionObservers[id] = SimulatedTransactionObserver(
            account: account,
            device: device,
            continuation: continuation,
            cursor: cursor
        )
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeTransactionObserver(id) }
        }
        return stream
    }

    /// Buys a product, for a device or not: like
    /// ``purchase(productId:account:appAccountToken:quantity:askToBuy:offer:introductoryOfferEligibility:)``, but a
    /// device's own observer is not sent the transaction the purchase returns.
    func purchase(
        productId: String,
        account: String,
        appAccountToken: UUID?,
        quantity: Int,
        askToBuy: Bool,
        offer: PurchaseOffer?,
        introductoryOfferEligibility: String?,
        device: UUID?
    ) throws -> SimulatedPurchaseResult {
        let token = appAccountToken?.uuidString.lowercased()
        var decision = SimulatedOfferChecker.Decision()
        if offer != nil || introductoryOfferEligibility != nil {
            let checker = SimulatedOfferChecker(configuration: configuration, keys: offerKeys, now: clock.now)
            do {
                decision = try checker.check(
                    offer: offer,
                    eligibility: introductoryOfferEligibility,
                    productId: productId,
                    appAccountToken: token,
                    accountTransactionIds: Set(engine.transactionIdsByAccount[account, default: []]),
                    usedNonces: engine.usedOfferNonces
                )
            } catch {
                return .failed(IAPError.wrapping(error, as: .offerInvalid, "the offer was refused"))
            }
        }
        var copy = engine
        let result = try copy.purchase(
            productId: productId,
            account: account,
            appAccountToken: token,
            quantity: quantity,
            askToBuy: askToBuy,
            offer: decision.offer,
            introductoryEligibility: decision.introductoryEligibility
        )
        switch result {
        case .purchased, .pending:
            // A signature is good for one purchase.
            copy.usedOfferNonces.formUnion(decision.nonces)
        case .failed:
            break
        }
        engine = copy
        if let device, let transaction = result.transaction,
            let record = engine.transactions[transaction.transactionId]
        {
            for (id, observer) in transactionObservers where observer.device == device {
                transactionObservers[id]?.ownChanges[record.id] = record.sequence
            }
        }
        publishTransactionChanges()
        return result
    }

    func removeTransactionObserver(_ id: UUID) {
        transactionObservers[id] = nil
    }

    /// Sends each observer the transactions of its account that changed since its cursor, in the order of the
    /// changes.
    func publishTransactionChanges() {
        for (id, observer) in transactionObservers {
            var observer = observer
            let changed = engine.transactionIdsByAccount[observer.account, default: []]
                .compactMap { engine.transactions[$0] }
                .filter { $0.sequence > observer.cursor }
                .sorted { $0.sequence < $1.sequence }
            for record in changed {
                if observer.ownChanges[record.id] == record.sequence {
                    observer.ownChanges[record.id] = nil
                } else {
                    // A record that cannot be signed is sent at the next change.
                    guard let signed = try? engine.signed(record) else { break }
                    observer.continuation.yield(signed.signedTransaction)
                }
                observer.cursor = record.sequence
            }
            transactionObservers[id] = observer
        }
    }
}
