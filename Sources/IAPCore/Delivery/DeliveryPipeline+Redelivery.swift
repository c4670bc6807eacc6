#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension DeliveryPipeline {
    /// Calls the fulfillment now for a delivery that waits for its retry or was dead-lettered, with its attempts
    /// counted anew: what a person's redelivery does once the receiver is fixed, instead of leaving it to the retry
    /// queue's next turn.
    ///
    /// The entry is claimed and its hook called in this call (with a ``TransactionalFulfillmentStore``, the
    /// fulfillment is carried out in this call). An entry that waits for nothing — delivered, held by another
    /// deliverer, waiting for its owner — is left alone.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: What this call did, or `nil` when the ledger has no such transaction or its delivery was not waiting
    ///   (retrying or dead-lettered).
    /// - Throws: ``IAPError`` if the store fails.
    public func redeliver(transactionId: String) async throws -> DeliveryOutcome? {
        guard let entry = try await store.entry(transactionId: transactionId) else { return nil }
        return try await compareAndSet(
            entry,
            ifExhausted: { DeliveryOutcome.pending($0) },
            change: { current in
                guard current.deliveryState == .retrying || current.deliveryState == .deadLettered,
                    let action = self.pendingAction(current)
                else { return .done(nil) }
                guard let product = try await knownProduct(of: current.transaction, id: current.productId) else {
                    // Its product left the catalog: parked, as the retry queue would, rather than an attempt made.
                    var parked = current
                    parked.deliveryState = .unknownProduct
                    parked.nextAttemptAt = nil
                    return .write(parked) { .deferred($0, Self.parkedError($0)) }
                }
                var due = current
                due.deliveryState = .pending
                due.nextAttemptAt = nil
                due.givenUpAt = nil
                due.deliveryAttempts = 0
                guard case .hook = fulfillment else {
                    return .write(due) { try await self.settle($0) }
                }
                // Claimed in the same write, so that the retry queue cannot take it between the reset and the call.
                due.nextAttemptAt = clock.now.addingTimeInterval(retryPolicy.claimDuration.timeInterval)
                due.deliveryAttempts = 1
                if action == .grant {
                    due.grantAttempted = true
                }
                return .write(due) { try await self.runHook($0, action: action, product: product) }
            }
        )
    }

    /// Gives a dead letter up, as an operator decides after looking at it (the console's `Give up`, which writes who
    /// did it to the support audit): the entry stays `deadLettered` and undelivered, and the retry queue never takes
    /// it, but it no longer counts among the dead letters waiting for a person (``LedgerStatistics/deadLetters``;
    /// ``LedgerStatistics/givenUp`` counts it, ``LedgerEntry/givenUpAt`` says when). ``redeliver(transactionId:)``
    /// still delivers it, and clears the mark; so does a new dead-lettering of the entry.
    ///
    /// - Parameter transactionId: The transaction.
    /// - Returns: The entry as given up, or `nil` when the ledger has no such transaction or it is not a dead letter
    ///   waiting for a person (delivered, retrying, or given up already).
    /// - Throws: ``IAPError`` if the store fails, or `storageFailure` when other writers kept changing the entry.
    public func giveUp(transactionId: String) async throws -> LedgerEntry? {
        guard let entry = try await store.entry(transactionId: transactionId) else { return nil }
        return try await compareAndSet(
            entry,
            ifExhausted: { _ in
                throw IAPError(.storageFailure, "transaction \(transactionId) kept changing: it was not given up")
            },
            change: { current in
                guard current.deliveryState == .deadLettered, current.givenUpAt == nil else { return .done(nil) }
                var givenUp = current
                givenUp.givenUpAt = clock.now
                return .write(givenUp) { $0 }
            }
        )
    }
}
