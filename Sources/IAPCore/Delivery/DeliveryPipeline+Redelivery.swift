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
}
